/**
 * The journal's schema, as numbered migrations (Signal-Desktop's model): an ordered array checked
 * to be 1, 2, 3, …; each migration runs in one IMMEDIATE transaction together with the bump of
 * `PRAGMA user_version`, so a crash mid-migration leaves the previous version intact, and two
 * processes opening a fresh file at once migrate it exactly once.
 *
 * Rules: never edit a shipped migration, only append one; a file whose user_version is newer than
 * the last migration here is refused (JOURNAL_TOO_NEW), never downgraded or written.
 */
import type Database from 'better-sqlite3';
import { JournalError } from './journal-error.js';

export interface Migration {
  readonly version: number;
  readonly up: (db: Database.Database) => void;
}

// Character classes below repeat journal/machine-values.ts as CHECK constraints: the schema itself
// refuses spaces, upper case (where tokens are lower case) and punctuation that free text needs.
const V1 = `
CREATE TABLE sessions (
  sid            INTEGER PRIMARY KEY,
  id             TEXT NOT NULL UNIQUE CHECK (length(id) BETWEEN 1 AND 64 AND id NOT GLOB '*[^A-Za-z0-9_-]*'),
  name           TEXT NOT NULL UNIQUE CHECK (length(name) BETWEEN 1 AND 64 AND name NOT GLOB '*[^A-Za-z0-9_-]*'),
  -- relative to the journal's data dir when inside it, else absolute
  socket         TEXT NOT NULL CHECK (length(socket) BETWEEN 1 AND 107 AND socket NOT GLOB '*[^A-Za-z0-9._/-]*'),
  allow_id       TEXT NOT NULL CHECK (length(allow_id) BETWEEN 1 AND 64 AND allow_id NOT GLOB '*[^A-Za-z0-9._-]*'),
  argv_hash      TEXT NOT NULL CHECK (length(argv_hash) = 64 AND argv_hash NOT GLOB '*[^0-9a-f]*'),
  objective_hash TEXT CHECK (objective_hash IS NULL OR (length(objective_hash) = 64 AND objective_hash NOT GLOB '*[^0-9a-f]*')),
  backend        TEXT NOT NULL CHECK (backend IN ('tmux', 'spawn')),
  durable        INTEGER NOT NULL CHECK (durable IN (0, 1)),
  state          TEXT NOT NULL CHECK (state IN ('live', 'detached', 'exited', 'failed')),
  class_state    TEXT CHECK (class_state IS NULL OR class_state IN ('working', 'awaiting-input', 'exited', 'stuck')),
  class_reason   TEXT CHECK (class_reason IS NULL OR (length(class_reason) BETWEEN 1 AND 64 AND class_reason NOT GLOB '*[^a-z0-9_.:-]*')),
  interactions   INTEGER NOT NULL DEFAULT 0 CHECK (interactions >= 0),
  exit_code      INTEGER,
  exit_signal    INTEGER,
  failure_reason TEXT CHECK (failure_reason IS NULL OR (length(failure_reason) BETWEEN 1 AND 64 AND failure_reason NOT GLOB '*[^a-z0-9_.:-]*')),
  -- the last event seq ever written for this session: seqs continue from it after a restart
  last_seq       INTEGER NOT NULL DEFAULT 0 CHECK (last_seq >= 0),
  created_at     INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL
) STRICT;

CREATE INDEX sessions_by_state ON sessions (state);

CREATE TABLE events (
  sid  INTEGER NOT NULL REFERENCES sessions (sid),
  seq  INTEGER NOT NULL CHECK (seq > 0),
  at   INTEGER NOT NULL,
  kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 32 AND kind NOT GLOB '*[^a-z0-9_.:-]*'),
  tags TEXT CHECK (tags IS NULL OR (length(tags) <= 2048 AND tags NOT GLOB '*[^a-z0-9_.:{}",+-]*' AND json_valid(tags))),
  PRIMARY KEY (sid, seq)
) STRICT, WITHOUT ROWID;

CREATE TABLE answers (
  sid      INTEGER NOT NULL REFERENCES sessions (sid),
  digest   TEXT NOT NULL CHECK (length(digest) BETWEEN 16 AND 145 AND digest NOT GLOB '*[^a-z0-9:]*'),
  key      TEXT NOT NULL CHECK (length(key) BETWEEN 1 AND 32 AND key NOT GLOB '*[^A-Za-z0-9_+-]*'),
  count    INTEGER NOT NULL CHECK (count >= 1),
  first_at INTEGER NOT NULL,
  last_at  INTEGER NOT NULL,
  PRIMARY KEY (sid, digest)
) STRICT, WITHOUT ROWID;

CREATE TABLE incidents (
  id   INTEGER PRIMARY KEY,
  sid  INTEGER REFERENCES sessions (sid),
  kind TEXT NOT NULL CHECK (length(kind) BETWEEN 1 AND 32 AND kind NOT GLOB '*[^a-z0-9_.:-]*'),
  at   INTEGER NOT NULL,
  tags TEXT CHECK (tags IS NULL OR (length(tags) <= 2048 AND tags NOT GLOB '*[^a-z0-9_.:{}",+-]*' AND json_valid(tags)))
) STRICT;

CREATE INDEX incidents_by_session ON incidents (sid) WHERE sid IS NOT NULL;

-- One row per session id ever leased; the row outlives its holder so the token only grows.
CREATE TABLE leases (
  session_id   TEXT PRIMARY KEY CHECK (length(session_id) BETWEEN 1 AND 64 AND session_id NOT GLOB '*[^A-Za-z0-9_-]*'),
  token        INTEGER NOT NULL CHECK (token >= 1),
  holder_pid   INTEGER CHECK (holder_pid IS NULL OR holder_pid > 0),
  holder_start INTEGER CHECK (holder_start IS NULL OR holder_start >= 0),
  holder_boot  TEXT CHECK (holder_boot IS NULL OR (length(holder_boot) <= 64 AND holder_boot NOT GLOB '*[^0-9a-f-]*')),
  acquired_at  INTEGER NOT NULL,
  released_at  INTEGER,
  CHECK ((holder_pid IS NULL) = (holder_start IS NULL))
) STRICT, WITHOUT ROWID;
`;

export const MIGRATIONS: readonly Migration[] = [{ version: 1, up: (db) => db.exec(V1) }];

/** Versions must be 1, 2, 3, … in order: a gap or a repeat means a migration file went missing. */
export function checkMigrations(migrations: readonly Migration[]): number {
  migrations.forEach((m, i) => {
    if (m.version !== i + 1) {
      throw new JournalError('MIGRATIONS_INVALID', `journal migrations must be numbered 1, 2, 3, … in order; entry ${i} has version ${String(m.version)}`, { index: i, version: m.version });
    }
  });
  return migrations.length;
}

export function userVersion(db: Database.Database): number {
  return db.pragma('user_version', { simple: true }) as number;
}

export function tooNew(file: string, version: number, known: number): JournalError {
  return new JournalError(
    'JOURNAL_TOO_NEW',
    `the journal ${file} has schema version ${version}, newer than this tmux-drive knows (${known}): upgrade tmux-drive to open it (the file was left untouched)`,
    { file, version, known },
  );
}

/**
 * Brings the file up to the last migration. Returns the version found and the version reached.
 * Each step re-reads user_version inside its own IMMEDIATE transaction, so a process that lost
 * the race to migrate skips what another already did.
 */
export function migrate(db: Database.Database, migrations: readonly Migration[] = MIGRATIONS, file = 'journal'): { from: number; to: number } {
  const known = checkMigrations(migrations);
  const from = userVersion(db);
  if (from > known) throw tooNew(file, from, known);
  for (const migration of migrations) {
    if (migration.version <= from) continue;
    db.transaction(() => {
      const current = userVersion(db);
      if (current > known) throw tooNew(file, current, known);
      if (current >= migration.version) return;
      migration.up(db);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
  return { from, to: userVersion(db) };
}
