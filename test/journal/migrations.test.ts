import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { statSync, writeFileSync } from 'node:fs';
import { JOURNAL_FILE, Journal, JournalError } from '../../journal/journal.js';
import { MIGRATIONS, migrate, type Migration } from '../../journal/migrations.js';
import { tempDataDir, type TempDir } from './journal-fixtures.js';

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDataDir();
});
afterEach(() => tmp.dispose());

function raw(dir: string): Database.Database {
  return new Database(join(dir, JOURNAL_FILE));
}

describe('journal migrations', () => {
  it('creates a fresh file at the latest version, in WAL mode, private to its owner', () => {
    const journal = Journal.open(tmp.dir);
    for (const suffix of ['-wal', '-shm']) expect(statSync(join(tmp.dir, JOURNAL_FILE + suffix)).mode & 0o777).toBe(0o600);
    journal.close();
    const db = raw(tmp.dir);
    expect(db.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    const tables = db.prepare<[], { name: string; strict: number }>("SELECT name, strict FROM pragma_table_list WHERE schema = 'main' AND name NOT LIKE 'sqlite_%'").all();
    expect(tables.map((t) => t.name).sort()).toEqual(['answers', 'events', 'incidents', 'leases', 'sessions']);
    expect(tables.every((t) => t.strict === 1)).toBe(true);
    db.close();
    expect(statSync(join(tmp.dir, JOURNAL_FILE)).mode & 0o777).toBe(0o600);
  });

  it('reopens an up-to-date file without migrating it again and keeps its rows', () => {
    const first = Journal.open(tmp.dir);
    first.upsertSession({
      id: 'keep',
      name: 'keep',
      socketPath: join(tmp.dir, 'tmux', 'keep.sock'),
      allowId: 'bash',
      argvHash: 'a'.repeat(64),
      backend: 'tmux',
      durable: true,
      state: 'live',
    });
    first.close();
    const second = Journal.open(tmp.dir);
    expect(second.getSession('keep')?.socketPath).toBe(join(tmp.dir, 'tmux', 'keep.sock'));
    expect(second.integrityCheck()).toBe('ok');
    second.close();
  });

  it('refuses a file written by a newer version with JOURNAL_TOO_NEW and leaves it untouched', () => {
    Journal.open(tmp.dir).close();
    const db = raw(tmp.dir);
    db.pragma(`user_version = ${MIGRATIONS.length + 1}`);
    db.close();
    const before = statSync(join(tmp.dir, JOURNAL_FILE)).mtimeMs;
    let caught: unknown;
    try {
      Journal.open(tmp.dir);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(JournalError);
    expect((caught as JournalError).code).toBe('JOURNAL_TOO_NEW');
    expect((caught as JournalError).message).toMatch(/upgrade tmux-drive/);
    expect((caught as JournalError).context).toMatchObject({ version: MIGRATIONS.length + 1, known: MIGRATIONS.length });
    expect(statSync(join(tmp.dir, JOURNAL_FILE)).mtimeMs).toBe(before);
    const check = raw(tmp.dir);
    expect(check.pragma('user_version', { simple: true })).toBe(MIGRATIONS.length + 1);
    check.close();
  });

  it('refuses a file that is not a journal with JOURNAL_UNREADABLE', () => {
    writeFileSync(join(tmp.dir, JOURNAL_FILE), 'this is not a database, just some bytes that are long enough to have a header'.repeat(20));
    expect(() => Journal.open(tmp.dir)).toThrow(expect.objectContaining({ code: 'JOURNAL_UNREADABLE' }));
  });

  it('runs each migration in its own transaction: a failing one leaves the previous version intact', () => {
    const db = new Database(':memory:');
    const steps: Migration[] = [
      { version: 1, up: (d) => d.exec('CREATE TABLE a (x INTEGER) STRICT') },
      {
        version: 2,
        up: (d) => {
          d.exec('CREATE TABLE b (x INTEGER) STRICT');
          throw new Error('boom halfway');
        },
      },
    ];
    expect(() => migrate(db, steps)).toThrow('boom halfway');
    expect(db.pragma('user_version', { simple: true })).toBe(1);
    const names = db.prepare<[], { name: string }>("SELECT name FROM sqlite_schema WHERE type = 'table'").all().map((r) => r.name);
    expect(names).toEqual(['a']);
    expect(migrate(db, steps.slice(0, 1))).toEqual({ from: 1, to: 1 });
    db.close();
  });

  it('checks that migrations are numbered 1, 2, 3, … in order', () => {
    const db = new Database(':memory:');
    const noop = (): void => undefined;
    for (const bad of [[{ version: 2, up: noop }], [{ version: 1, up: noop }, { version: 1, up: noop }], [{ version: 1, up: noop }, { version: 3, up: noop }]]) {
      expect(() => migrate(db, bad)).toThrow(expect.objectContaining({ code: 'MIGRATIONS_INVALID' }));
    }
    expect(db.pragma('user_version', { simple: true })).toBe(0);
    db.close();
  });
});
