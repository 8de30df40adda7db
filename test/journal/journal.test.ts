import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { JOURNAL_FILE, Journal, JournalError, NON_TERMINAL_STATES, hashOf } from '../../journal/journal.js';
import { nextTick, sessionInput, tempDataDir, type TempDir } from './journal-fixtures.js';

let tmp: TempDir;
let journal: Journal;
beforeEach(() => {
  tmp = tempDataDir();
  journal = Journal.open(tmp.dir);
});
afterEach(() => {
  journal.close();
  tmp.dispose();
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return error instanceof JournalError ? error.code : `untyped: ${String(error)}`;
  }
  return undefined;
}

describe('sessions', () => {
  it('upserts, reads back and lists by state', () => {
    const created = journal.upsertSession({ ...sessionInput(tmp.dir, 'a'), objectiveHash: hashOf('write the report'), createdAt: 1000 });
    expect(created).toMatchObject({
      id: 'a',
      name: 'a',
      socketPath: join(tmp.dir, 'tmux', 'a.sock'),
      allowId: 'bash',
      argvHash: hashOf(['/usr/bin/bash', '--norc']),
      objectiveHash: hashOf('write the report'),
      backend: 'tmux',
      durable: true,
      state: 'live',
      classification: null,
      interactions: 0,
      exit: null,
      failureReason: null,
      lastSeq: 0,
      createdAt: 1000,
    });
    journal.upsertSession(sessionInput(tmp.dir, 'b', { state: 'detached' }));
    journal.upsertSession(sessionInput(tmp.dir, 'c', { state: 'exited', exit: { code: 0, signal: null } }));
    const updated = journal.updateSession('a', { classification: { state: 'awaiting-input', reason: 'cursor_parked' }, interactions: 3 });
    expect(updated.classification).toEqual({ state: 'awaiting-input', reason: 'cursor_parked' });
    expect(updated.objectiveHash).toBe(hashOf('write the report'));
    expect(journal.markFailed('b', 'server_gone')).toMatchObject({ state: 'failed', failureReason: 'server_gone' });
    expect(journal.listSessions({ states: NON_TERMINAL_STATES }).map((s) => s.id)).toEqual(['a']);
    expect(journal.listSessions().map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(journal.getSession('c')?.exit).toEqual({ code: 0, signal: null });
    expect(journal.getSession('nope')).toBeUndefined();
  });

  it('updateSessionSoon: checked now, read back at once, written at the end of the turn in one commit with that turn\'s events', async () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    journal.upsertSession(sessionInput(tmp.dir, 'b'));
    const commits = journal.stats().commits;
    journal.updateSessionSoon('a', { classification: { state: 'working', reason: 'output_flowing' } });
    journal.appendEvent('a', 'state', { state: 'working', reason: 'output_flowing' });
    journal.updateSessionSoon('a', { interactions: 2 });
    journal.updateSessionSoon('b', { classification: { state: 'awaiting-input', reason: 'cursor_parked' }, interactions: 1 });
    journal.appendEvent('b', 'state', { state: 'awaiting-input', reason: 'cursor_parked' });
    expect(journal.stats().commits).toBe(commits);
    // Another connection does not see it yet: nothing was committed in this turn.
    const peer = new Database(join(tmp.dir, JOURNAL_FILE), { readonly: true });
    try {
      expect(peer.prepare('SELECT class_state FROM sessions WHERE id = ?').pluck().get('a')).toBeNull();
      await nextTick();
      expect(journal.stats().commits).toBe(commits + 1);
      expect(peer.prepare('SELECT class_state, class_reason, interactions FROM sessions WHERE id = ?').get('a')).toEqual({ class_state: 'working', class_reason: 'output_flowing', interactions: 2 });
      expect(peer.prepare('SELECT count(*) FROM events').pluck().get()).toBe(2);
    } finally {
      peer.close();
    }
    // A read in the same turn sees the patch (written first).
    journal.updateSessionSoon('a', { classification: { state: 'stuck', reason: 'no_progress' } });
    expect(journal.getSession('a')?.classification).toEqual({ state: 'stuck', reason: 'no_progress' });
    journal.updateSessionSoon('b', { interactions: 5 });
    expect(journal.listSessions().find((r) => r.id === 'b')?.interactions).toBe(5);
    // Checked now, not at the end of the turn.
    expect(codeOf(() => journal.updateSessionSoon('a', { classification: { state: 'stuck', reason: 'has spaces and $(x)' } }))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.updateSessionSoon('a', { name: 'other' }))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.updateSessionSoon('../x', { interactions: 1 }))).toBe('JOURNAL_BAD_VALUE');
    // A row forgotten before the end of the turn is not written again.
    journal.updateSession('b', { state: 'exited' });
    journal.updateSessionSoon('b', { interactions: 9 });
    journal.forgetSession('b');
    await nextTick();
    expect(journal.getSession('b')).toBeUndefined();
  });

  it('keeps socket paths outside the data dir absolute and refuses ones a socket cannot have', () => {
    expect(journal.upsertSession(sessionInput(tmp.dir, 'x', { socketPath: '/run/td/x.sock' })).socketPath).toBe('/run/td/x.sock');
    expect(codeOf(() => journal.upsertSession(sessionInput(tmp.dir, 'y', { socketPath: 'relative/y.sock' })))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.upsertSession(sessionInput(tmp.dir, 'y', { socketPath: `/tmp/${'d'.repeat(120)}/y.sock` })))).toBe('JOURNAL_BAD_VALUE');
  });

  it('refuses a second session with the same name, a missing field and an unknown session', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    expect(codeOf(() => journal.upsertSession(sessionInput(tmp.dir, 'b', { name: 'a' })))).toBe('NAME_IN_USE');
    const { argvHash: _omitted, ...partial } = sessionInput(tmp.dir, 'c');
    expect(codeOf(() => journal.upsertSession(partial as never))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.updateSession('ghost', { interactions: 1 }))).toBe('SESSION_NOT_FOUND');
    expect(codeOf(() => journal.appendEvent('ghost', 'output'))).toBe('SESSION_NOT_FOUND');
  });
});

describe('insertSessionIfAbsent (adopting an orphan)', () => {
  it('writes a new row once: a second call, a taken name or a row written meanwhile by another connection leave the row as it was', () => {
    const first = journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'orphan'), state: 'detached', allowId: 'adopted', createdAt: 5 });
    expect(first).toMatchObject({ id: 'orphan', state: 'detached', allowId: 'adopted', createdAt: 5 });
    expect(journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'orphan'), state: 'live' })).toBeUndefined();
    expect(journal.getSession('orphan')?.state).toBe('detached');
    // Another host's journal on the same file got there first.
    const peer = Journal.open(tmp.dir);
    try {
      peer.upsertSession(sessionInput(tmp.dir, 'raced'));
      expect(journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'raced'), state: 'detached' })).toBeUndefined();
      expect(journal.getSession('raced')?.state).toBe('live');
      expect(journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'other'), name: 'raced' })).toBeUndefined();
    } finally {
      peer.close();
    }
  });

  it('checks its input like upsertSession (a missing field, a value that is not a machine value)', () => {
    expect(codeOf(() => journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'x'), argvHash: undefined } as never))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.insertSessionIfAbsent({ ...sessionInput(tmp.dir, 'x'), allowId: 'has space' }))).toBe('JOURNAL_BAD_VALUE');
    expect(journal.getSession('x')).toBeUndefined();
  });
});

describe('STRICT tables', () => {
  it('refuse a value of the wrong type even from a raw connection', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    const db = new Database(join(tmp.dir, JOURNAL_FILE));
    try {
      expect(() => db.prepare("UPDATE sessions SET interactions = 'many' WHERE id = 'a'").run()).toThrow(/cannot store TEXT value in INTEGER column/);
      expect(() => db.prepare("UPDATE sessions SET interactions = 1.5 WHERE id = 'a'").run()).toThrow(/cannot store REAL value in INTEGER column/);
      expect(() => db.prepare("UPDATE sessions SET created_at = x'00' WHERE id = 'a'").run()).toThrow(/cannot store BLOB value/);
      // The schema's CHECKs repeat the content-free shapes: free text is refused below the API too.
      expect(() => db.prepare("UPDATE sessions SET failure_reason = 'the user typed hunter2' WHERE id = 'a'").run()).toThrow(/CHECK constraint failed/);
      expect(() => db.prepare("INSERT INTO events (sid, seq, at, kind, tags) VALUES (1, 1, 0, 'output', '{\"text\":\"Hello World\"}')").run()).toThrow(/CHECK constraint failed/);
      expect(() => db.prepare("UPDATE sessions SET state = 'zombie' WHERE id = 'a'").run()).toThrow(/CHECK constraint failed/);
    } finally {
      db.close();
    }
  });
});

describe('machine tags', () => {
  it('accept short tokens, finite numbers and booleans', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    const seq = journal.appendEvent('a', 'state', { from: 'working', to: 'awaiting-input', reason: 'cursor_parked', ms: 1234.5, paste: false, empty: '' });
    expect(journal.events('a')).toEqual([
      { sessionId: 'a', seq, at: expect.any(Number), kind: 'state', tags: { from: 'working', to: 'awaiting-input', reason: 'cursor_parked', ms: 1234.5, paste: false, empty: '' } },
    ]);
  });

  it.each([
    ['free text', { text: 'ls -la /home' }],
    ['upper case', { key: 'Enter' }],
    ['a newline', { v: 'a\nb' }],
    ['non-ASCII', { v: 'café' }],
    ['a long value', { v: 'a'.repeat(65) }],
    ['a nested object', { v: { deep: 'x' } }],
    ['an array', { v: ['a'] }],
    ['null', { v: null }],
    ['NaN', { v: Number.NaN }],
    ['Infinity', { v: Number.POSITIVE_INFINITY }],
    ['a bad key', { 'Has Space': 'x' }],
    ['a key with a dash', { 'a-b': 'x' }],
    ['too many tags', Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, i]))],
  ])('reject %s with a typed error', (_label, tags) => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    expect(codeOf(() => journal.appendEvent('a', 'state', tags as never))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.recordIncident('a', 'malformed_stream', tags as never))).toBe('JOURNAL_BAD_VALUE');
    expect(journal.lastSeq('a')).toBe(0);
  });

  it('reject a kind that is not a token and an incident kind outside the closed set', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    expect(codeOf(() => journal.appendEvent('a', 'Output chunk'))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.recordIncident('a', 'something_new' as never))).toBe('JOURNAL_BAD_VALUE');
  });
});

describe('event seqs', () => {
  it('are per session, monotonic, and continue after close and reopen', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    journal.upsertSession(sessionInput(tmp.dir, 'b'));
    expect([journal.appendEvent('a', 'output'), journal.appendEvent('a', 'input'), journal.appendEvent('b', 'output')]).toEqual([1, 2, 1]);
    expect(journal.lastSeq('a')).toBe(2);
    expect(journal.getSession('a')?.lastSeq).toBe(2);
    journal.close();
    journal = Journal.open(tmp.dir);
    expect(journal.lastSeq('a')).toBe(2);
    expect(journal.appendEvent('a', 'output')).toBe(3);
    journal.close();
    journal = Journal.open(tmp.dir);
    expect(journal.events('a').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(journal.events('a', { afterSeq: 1, limit: 1 }).map((e) => e.seq)).toEqual([2]);
  });

  it('are never reused even when the newest events are gone (the counter lives in the session row)', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    for (let i = 0; i < 5; i++) journal.appendEvent('a', 'output');
    journal.close();
    const db = new Database(join(tmp.dir, JOURNAL_FILE));
    db.prepare('DELETE FROM events WHERE seq > 2').run();
    db.close();
    journal = Journal.open(tmp.dir);
    expect(journal.appendEvent('a', 'output')).toBe(6);
  });
});

describe('batching', () => {
  it('writes 1000 appends made in one tick in one transaction at the end of the tick', async () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    const observer = new Database(join(tmp.dir, JOURNAL_FILE), { readonly: true });
    const count = observer.prepare<[], { n: number }>('SELECT count(*) AS n FROM events');
    const before = journal.stats().commits;
    for (let i = 0; i < 1000; i++) journal.appendEvent('a', 'output', { bytes: i });
    expect(journal.stats()).toMatchObject({ commits: before, pendingEvents: 1000 });
    expect(count.get()?.n).toBe(0);
    await nextTick();
    expect(journal.stats()).toMatchObject({ commits: before + 1, pendingEvents: 0, eventsWritten: 1000 });
    expect(count.get()?.n).toBe(1000);
    observer.close();
  });

  it('writes the buffer before any write-through call, in call order, in the same transaction', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    const before = journal.stats().commits;
    journal.appendEvent('a', 'output');
    journal.recordIncident('a', 'malformed_stream', { code: 'stray_line', length: 12 });
    journal.updateSession('a', { interactions: 1 });
    expect(journal.stats()).toMatchObject({ commits: before + 1, pendingEvents: 0, pendingIncidents: 0 });
    expect(journal.incidents({ sessionId: 'a' })).toEqual([{ id: 1, sessionId: 'a', kind: 'malformed_stream', at: expect.any(Number), tags: { code: 'stray_line', length: 12 } }]);
  });

  it('flushes on flush() and close(), and a closed journal refuses calls (close is idempotent)', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    journal.appendEvent('a', 'output');
    journal.flush();
    expect(journal.stats().pendingEvents).toBe(0);
    journal.appendEvent('a', 'output');
    journal.close();
    journal.close();
    expect(codeOf(() => journal.appendEvent('a', 'output'))).toBe('JOURNAL_CLOSED');
    journal = Journal.open(tmp.dir);
    expect(journal.events('a')).toHaveLength(2);
  });

  it('bounds a flood inside one tick: every 10 000 rows are written at once', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    for (let i = 0; i < 25_000; i++) journal.appendEvent('a', 'output');
    expect(journal.stats()).toMatchObject({ eventsWritten: 20_000, pendingEvents: 5000 });
  });

  it('keeps the rows buffered when a write fails (a peer holds the file) and writes them later', async () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    journal.close();
    const errors: JournalError[] = [];
    journal = Journal.open(tmp.dir, { busyTimeoutMs: 20, onError: (e) => errors.push(e) });
    const peer = new Database(join(tmp.dir, JOURNAL_FILE));
    peer.exec('BEGIN IMMEDIATE');
    expect([journal.appendEvent('a', 'output'), journal.appendEvent('a', 'output')]).toEqual([1, 2]);
    await nextTick();
    expect(errors.map((e) => [e.code, e.context['sqlite']])).toEqual([['JOURNAL_WRITE_FAILED', 'SQLITE_BUSY']]);
    expect(journal.stats()).toMatchObject({ pendingEvents: 2, lastError: 'SQLITE_BUSY' });
    expect(codeOf(() => journal.flush())).toBe('JOURNAL_WRITE_FAILED');
    // A read while a verdict's patch cannot be written answers from the file; the patch stays buffered.
    journal.updateSessionSoon('a', { interactions: 7 });
    expect(journal.getSession('a')?.interactions).toBe(0);
    expect(journal.listSessions().map((r) => [r.id, r.interactions])).toEqual([['a', 0]]);
    peer.exec('COMMIT');
    peer.close();
    expect(journal.appendEvent('a', 'output')).toBe(3);
    journal.flush();
    expect(journal.stats()).toMatchObject({ pendingEvents: 0, lastError: null });
    expect(journal.events('a').map((e) => e.seq)).toEqual([1, 2, 3]);
    expect(journal.getSession('a')?.interactions).toBe(7);
  });

  it('stamps times from the injected clock', () => {
    journal.close();
    let now = 1_700_000_000_000.7;
    journal = Journal.open(tmp.dir, { clock: () => now });
    expect(journal.upsertSession(sessionInput(tmp.dir, 'a')).createdAt).toBe(1_700_000_000_000);
    now += 5000;
    journal.appendEvent('a', 'output');
    expect(journal.events('a')[0]?.at).toBe(1_700_000_005_000);
  });
});

describe('answered prompts', () => {
  it('are counted per structural digest and survive a restart', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    const digest = 'fnv1a64:0123456789abcdef';
    expect(journal.wasAnswered('a', digest)).toBe(false);
    expect(journal.recordAnswer('a', digest, 'Enter')).toBe(1);
    expect(journal.recordAnswer('a', digest, 'y')).toBe(2);
    expect(journal.recordAnswer('a', 'f'.repeat(64), 'S-Tab')).toBe(1);
    journal.close();
    journal = Journal.open(tmp.dir);
    expect(journal.wasAnswered('a', digest)).toBe(true);
    expect(journal.answerCount('a', digest)).toBe(2);
    expect(journal.answerCount('a')).toBe(3);
    expect(codeOf(() => journal.recordAnswer('a', 'not a digest', 'Enter'))).toBe('JOURNAL_BAD_VALUE');
    expect(codeOf(() => journal.recordAnswer('a', digest, 'yes please'))).toBe('JOURNAL_BAD_VALUE');
  });
});

describe('integrity', () => {
  it('integrityCheck() is ok after mixed writes', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'a'));
    for (let i = 0; i < 100; i++) journal.appendEvent('a', i % 2 ? 'input' : 'output', { n: i });
    journal.recordIncident(null, 'cleanup_failure', { what: 'socket' });
    journal.recordAnswer('a', '0123456789abcdef', 'Enter');
    expect(journal.integrityCheck()).toBe('ok');
  });
});

describe('finished drives: retire and forget', () => {
  it('retires a finished drive with its history under an id no drive name can take, freeing the name', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'same'));
    journal.appendEvent('same', 'outcome', { outcome: 'done' });
    journal.recordAnswer('same', 'dialog:0123456789abcdef', 'Enter');
    journal.recordIncident('same', 'nonzero_exit', { code: 3 });
    expect(codeOf(() => journal.retireSession('same'))).toBe('JOURNAL_BAD_VALUE'); // live: refused
    journal.updateSession('same', { state: 'exited' });
    const retired = journal.retireSession('same');
    expect(retired.length).toBeGreaterThan(48);
    expect(retired).toMatch(/^r[0-9]+-same-+$/);
    expect(journal.getSession('same')).toBeUndefined();
    expect(journal.answerCount(retired)).toBe(1);
    expect(journal.events(retired).map((e) => e.kind)).toEqual(['outcome']);
    expect(journal.incidents({ sessionId: retired })).toHaveLength(1);
    journal.upsertSession(sessionInput(tmp.dir, 'same'));
    expect(journal.answerCount('same')).toBe(0);
    expect(journal.events('same')).toEqual([]);
    expect(journal.lastSeq('same')).toBe(0);
  });

  it('forgets a finished drive with its events, answers and incidents, and refuses a live one', () => {
    journal.upsertSession(sessionInput(tmp.dir, 'gone'));
    journal.appendEvent('gone', 'create');
    journal.recordAnswer('gone', 'dialog:0123456789abcdef', 'Enter');
    journal.recordIncident('gone', 'server_gone');
    expect(codeOf(() => journal.forgetSession('gone'))).toBe('JOURNAL_BAD_VALUE');
    journal.markFailed('gone', 'server_gone');
    journal.forgetSession('gone');
    expect(journal.getSession('gone')).toBeUndefined();
    expect(journal.incidents()).toEqual([]);
    expect(journal.integrityCheck()).toBe('ok');
  });
});
