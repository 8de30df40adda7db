/**
 * Opening the journal's SQLite file: created 0600 if new, refused when from a newer tmux-drive,
 * switched to WAL, its pragmas set, migrated. Everything that must hold before the first statement
 * is prepared happens here, once per Journal.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { JournalError } from './journal-error.js';
import { reject } from './machine-values.js';
import { MIGRATIONS, checkMigrations, migrate, tooNew, userVersion } from './migrations.js';
import { JOURNAL_FILE } from './records.js';

const enum Limits {
  /**
   * How long a write waits for another process's transaction. Write transactions here last
   * microseconds to a few milliseconds (a checkpoint: tens); 5 s outlasts any healthy peer and
   * still turns a wedged one into a typed error instead of a hang.
   */
  BusyTimeoutMs = 5000,
  /** The WAL is truncated back to this after a checkpoint instead of keeping its peak size. */
  WalSizeLimitBytes = 8 * 1024 * 1024,
  /** A peer switching the file to WAL holds it for a moment: look again this soon. */
  WalRetryMs = 5,
}

/** The SQLite error code of `error` (SQLITE_BUSY, …), undefined for anything else. */
export function sqliteCode(error: unknown): string | undefined {
  return error instanceof Database.SqliteError ? error.code : undefined;
}

function isBusy(error: unknown): boolean {
  const code = sqliteCode(error);
  return code !== undefined && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/** Open is synchronous (better-sqlite3's model): a short blocking wait, never a spin. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Switching a fresh file to WAL needs a moment alone with it; peers opening at once wait their turn. */
function enableWal(db: Database.Database, file: string, timeoutMs: number): void {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (db.pragma('journal_mode = WAL', { simple: true }) === 'wal') return;
    } catch (error) {
      if (!isBusy(error)) throw error;
    }
    if (Date.now() > deadline) throw new JournalError('JOURNAL_UNREADABLE', `the journal ${file} could not be switched to WAL mode (another process holds it)`, { file });
    sleepSync(Limits.WalRetryMs);
  }
}

/**
 * Opens (creating if needed) `<dataDir>/journal.sqlite3`, migrates it and hands it to `use` (with
 * the data dir resolved); the file is closed again if `use` fails. Throws JOURNAL_TOO_NEW for a
 * file from a newer tmux-drive and JOURNAL_UNREADABLE for one SQLite cannot read.
 */
export function openDatabase<T>(dataDir: string, busyTimeoutMs: number | undefined, use: (db: Database.Database, dir: string) => T): T {
  const dir = resolve(dataDir);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, JOURNAL_FILE);
  const fresh = !existsSync(file);
  const timeout = busyTimeoutMs ?? Limits.BusyTimeoutMs;
  if (!Number.isSafeInteger(timeout) || timeout < 0) reject('busyTimeoutMs', timeout, 'an integer ≥ 0');
  let db: Database.Database;
  try {
    db = new Database(file, { timeout });
  } catch (error) {
    throw new JournalError('JOURNAL_UNREADABLE', `cannot open the journal ${file}: ${(error as Error).message}`, { file, sqlite: sqliteCode(error) }, { cause: error });
  }
  try {
    // SQLite gives -wal and -shm the main file's mode: setting it here covers all three.
    if (fresh) chmodSync(file, 0o600);
    const known = checkMigrations(MIGRATIONS);
    const version = userVersion(db);
    if (version > known) throw tooNew(file, version, known);
    enableWal(db, file, timeout);
    // NORMAL: in WAL mode a commit survives the host's death (kill -9 included: the WAL is in
    // the kernel's page cache); only an OS crash or power loss can drop the last commits, and
    // those also end every tmux server the journal describes, so the file stays consistent and
    // nothing it could still re-attach to is lost. FULL would fsync every commit for nothing.
    db.pragma('synchronous = NORMAL');
    db.pragma('foreign_keys = ON');
    db.pragma(`journal_size_limit = ${Limits.WalSizeLimitBytes}`);
    migrate(db, MIGRATIONS, file);
    return use(db, dir);
  } catch (error) {
    db.close();
    if (error instanceof JournalError) throw error;
    throw new JournalError('JOURNAL_UNREADABLE', `cannot open the journal ${file}: ${(error as Error).message}`, { file, sqlite: sqliteCode(error) }, { cause: error });
  }
}
