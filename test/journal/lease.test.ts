import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { Journal, LeaseError, currentHolder, isHolderAlive, processStartTime } from '../../journal/journal.js';
import { buildChildBundle, JournalChild, type ChildBundle, type ChildReply } from './child-harness.js';
import { sessionInput, tempDataDir, type TempDir } from './journal-fixtures.js';

let tmp: TempDir;
const open: Journal[] = [];
function openJournal(): Journal {
  const j = Journal.open(tmp.dir);
  open.push(j);
  return j;
}
beforeEach(() => {
  tmp = tempDataDir();
});
afterEach(() => {
  for (const j of open.splice(0)) j.close();
  tmp.dispose();
});

function leaseErrorOf(fn: () => unknown): LeaseError {
  try {
    fn();
  } catch (error) {
    if (error instanceof LeaseError) return error;
    throw error;
  }
  throw new Error('expected a LeaseError');
}

describe('process identity', () => {
  it('reads field 22 of /proc/<pid>/stat and tells a live holder from a dead or reused pid', () => {
    const stat = readFileSync('/proc/self/stat', 'latin1');
    const expected = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
    expect(processStartTime(process.pid)).toBe(expected);
    expect(currentHolder()).toEqual({ pid: process.pid, startTime: expected });
    expect(isHolderAlive(currentHolder())).toBe(true);
    expect(isHolderAlive({ pid: process.pid, startTime: expected + 1 })).toBe(false);
    expect(processStartTime(0x7ffffffe)).toBeUndefined();
    expect(isHolderAlive({ pid: 0x7ffffffe, startTime: 1 })).toBe(false);
  });
});

describe('leases in one process', () => {
  it('grants token 1, refuses a second driver (another journal instance too) and names the holder', () => {
    const a = openJournal();
    const b = openJournal();
    const me = currentHolder();
    expect(a.acquireLease('drive-1', me)).toEqual({ token: 1 });
    expect(a.acquireLease('drive-1', me)).toEqual({ token: 1 });
    const refused = leaseErrorOf(() => b.acquireLease('drive-1', me));
    expect(refused.code).toBe('LEASE_HELD');
    expect(refused.holder).toEqual(me);
    expect(refused.currentToken).toBe(1);
    expect(refused.message).toContain(String(me.pid));
    a.checkLease('drive-1', 1);
  });

  it('a released lease is taken with a higher token; the old token is lost', () => {
    const a = openJournal();
    const b = openJournal();
    const me = currentHolder();
    const first = a.acquireLease('drive-1', me);
    expect(a.releaseLease('drive-1', first.token)).toBe(true);
    expect(a.releaseLease('drive-1', first.token)).toBe(false);
    expect(leaseErrorOf(() => a.checkLease('drive-1', first.token)).code).toBe('LEASE_LOST');
    const second = b.acquireLease('drive-1', me);
    expect(second.token).toBe(2);
    expect(leaseErrorOf(() => a.checkLease('drive-1', first.token))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
    b.checkLease('drive-1', 2);
    expect(b.lease('drive-1')).toMatchObject({ token: 2, holder: me, releasedAt: null });
  });

  it('takes over from a dead holder (a pid now reused by another process), with an incident', () => {
    const a = openJournal();
    a.upsertSession(sessionInput(tmp.dir, 'drive-1'));
    const me = currentHolder();
    const impostor = { pid: me.pid, startTime: me.startTime + 7 };
    expect(a.acquireLease('drive-1', impostor).token).toBe(1);
    const b = openJournal();
    const taken = b.acquireLease('drive-1', me);
    expect(taken).toEqual({ token: 2, takenOverFrom: impostor });
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1)).code).toBe('LEASE_LOST');
    expect(b.incidents({ sessionId: 'drive-1' })).toEqual([
      { id: 1, sessionId: 'drive-1', kind: 'lease_takeover', at: expect.any(Number), tags: { prev_pid: me.pid, prev_token: 1, token: 2 } },
    ]);
  });

  it('acquireLeases takes many in one commit: free and dead-held ones taken (incident), a live-held one refused as acquireLease would', () => {
    const me = currentHolder();
    const impostor = { pid: me.pid, startTime: me.startTime + 7 };
    const other = openJournal();
    other.upsertSession(sessionInput(tmp.dir, 'dead-held'));
    expect(other.acquireLease('dead-held', impostor).token).toBe(1);
    expect(other.acquireLease('live-held', me).token).toBe(1);
    const a = openJournal();
    const commitsBefore = a.stats().commits;
    const got = a.acquireLeases(['free', 'dead-held', 'live-held'], me);
    expect(a.stats().commits - commitsBefore).toBe(1);
    expect(got.get('free')).toEqual({ token: 1 });
    expect(got.get('dead-held')).toEqual({ token: 2, takenOverFrom: impostor });
    const refused = got.get('live-held');
    expect(refused).toBeInstanceOf(LeaseError);
    expect(refused).toMatchObject({ code: 'LEASE_HELD', holder: me, currentToken: 1 });
    a.checkLease('free', 1);
    a.checkLease('dead-held', 2);
    // The refused lease is untouched: still the other instance's token.
    expect(a.lease('live-held')).toMatchObject({ token: 1, holder: me });
    other.checkLease('live-held', 1);
    expect(a.incidents({ sessionId: 'dead-held' })).toMatchObject([{ kind: 'lease_takeover', tags: { prev_pid: me.pid, prev_token: 1, token: 2 } }]);
    // Taken again by the same instance: its own tokens, no new ones.
    expect(a.acquireLeases(['free', 'dead-held'], me)).toEqual(new Map([['free', { token: 1 }], ['dead-held', { token: 2 }]]));
  });

  it('the check before each keystroke sees another connection take the lease after it last read the row', () => {
    const a = openJournal();
    a.upsertSession(sessionInput(tmp.dir, 'drive-1'));
    const me = currentHolder();
    const impostor = { pid: me.pid, startTime: me.startTime + 7 };
    expect(a.acquireLease('drive-1', impostor).token).toBe(1);
    // Checked (and remembered) several times, with this connection writing other rows meanwhile.
    for (let i = 0; i < 3; i++) {
      a.checkLease('drive-1', 1);
      a.appendEvent('drive-1', 'output');
      a.flush();
    }
    const b = openJournal();
    expect(b.acquireLease('drive-1', me).token).toBe(2);
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
    b.checkLease('drive-1', 2);
  });

  it('the check sees a lease row changed behind the journal (a raw write by another connection)', () => {
    const a = openJournal();
    a.upsertSession(sessionInput(tmp.dir, 'drive-1'));
    expect(a.acquireLease('drive-1', currentHolder()).token).toBe(1);
    a.checkLease('drive-1', 1);
    a.checkLease('drive-1', 1);
    const raw = new Database(join(tmp.dir, 'journal.sqlite3'));
    try {
      raw.prepare("UPDATE leases SET token = 5 WHERE session_id = 'drive-1'").run();
    } finally {
      raw.close();
    }
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 5 });
  });

  it('close() releases the leases the instance holds', () => {
    const a = Journal.open(tmp.dir);
    a.acquireLease('drive-1', currentHolder());
    a.close();
    const b = openJournal();
    expect(b.lease('drive-1')).toMatchObject({ token: 1, holder: null });
    expect(b.acquireLease('drive-1', currentHolder()).token).toBe(2);
  });

  it('continues the seq after events another holder appended', () => {
    const a = openJournal();
    a.upsertSession(sessionInput(tmp.dir, 'drive-1'));
    const b = openJournal();
    expect(b.lastSeq('drive-1')).toBe(0);
    const lease = a.acquireLease('drive-1', currentHolder());
    a.appendEvent('drive-1', 'output');
    a.appendEvent('drive-1', 'output');
    a.releaseLease('drive-1', lease.token);
    b.acquireLease('drive-1', currentHolder());
    expect(b.appendEvent('drive-1', 'output')).toBe(3);
  });
});

describe('leases across processes', () => {
  let bundle: ChildBundle;
  const children: JournalChild[] = [];
  beforeAll(() => {
    bundle = buildChildBundle();
  });
  afterEach(async () => {
    await Promise.all(children.splice(0).map((c) => c.kill9()));
  });
  afterAll(() => bundle.dispose());

  function child(): JournalChild {
    const c = new JournalChild(bundle, tmp.dir, 'drive-1');
    children.push(c);
    return c;
  }

  it('a child killed with SIGKILL loses its lease to the next process, with a higher token', async () => {
    const journal = openJournal();
    const holder = child();
    expect((await holder.next()).ready).toBe(holder.pid);
    holder.send('acquire');
    expect(await holder.next()).toEqual({ token: 1, pid: holder.pid });
    const refused = leaseErrorOf(() => journal.acquireLease('drive-1', currentHolder()));
    expect(refused.code).toBe('LEASE_HELD');
    expect(refused.holder?.pid).toBe(holder.pid);
    await holder.kill9();
    expect(isHolderAlive(journal.lease('drive-1')?.holder ?? { pid: 1, startTime: 0 })).toBe(false);
    const taken = journal.acquireLease('drive-1', currentHolder());
    expect(taken.token).toBe(2);
    expect(taken.takenOverFrom?.pid).toBe(holder.pid);
    journal.checkLease('drive-1', 2);
  });

  async function race(openFirst: boolean): Promise<ChildReply[]> {
    const racers = Array.from({ length: 8 }, () => child());
    for (const r of racers) expect((await r.next()).ready).toBe(r.pid);
    if (openFirst) {
      for (const r of racers) r.send('open');
      for (const r of racers) expect((await r.next()).opened).toBe(true);
    }
    const start = Date.now() + 250;
    for (const r of racers) r.send(`acquire-at:${start}`);
    return Promise.all(racers.map((r) => r.next()));
  }

  function expectOneWinner(replies: ChildReply[]): void {
    const winners = replies.filter((r) => r.token !== undefined);
    expect(winners, JSON.stringify(replies)).toHaveLength(1);
    const winner = winners[0]!;
    expect(winner.token).toBe(1);
    const losers = replies.filter((r) => r.token === undefined);
    expect(losers).toHaveLength(7);
    for (const loser of losers) {
      expect(loser.error, loser.message).toBe('LEASE_HELD');
      expect(loser.holder?.pid).toBe(winner.pid);
    }
  }

  it('8 processes racing for one lease on an open journal: exactly one wins', async () => {
    openJournal();
    expectOneWinner(await race(true));
  });

  it('8 processes racing on a file none of them has created yet: one migration, one winner', async () => {
    expectOneWinner(await race(false));
    const journal = openJournal();
    expect(journal.integrityCheck()).toBe('ok');
    expect(journal.lease('drive-1')?.token).toBe(1);
  });
});
