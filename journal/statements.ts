/**
 * Every statement the journal prepares, once per open file, and the row shapes they read (the
 * schema is migrations.ts's, the pragmas open-database.ts's). The session columns are listed once;
 * the insert and update statements are built from that list.
 */
import type Database from 'better-sqlite3';
import type { BackendKind, ClassifiedState, IncidentKind, JournalSessionState } from './records.js';

export interface SessionRow {
  sid: number;
  id: string;
  name: string;
  socket: string;
  allow_id: string;
  argv_hash: string;
  objective_hash: string | null;
  backend: BackendKind;
  durable: number;
  state: JournalSessionState;
  class_state: ClassifiedState | null;
  class_reason: string | null;
  interactions: number;
  exit_code: number | null;
  exit_signal: number | null;
  failure_reason: string | null;
  last_seq: number;
  created_at: number;
  updated_at: number;
}

export type SessionColumns = Omit<SessionRow, 'sid' | 'last_seq'>;

export interface LeaseRow {
  session_id: string;
  token: number;
  holder_pid: number | null;
  holder_start: number | null;
  holder_boot: string | null;
  acquired_at: number;
  released_at: number | null;
}

export const SESSION_COLUMNS = [
  'id',
  'name',
  'socket',
  'allow_id',
  'argv_hash',
  'objective_hash',
  'backend',
  'durable',
  'state',
  'class_state',
  'class_reason',
  'interactions',
  'exit_code',
  'exit_signal',
  'failure_reason',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SessionColumns)[];

type Statement<P extends unknown[], R = unknown> = Database.Statement<P, R>;

/** Each statement with the parameters it binds and the row it reads (better-sqlite3 checks neither). */
export interface Statements {
  /** Partial: the caller checks the required columns first, and the schema has them NOT NULL. */
  readonly insertSession: Statement<[Partial<SessionColumns>]>;
  readonly updateSession: Statement<[SessionColumns]>;
  readonly sessionById: Statement<[string], SessionRow>;
  readonly allSessions: Statement<[], SessionRow>;
  readonly idByName: Statement<[string], { id: string }>;
  readonly seqOf: Statement<[string], { sid: number; last_seq: number }>;
  readonly idOfSid: Statement<[number], { id: string }>;
  readonly bumpSeq: Statement<[number, number]>;
  readonly renameSession: Statement<[string, string, number]>;
  readonly deleteEvents: Statement<[number]>;
  readonly deleteAnswers: Statement<[number]>;
  readonly deleteIncidents: Statement<[number]>;
  readonly deleteSession: Statement<[number]>;
  readonly insertEvent: Statement<[number, number, number, string, string | null]>;
  readonly eventsAfter: Statement<[number, number, number], { seq: number; at: number; kind: string; tags: string | null }>;
  readonly firstEventOfKind: Statement<[number, number, number, string], { seq: number; at: number; kind: string; tags: string | null }>;
  readonly lastStoredSeq: Statement<[number], number | null>;
  readonly insertIncident: Statement<[number | null, string, number, string | null]>;
  readonly incidents: Statement<[{ sid: number | null; after: number; limit: number }], { id: number; sid: number | null; kind: IncidentKind; at: number; tags: string | null }>;
  readonly recordAnswer: Statement<[{ sid: number; digest: string; key: string; at: number }]>;
  readonly answer: Statement<[number, string], { count: number }>;
  readonly answerTotal: Statement<[number], { total: number }>;
  readonly lease: Statement<[string], LeaseRow>;
  readonly insertLease: Statement<[string, number, number, string | null, number]>;
  readonly takeLease: Statement<[number, number, number, string | null, number, string]>;
  readonly releaseLease: Statement<[number, string, number]>;
  /**
   * Changes when another connection commits to the file (never for this connection's own writes).
   * Plucked (the value, not a row object): it runs before every keystroke.
   */
  readonly dataVersion: Statement<[], number>;
}

const COLUMNS = SESSION_COLUMNS.join(', ');

/** The SQL of each statement, by name: one table, checked complete against `Statements`. */
const SQL: { readonly [K in keyof Statements]: string } = {
  insertSession: `INSERT INTO sessions (${COLUMNS}) VALUES (${SESSION_COLUMNS.map((c) => `@${c}`).join(', ')})`,
  updateSession: `UPDATE sessions SET ${SESSION_COLUMNS.filter((c) => c !== 'id' && c !== 'created_at').map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`,
  sessionById: 'SELECT * FROM sessions WHERE id = ?',
  allSessions: 'SELECT * FROM sessions ORDER BY created_at, sid',
  idByName: 'SELECT id FROM sessions WHERE name = ?',
  seqOf: 'SELECT sid, last_seq FROM sessions WHERE id = ?',
  idOfSid: 'SELECT id FROM sessions WHERE sid = ?',
  bumpSeq: 'UPDATE sessions SET last_seq = max(last_seq, ?) WHERE sid = ?',
  renameSession: 'UPDATE sessions SET id = ?, name = ? WHERE sid = ?',
  deleteEvents: 'DELETE FROM events WHERE sid = ?',
  deleteAnswers: 'DELETE FROM answers WHERE sid = ?',
  deleteIncidents: 'DELETE FROM incidents WHERE sid = ?',
  deleteSession: 'DELETE FROM sessions WHERE sid = ?',
  insertEvent: 'INSERT INTO events (sid, seq, at, kind, tags) VALUES (?, ?, ?, ?, ?)',
  eventsAfter: 'SELECT seq, at, kind, tags FROM events WHERE sid = ? AND seq > ? ORDER BY seq LIMIT ?',
  firstEventOfKind: 'SELECT seq, at, kind, tags FROM events WHERE sid = ? AND seq > ? AND seq <= ? AND kind = ? ORDER BY seq LIMIT 1',
  lastStoredSeq: 'SELECT max(seq) FROM events WHERE sid = ?',
  insertIncident: 'INSERT INTO incidents (sid, kind, at, tags) VALUES (?, ?, ?, ?)',
  incidents: 'SELECT id, sid, kind, at, tags FROM incidents WHERE (@sid IS NULL OR sid = @sid) AND id > @after ORDER BY id LIMIT @limit',
  recordAnswer: `INSERT INTO answers (sid, digest, key, count, first_at, last_at) VALUES (@sid, @digest, @key, 1, @at, @at)
       ON CONFLICT (sid, digest) DO UPDATE SET key = excluded.key, count = count + 1, last_at = excluded.last_at`,
  answer: 'SELECT count FROM answers WHERE sid = ? AND digest = ?',
  answerTotal: 'SELECT coalesce(sum(count), 0) AS total FROM answers WHERE sid = ?',
  lease: 'SELECT * FROM leases WHERE session_id = ?',
  insertLease: 'INSERT INTO leases (session_id, token, holder_pid, holder_start, holder_boot, acquired_at) VALUES (?, 1, ?, ?, ?, ?)',
  takeLease: 'UPDATE leases SET token = ?, holder_pid = ?, holder_start = ?, holder_boot = ?, acquired_at = ?, released_at = NULL WHERE session_id = ?',
  releaseLease: 'UPDATE leases SET holder_pid = NULL, holder_start = NULL, holder_boot = NULL, released_at = ? WHERE session_id = ? AND token = ? AND holder_pid IS NOT NULL',
  dataVersion: 'PRAGMA data_version',
};

export function prepareStatements(db: Database.Database): Statements {
  const prepared: Record<string, Database.Statement> = {};
  for (const [name, sql] of Object.entries(SQL)) prepared[name] = db.prepare(sql);
  prepared.dataVersion?.pluck();
  prepared.lastStoredSeq?.pluck();
  // The parameter and row types are declarations (as with db.prepare<P, R>): the table above is complete.
  return prepared as unknown as Statements;
}
