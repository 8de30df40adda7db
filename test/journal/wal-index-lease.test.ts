/**
 * The lease check's fast path (journal/wal-index-header.ts, journal/leases.ts): before each key the
 * WAL-index header is read from `journal.sqlite3-shm`, and SQLite is asked only when it changed
 * since the last full check. Real SQLite files, a real second process taking the lease, real
 * checkpoints. The shm file is never opened and closed by this process outside the journal (that
 * close would drop SQLite's locks on it: the trap the module's descriptor sharing is about); a
 * child `dd` writes to it instead.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, readdirSync, readlinkSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Journal, LeaseError, currentHolder } from '../../journal/journal.js';
import { WalIndexHeader } from '../../journal/wal-index-header.js';
import { buildChildBundle, JournalChild, type ChildBundle } from './child-harness.js';
import { sessionInput, tempDataDir, type TempDir } from './journal-fixtures.js';

let tmp: TempDir;
let bundle: ChildBundle;
const open: Journal[] = [];
const children: JournalChild[] = [];

beforeAll(() => {
  bundle = buildChildBundle();
});
afterAll(() => bundle.dispose());
beforeEach(() => {
  tmp = tempDataDir();
});
afterEach(async () => {
  await Promise.all(children.splice(0).map((c) => c.kill9()));
  for (const j of open.splice(0)) j.close();
  tmp.dispose();
});

function openJournal(): Journal {
  const j = Journal.open(tmp.dir);
  open.push(j);
  return j;
}

const shmPath = (): string => join(tmp.dir, 'journal.sqlite3-shm');

function leaseErrorOf(fn: () => unknown): LeaseError {
  try {
    fn();
  } catch (error) {
    if (error instanceof LeaseError) return error;
    throw error;
  }
  throw new Error('expected a LeaseError');
}

/** A journal holding drive-1 as a holder another host takes for dead (another start time). */
function heldByImpostor(): Journal {
  const a = openJournal();
  a.upsertSession(sessionInput(tmp.dir, 'drive-1'));
  const me = currentHolder();
  expect(a.acquireLease('drive-1', { pid: me.pid, startTime: me.startTime + 7 }).token).toBe(1);
  return a;
}

/** Another process takes drive-1's lease (one commit), as a host taking over a dead one does. */
async function otherHostTakes(expectedToken: number): Promise<void> {
  const other = new JournalChild(bundle, tmp.dir, 'drive-1');
  children.push(other);
  expect((await other.next()).ready).toBe(other.pid);
  other.send('acquire');
  expect(await other.next()).toEqual({ token: expectedToken, pid: other.pid });
}

/** A TRUNCATE checkpoint by another connection: the WAL restarts, the header gets new salts. */
function restartWal(): void {
  const raw = new Database(join(tmp.dir, 'journal.sqlite3'));
  try {
    const [result] = raw.pragma('wal_checkpoint(TRUNCATE)') as { busy: number }[];
    expect(result?.busy).toBe(0);
  } finally {
    raw.close();
  }
}

/** Zeroes the two header copies from another process (see the header comment). */
function zeroHeader(): void {
  const r = spawnSync('dd', ['if=/dev/zero', `of=${shmPath()}`, 'bs=96', 'count=1', 'conv=notrunc'], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
}

describe('the lease check from the WAL-index header', () => {
  it('while nothing commits, checks are answered from the header alone; a commit of this connection costs one full check', () => {
    const a = heldByImpostor();
    expect(a.stats().leaseChecks.walIndexOff).toBeNull();
    for (let i = 0; i < 50; i++) a.checkLease('drive-1', 1);
    expect(a.stats().leaseChecks).toEqual({ viaWalIndex: 49, full: 1, walIndexOff: null, walIndexReadBy: 'mapped' });
    a.appendEvent('drive-1', 'output');
    a.flush();
    for (let i = 0; i < 10; i++) a.checkLease('drive-1', 1);
    expect(a.stats().leaseChecks).toEqual({ viaWalIndex: 58, full: 2, walIndexOff: null, walIndexReadBy: 'mapped' });
  });

  it("the only change since the last key is another process's lease commit: LEASE_LOST", async () => {
    const a = heldByImpostor();
    a.checkLease('drive-1', 1);
    a.checkLease('drive-1', 1);
    expect(a.stats().leaseChecks.viaWalIndex).toBe(1);
    await otherHostTakes(2);
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
  });

  it('a WAL restart between keys: a lease taken after it is still seen, and one not taken is not refused', async () => {
    const a = heldByImpostor();
    // The remembered header is one right after a restart and one commit, so the other host's
    // single commit after the next restart leaves the WAL just as long: only the salts differ.
    restartWal();
    a.appendEvent('drive-1', 'output');
    a.flush();
    a.checkLease('drive-1', 1);
    restartWal();
    a.checkLease('drive-1', 1);
    restartWal();
    await otherHostTakes(2);
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
  });

  it('a checkpoint after the lease commit (the WAL restarted with nothing since) still ends in LEASE_LOST', async () => {
    const a = heldByImpostor();
    a.checkLease('drive-1', 1);
    a.checkLease('drive-1', 1);
    await otherHostTakes(2);
    restartWal();
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
  });

  it('a zeroed header is not trusted: the check asks SQLite and stays right both ways', async () => {
    const a = heldByImpostor();
    a.checkLease('drive-1', 1);
    a.checkLease('drive-1', 1);
    zeroHeader();
    const before = a.stats().leaseChecks.full;
    a.checkLease('drive-1', 1);
    expect(a.stats().leaseChecks.full).toBe(before + 1);
    await otherHostTakes(2);
    zeroHeader();
    expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
  });

  it('a header of another layout is refused at open, with the reason', () => {
    const facts = { journalMode: 'wal', lockingMode: 'normal', pageSize: 4096 };
    const file = join(tmp.dir, 'fake.sqlite3');
    const header = Buffer.alloc(32768);
    const copy = Buffer.alloc(48);
    copy.writeUInt32LE(3007000, 0);
    copy[12] = 1;
    copy.writeUInt16LE(4096, 14);
    copy.copy(header, 0);
    copy.copy(header, 48);
    writeFileSync(`${file}-shm`, header);
    const good = WalIndexHeader.open(file, facts);
    expect(good).toBeInstanceOf(WalIndexHeader);
    if (good instanceof WalIndexHeader) good.release();

    expect(WalIndexHeader.open(file, { ...facts, pageSize: 65536 })).toMatch(/page size 4096/);
    expect(WalIndexHeader.open(file, { ...facts, journalMode: 'delete' })).toMatch(/journal_mode is delete/);
    expect(WalIndexHeader.open(file, { ...facts, lockingMode: 'exclusive' })).toMatch(/locking_mode is exclusive/);
    header.writeUInt32LE(3007001, 48);
    writeFileSync(`${file}-shm`, header);
    expect(WalIndexHeader.open(file, facts)).toMatch(/not a settled/);
    header.writeUInt32LE(3007001, 0);
    writeFileSync(`${file}-shm`, header);
    expect(WalIndexHeader.open(file, facts)).toMatch(/not a settled/);
    writeFileSync(`${file}-shm`, header.subarray(0, 96));
    expect(WalIndexHeader.open(file, facts)).toMatch(/shorter than one region/);
    expect(WalIndexHeader.open(join(tmp.dir, 'absent.sqlite3'), facts)).toMatch(/cannot be opened \(ENOENT\)/);
  });
});

/** This process's descriptors of `path`, and its POSIX locks on that file (from /proc/locks). */
function descriptorsOf(path: string): number {
  return readdirSync('/proc/self/fd').filter((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`) === path;
    } catch {
      return false;
    }
  }).length;
}
function locksOn(path: string): number {
  const ino = statSync(path).ino;
  return readFileSync('/proc/locks', 'utf8')
    .split('\n')
    .filter((l) => l.includes(` ${process.pid} `) && l.includes(`:${ino} `)).length;
}

describe('the header read from the shared mapping (native/shm_view.c)', () => {
  const facts = { journalMode: 'wal', lockingMode: 'normal', pageSize: 4096 };

  it('is what this machine uses: the module is built by npm install, and a journal reads through it', () => {
    // CI builds the module as a fresh install does; a build that failed would show here as pread.
    const a = openJournal();
    expect(a.stats().leaseChecks.walIndexReadBy).toBe('mapped');
  });

  it("reads what pread(2) reads, through another process's commits, a zeroed header and a WAL restart", async () => {
    const a = heldByImpostor();
    const mapped = WalIndexHeader.open(join(tmp.dir, 'journal.sqlite3'), facts);
    const preadOnly = WalIndexHeader.open(join(tmp.dir, 'journal.sqlite3'), facts, { map: false });
    if (!(mapped instanceof WalIndexHeader) || !(preadOnly instanceof WalIndexHeader)) throw new Error(`not opened: ${String(mapped)} / ${String(preadOnly)}`);
    try {
      expect(mapped.readBy).toBe('mapped');
      expect(preadOnly.readBy).toBe('pread (not asked to map)');
      const both = (): [Int32Array | undefined, Int32Array | undefined] => [mapped.read()?.slice(), preadOnly.read()?.slice()];
      const [before] = both();
      expect(before).toBeDefined();
      expect(both()[1]).toEqual(before);
      await otherHostTakes(2);
      const [afterTake, afterTakeByPread] = both();
      expect(afterTake).toEqual(afterTakeByPread);
      // The other host's commit changed the header, and the mapping shows it with no read call.
      expect(afterTake).not.toEqual(before);
      zeroHeader();
      expect(both()).toEqual([undefined, undefined]);
      a.appendEvent('drive-1', 'output');
      a.flush();
      restartWal();
      const [afterRestart, afterRestartByPread] = both();
      expect(afterRestart).toBeDefined();
      expect(afterRestart).toEqual(afterRestartByPread);
    } finally {
      mapped.release();
      preadOnly.release();
    }
    // Released: never read again (the mapping goes with its array).
    expect(mapped.read()).toBeUndefined();
  });

  it('the lease fence holds with the header read by pread(2) as well (where the module is not built)', async () => {
    const a = heldByImpostor();
    const header = WalIndexHeader.open(join(tmp.dir, 'journal.sqlite3'), facts, { map: false });
    if (!(header instanceof WalIndexHeader)) throw new Error(header);
    try {
      const first = header.read()?.slice();
      a.checkLease('drive-1', 1);
      await otherHostTakes(2);
      expect(header.read()).not.toEqual(first);
      expect(leaseErrorOf(() => a.checkLease('drive-1', 1))).toMatchObject({ code: 'LEASE_LOST', currentToken: 2 });
    } finally {
      header.release();
    }
  });
});

describe("the shm descriptor and SQLite's locks", () => {
  it("closing one of two journals on the file keeps the other's locks; the last close lets the descriptor go", () => {
    const a = openJournal();
    const b = openJournal();
    b.upsertSession(sessionInput(tmp.dir, 'drive-1'));
    const locks = locksOn(shmPath());
    expect(locks).toBeGreaterThan(0);
    expect(descriptorsOf(shmPath())).toBe(2); // SQLite's (one per file and process) and ours
    a.close();
    expect(locksOn(shmPath())).toBe(locks);
    expect(descriptorsOf(shmPath())).toBe(2);
    b.close();
    open.splice(0);
    // SQLite's last close checkpoints and unlinks the shm; the descriptor went with it.
    expect(() => statSync(shmPath())).toThrow();
    expect(descriptorsOf(shmPath())).toBe(0);
    expect(descriptorsOf(`${shmPath()} (deleted)`)).toBe(0);
  });
});
