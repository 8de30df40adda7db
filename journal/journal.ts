/**
 * The durability journal: one SQLite file per data dir, holding what a restarted host needs to
 * re-attach to its drives and nothing a drive shows or is told. Sessions, events, leases, answered
 * prompts and incidents; ids, names, hashes, machine tokens, counts and times only.
 *
 * better-sqlite3's model: every call is synchronous. Events and incidents are buffered and written
 * in one transaction at the end of the current turn of the event loop (setImmediate, armed by the
 * first append, never a timer loop), on flush() and on close(). Everything else (sessions,
 * answers, leases) is written through at once, in the same transaction as whatever is buffered,
 * so the file's order is the call order.
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync, realpathSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { JournalError, LeaseError, type LeaseHolder } from './journal-error.js';
import {
  ALLOW_ID,
  DIGEST,
  KEY_NAME,
  checkHash,
  checkInteger,
  checkKind,
  checkOneOf,
  checkSessionId,
  checkString,
  checkToken,
  decodeTags,
  encodeTags,
  reject,
  type MachineTags,
} from './machine-values.js';
import { MIGRATIONS, checkMigrations, migrate, tooNew, userVersion } from './migrations.js';
import { bootId, isHolderAlive } from './process-identity.js';

export { JournalError, LeaseError, type LeaseHolder } from './journal-error.js';
export { hashOf, type MachineTags } from './machine-values.js';
export { currentHolder, isHolderAlive, processStartTime } from './process-identity.js';

export const JOURNAL_FILE = 'journal.sqlite3';

export const SESSION_STATES = ['live', 'detached', 'exited', 'failed'] as const;
/** `live`: a host drives it; `detached`: nobody does, its server runs on; the rest are terminal. */
export type JournalSessionState = (typeof SESSION_STATES)[number];
/** The states a restarted host must reconcile (re-attach, or mark failed). */
export const NON_TERMINAL_STATES: readonly JournalSessionState[] = ['live', 'detached'];

export const CLASSIFIED_STATES = ['working', 'awaiting-input', 'exited', 'stuck'] as const;
export type ClassifiedState = (typeof CLASSIFIED_STATES)[number];

export const BACKENDS = ['tmux', 'spawn'] as const;
export type BackendKind = (typeof BACKENDS)[number];

/** A closed set: an incident a human should be able to find later. Details go in machine tags. */
export const INCIDENT_KINDS = [
  'malformed_stream',
  'evidence_overflow',
  'cleanup_failure',
  'nonzero_exit',
  'server_gone',
  'lease_lost',
  'lease_takeover',
  'control_lost',
  'resync_failed',
  'drift_detected',
  'kill_unverified',
  'pane_in_mode',
  /** A live tmux server of the data dir that the journal had lost (emptied, deleted), adopted on request. */
  'orphan_adopted',
] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

const enum Limits {
  /**
   * How long a write waits for another process's transaction. Write transactions here last
   * microseconds to a few milliseconds (a checkpoint: tens); 5 s outlasts any healthy peer and
   * still turns a wedged one into a typed error instead of a hang.
   */
  BusyTimeoutMs = 5000,
  /** A flood inside one tick is written in slices of this many rows: bounds memory and commit size. */
  MaxPending = 10_000,
  /** The WAL is truncated back to this after a checkpoint instead of keeping its peak size. */
  WalSizeLimitBytes = 8 * 1024 * 1024,
  /** sun_path is 108 bytes including the NUL: a longer socket path cannot exist. */
  MaxSocketPathBytes = 107,
}

export interface JournalOptions {
  /** Wall-clock milliseconds for the times stored (default Date.now). */
  readonly clock?: () => number;
  /** A buffered write that failed at the end of a tick (the rows stay buffered for the next flush). */
  readonly onError?: (error: JournalError) => void;
  /** How long a write waits for another process's transaction before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
}

export interface ExitRecord {
  readonly code: number | null;
  readonly signal: number | null;
}

export interface Classification {
  readonly state: ClassifiedState;
  /** A machine reason token, e.g. `cursor_parked`. */
  readonly reason: string;
}

/** What upsertSession takes. `argvHash` and `objectiveHash` come from hashOf(). */
export interface SessionInput {
  readonly id: string;
  readonly name: string;
  /** Absolute; stored relative to the data dir when inside it. */
  readonly socketPath: string;
  readonly allowId: string;
  readonly argvHash: string;
  readonly objectiveHash?: string | null;
  readonly backend: BackendKind;
  readonly durable: boolean;
  readonly state: JournalSessionState;
  readonly classification?: Classification | null;
  readonly interactions?: number;
  readonly exit?: ExitRecord | null;
  /** A machine reason token, e.g. `server_gone`. */
  readonly failureReason?: string | null;
  /** Default: the journal's clock at the first upsert. */
  readonly createdAt?: number;
}

export type SessionPatch = Partial<Omit<SessionInput, 'id' | 'createdAt'>>;

export interface SessionRecord {
  readonly id: string;
  readonly name: string;
  readonly socketPath: string;
  readonly allowId: string;
  readonly argvHash: string;
  readonly objectiveHash: string | null;
  readonly backend: BackendKind;
  readonly durable: boolean;
  readonly state: JournalSessionState;
  readonly classification: Classification | null;
  readonly interactions: number;
  readonly exit: ExitRecord | null;
  readonly failureReason: string | null;
  /** The last event seq handed out for this session (buffered ones included). */
  readonly lastSeq: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface JournalEvent {
  readonly sessionId: string;
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: MachineTags;
}

export interface IncidentRecord {
  readonly id: number;
  readonly sessionId: string | null;
  readonly kind: IncidentKind;
  readonly at: number;
  readonly tags: MachineTags;
}

export interface Lease {
  readonly token: number;
  /** Set when the lease was taken over from a holder that is no longer alive. */
  readonly takenOverFrom?: LeaseHolder;
}

export interface LeaseInfo {
  readonly sessionId: string;
  readonly token: number;
  /** null once released. */
  readonly holder: LeaseHolder | null;
  readonly acquiredAt: number;
  readonly releasedAt: number | null;
}

export interface JournalStats {
  /** Transactions committed by this instance. */
  readonly commits: number;
  readonly eventsWritten: number;
  readonly incidentsWritten: number;
  readonly pendingEvents: number;
  readonly pendingIncidents: number;
  /** The code of the last buffered write that failed, until a later flush succeeds. */
  readonly lastError: string | null;
}

interface SessionRow {
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

type SessionColumns = Omit<SessionRow, 'sid' | 'last_seq'>;

interface LeaseRow {
  session_id: string;
  token: number;
  holder_pid: number | null;
  holder_start: number | null;
  holder_boot: string | null;
  acquired_at: number;
  released_at: number | null;
}

interface PendingEvent {
  readonly sid: number;
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: string | null;
}

interface PendingIncident {
  readonly sid: number | null;
  readonly kind: IncidentKind;
  readonly at: number;
  readonly tags: string | null;
}

/** The in-memory view of a session's event counter: the seq last handed out. */
interface SeqRef {
  readonly sid: number;
  last: number;
}

const SESSION_COLUMNS = [
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

const SOCKET_PATH = /^[A-Za-z0-9._/-]+$/;

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

function isBusy(error: unknown): boolean {
  return error instanceof Database.SqliteError && (error.code === 'SQLITE_BUSY' || error.code.startsWith('SQLITE_BUSY_'));
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
    sleepSync(5);
  }
}

function sqliteCode(error: unknown): string | undefined {
  return error instanceof Database.SqliteError ? error.code : undefined;
}

function notFound(id: string): JournalError {
  return new JournalError('SESSION_NOT_FOUND', `the journal has no session "${id}" (upsertSession first)`, { id });
}

function prepareStatements(db: Database.Database) {
  const columns = SESSION_COLUMNS.join(', ');
  return {
    insertSession: db.prepare(`INSERT INTO sessions (${columns}) VALUES (${SESSION_COLUMNS.map((c) => `@${c}`).join(', ')})`),
    updateSession: db.prepare(`UPDATE sessions SET ${SESSION_COLUMNS.filter((c) => c !== 'id' && c !== 'created_at').map((c) => `${c} = @${c}`).join(', ')} WHERE id = @id`),
    sessionById: db.prepare<[string], SessionRow>('SELECT * FROM sessions WHERE id = ?'),
    allSessions: db.prepare<[], SessionRow>('SELECT * FROM sessions ORDER BY created_at, sid'),
    idByName: db.prepare<[string], { id: string }>('SELECT id FROM sessions WHERE name = ?'),
    seqOf: db.prepare<[string], { sid: number; last_seq: number }>('SELECT sid, last_seq FROM sessions WHERE id = ?'),
    idOfSid: db.prepare<[number], { id: string }>('SELECT id FROM sessions WHERE sid = ?'),
    bumpSeq: db.prepare<[number, number]>('UPDATE sessions SET last_seq = max(last_seq, ?) WHERE sid = ?'),
    insertEvent: db.prepare<[number, number, number, string, string | null]>('INSERT INTO events (sid, seq, at, kind, tags) VALUES (?, ?, ?, ?, ?)'),
    eventsAfter: db.prepare<[number, number, number], { seq: number; at: number; kind: string; tags: string | null }>(
      'SELECT seq, at, kind, tags FROM events WHERE sid = ? AND seq > ? ORDER BY seq LIMIT ?',
    ),
    insertIncident: db.prepare<[number | null, string, number, string | null]>('INSERT INTO incidents (sid, kind, at, tags) VALUES (?, ?, ?, ?)'),
    incidents: db.prepare<[{ sid: number | null; after: number; limit: number }], { id: number; sid: number | null; kind: IncidentKind; at: number; tags: string | null }>(
      'SELECT id, sid, kind, at, tags FROM incidents WHERE (@sid IS NULL OR sid = @sid) AND id > @after ORDER BY id LIMIT @limit',
    ),
    recordAnswer: db.prepare<[{ sid: number; digest: string; key: string; at: number }]>(
      `INSERT INTO answers (sid, digest, key, count, first_at, last_at) VALUES (@sid, @digest, @key, 1, @at, @at)
       ON CONFLICT (sid, digest) DO UPDATE SET key = excluded.key, count = count + 1, last_at = excluded.last_at`,
    ),
    answer: db.prepare<[number, string], { count: number }>('SELECT count FROM answers WHERE sid = ? AND digest = ?'),
    answerTotal: db.prepare<[number], { total: number }>('SELECT coalesce(sum(count), 0) AS total FROM answers WHERE sid = ?'),
    lease: db.prepare<[string], LeaseRow>('SELECT * FROM leases WHERE session_id = ?'),
    insertLease: db.prepare<[string, number, number, string | null, number]>(
      'INSERT INTO leases (session_id, token, holder_pid, holder_start, holder_boot, acquired_at) VALUES (?, 1, ?, ?, ?, ?)',
    ),
    takeLease: db.prepare<[number, number, number, string | null, number, string]>(
      'UPDATE leases SET token = ?, holder_pid = ?, holder_start = ?, holder_boot = ?, acquired_at = ?, released_at = NULL WHERE session_id = ?',
    ),
    releaseLease: db.prepare<[number, string, number]>(
      'UPDATE leases SET holder_pid = NULL, holder_start = NULL, holder_boot = NULL, released_at = ? WHERE session_id = ? AND token = ? AND holder_pid IS NOT NULL',
    ),
  };
}

type Statements = ReturnType<typeof prepareStatements>;

export class Journal {
  readonly file: string;
  readonly dataDir: string;
  private readonly realDataDir: string;
  private readonly clock: () => number;
  private readonly onError: ((error: JournalError) => void) | undefined;
  private readonly q: Statements;
  private readonly tx: Database.Transaction<(work: () => unknown) => unknown>;
  private readonly seqs = new Map<string, SeqRef>();
  /** Leases this instance holds: session id → token. */
  private readonly held = new Map<string, number>();
  private pendingEvents: PendingEvent[] = [];
  private pendingIncidents: PendingIncident[] = [];
  /** sid → highest seq in pendingEvents, written to sessions.last_seq in the same transaction. */
  private touched = new Map<number, number>();
  private scheduled: NodeJS.Immediate | undefined;
  private closed = false;
  private counters = { commits: 0, eventsWritten: 0, incidentsWritten: 0 };
  private lastError: string | null = null;

  private constructor(
    private readonly db: Database.Database,
    dataDir: string,
    opts: JournalOptions,
  ) {
    this.file = db.name;
    this.dataDir = dataDir;
    this.realDataDir = realpathSync(dataDir);
    this.clock = opts.clock ?? Date.now;
    this.onError = opts.onError;
    this.q = prepareStatements(db);
    this.tx = db.transaction((work: () => unknown) => {
      for (const e of this.pendingEvents) this.q.insertEvent.run(e.sid, e.seq, e.at, e.kind, e.tags);
      for (const [sid, seq] of this.touched) this.q.bumpSeq.run(seq, sid);
      for (const i of this.pendingIncidents) this.q.insertIncident.run(i.sid, i.kind, i.at, i.tags);
      return work();
    });
  }

  /**
   * Opens (creating if needed) `<dataDir>/journal.sqlite3` and migrates it. Throws JOURNAL_TOO_NEW
   * for a file from a newer tmux-drive and JOURNAL_UNREADABLE for one SQLite cannot read.
   */
  static open(dataDir: string, opts: JournalOptions = {}): Journal {
    const dir = resolve(dataDir);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, JOURNAL_FILE);
    const fresh = !existsSync(file);
    const timeout = opts.busyTimeoutMs ?? Limits.BusyTimeoutMs;
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
      return new Journal(db, dir, opts);
    } catch (error) {
      db.close();
      if (error instanceof JournalError) throw error;
      throw new JournalError('JOURNAL_UNREADABLE', `cannot open the journal ${file}: ${(error as Error).message}`, { file, sqlite: sqliteCode(error) }, { cause: error });
    }
  }

  // ---- sessions ----------------------------------------------------------------------------

  /** Inserts the session, or updates the fields given; fields left out keep their stored value. */
  upsertSession(input: SessionInput): SessionRecord {
    this.assertOpen();
    if (typeof input !== 'object' || input === null) reject('session', input, 'a session record');
    const id = checkSessionId('session.id', input.id);
    const fields = this.sessionFields(input);
    this.write(() => {
      this.assertNameFree(id, fields.name);
      const existing = this.q.sessionById.get(id);
      const at = this.now();
      if (existing) {
        this.q.updateSession.run({ ...this.columnsOf(existing), ...fields, id, updated_at: at });
        return;
      }
      this.insertRow(id, fields, input.createdAt, at);
    });
    return this.mustGet(id);
  }

  /**
   * Inserts the session only when no row has its id or its name, in one IMMEDIATE transaction: of
   * two hosts adopting the same orphan at once, exactly one writes it. Returns the new record, or
   * undefined when a row was already there (left as it was).
   */
  insertSessionIfAbsent(input: SessionInput): SessionRecord | undefined {
    this.assertOpen();
    if (typeof input !== 'object' || input === null) reject('session', input, 'a session record');
    const id = checkSessionId('session.id', input.id);
    const fields = this.sessionFields(input);
    const inserted = this.write(() => {
      if (this.q.sessionById.get(id) || (fields.name !== undefined && this.q.idByName.get(fields.name))) return false;
      this.insertRow(id, fields, input.createdAt, this.now());
      return true;
    });
    return inserted ? this.mustGet(id) : undefined;
  }

  /** Updates some fields of a stored session (SESSION_NOT_FOUND if there is none). */
  updateSession(id: string, patch: SessionPatch): SessionRecord {
    this.assertOpen();
    checkSessionId('session.id', id);
    if (typeof patch !== 'object' || patch === null) reject('patch', patch, 'a session patch');
    const fields = this.sessionFields(patch);
    this.write(() => {
      this.assertNameFree(id, fields.name);
      const existing = this.q.sessionById.get(id);
      if (!existing) throw notFound(id);
      this.q.updateSession.run({ ...this.columnsOf(existing), ...fields, id, updated_at: this.now() });
    });
    return this.mustGet(id);
  }

  /** The session's server is gone (or it was evicted): terminal, with a machine reason. */
  markFailed(id: string, reason: string): SessionRecord {
    return this.updateSession(id, { state: 'failed', failureReason: reason });
  }

  getSession(id: string): SessionRecord | undefined {
    this.assertOpen();
    checkSessionId('id', id);
    const row = this.q.sessionById.get(id);
    return row ? this.recordOf(row) : undefined;
  }

  /** Sessions in creation order; `states` filters (NON_TERMINAL_STATES: what a new host reconciles). */
  listSessions(opts: { readonly states?: readonly JournalSessionState[] } = {}): SessionRecord[] {
    this.assertOpen();
    const states = opts.states?.map((s, i) => checkOneOf(`states[${i}]`, s, SESSION_STATES));
    return this.q.allSessions
      .all()
      .filter((row) => !states || states.includes(row.state))
      .map((row) => this.recordOf(row));
  }

  // ---- events ------------------------------------------------------------------------------

  /**
   * Buffers an event and returns its seq: per session, from 1, never reused (the last seq is kept
   * in the session's row, so a reopened journal continues after it). Written at the end of the tick.
   */
  appendEvent(sessionId: string, kind: string, tags?: MachineTags): number {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    checkKind('kind', kind);
    const encoded = encodeTags(tags);
    const ref = this.seqRef(sessionId);
    const seq = ref.last + 1;
    ref.last = seq;
    this.pendingEvents.push({ sid: ref.sid, seq, at: this.now(), kind, tags: encoded });
    this.touched.set(ref.sid, seq);
    this.afterBuffering();
    return seq;
  }

  /** The last seq handed out for the session (0 before its first event). */
  lastSeq(sessionId: string): number {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    return this.seqRef(sessionId).last;
  }

  /** Stored events of a session after `afterSeq`, in order (flushes the buffer first). */
  events(sessionId: string, opts: { readonly afterSeq?: number; readonly limit?: number } = {}): JournalEvent[] {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const after = checkInteger('afterSeq', opts.afterSeq ?? 0, 0);
    const limit = checkInteger('limit', opts.limit ?? 1000, 1);
    this.flushPending();
    const { sid } = this.seqRef(sessionId);
    return this.q.eventsAfter.all(sid, after, limit).map((r) => ({ sessionId, seq: r.seq, at: r.at, kind: r.kind, tags: decodeTags(r.tags) }));
  }

  // ---- incidents ---------------------------------------------------------------------------

  /** Buffers an incident (a session's, or the host's when sessionId is null). */
  recordIncident(sessionId: string | null, kind: IncidentKind, tags?: MachineTags): void {
    this.assertOpen();
    if (sessionId !== null) checkSessionId('sessionId', sessionId);
    checkOneOf('kind', kind, INCIDENT_KINDS);
    const encoded = encodeTags(tags);
    const sid = sessionId === null ? null : this.seqRef(sessionId).sid;
    this.pendingIncidents.push({ sid, kind, at: this.now(), tags: encoded });
    this.afterBuffering();
  }

  incidents(opts: { readonly sessionId?: string; readonly afterId?: number; readonly limit?: number } = {}): IncidentRecord[] {
    this.assertOpen();
    const after = checkInteger('afterId', opts.afterId ?? 0, 0);
    const limit = checkInteger('limit', opts.limit ?? 1000, 1);
    this.flushPending();
    const sid = opts.sessionId === undefined ? null : this.seqRef(checkSessionId('sessionId', opts.sessionId)).sid;
    const names = new Map<number, string>();
    const idOf = (s: number): string => {
      let id = names.get(s);
      if (id === undefined) {
        id = this.q.idOfSid.get(s)?.id ?? '';
        names.set(s, id);
      }
      return id;
    };
    return this.q.incidents.all({ sid, after, limit }).map((r) => ({ id: r.id, sessionId: r.sid === null ? null : idOf(r.sid), kind: r.kind, at: r.at, tags: decodeTags(r.tags) }));
  }

  // ---- answered prompts --------------------------------------------------------------------

  /**
   * Records that the prompt with this structural digest was answered with `key` (a key name).
   * Written through at once: the driver records before it sends, so a restart never answers
   * twice. Returns how many times this digest has now been answered.
   */
  recordAnswer(sessionId: string, digest: string, key: string): number {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    checkString('digest', digest, DIGEST, 'a structural digest ([algo:]hex, 16-128 digits)');
    checkString('key', key, KEY_NAME, 'a key name ([A-Za-z0-9_+-]{1,32})');
    const { sid } = this.seqRef(sessionId);
    return this.write(() => {
      this.q.recordAnswer.run({ sid, digest, key, at: this.now() });
      return this.q.answer.get(sid, digest)?.count ?? 0;
    });
  }

  wasAnswered(sessionId: string, digest: string): boolean {
    return this.answerCount(sessionId, digest) > 0;
  }

  /** Times this digest was answered, or with no digest the session's total. */
  answerCount(sessionId: string, digest?: string): number {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const { sid } = this.seqRef(sessionId);
    if (digest === undefined) return this.q.answerTotal.get(sid)?.total ?? 0;
    checkString('digest', digest, DIGEST, 'a structural digest ([algo:]hex, 16-128 digits)');
    return this.q.answer.get(sid, digest)?.count ?? 0;
  }

  // ---- leases ------------------------------------------------------------------------------

  /**
   * Makes `holder` the one driver of the session and returns a fencing token larger than any
   * issued before for it. Throws LEASE_HELD when another live process holds it (also another
   * Journal in this very process); a holder that is dead (its pid gone, or reused by a process
   * with another start time, or from an earlier boot) is taken over, and a lease_takeover
   * incident recorded. Races between processes are settled by an IMMEDIATE transaction.
   */
  acquireLease(sessionId: string, holder: LeaseHolder): Lease {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    if (typeof holder !== 'object' || holder === null) reject('holder', holder, 'a lease holder { pid, startTime }');
    checkInteger('holder.pid', holder.pid, 1);
    checkInteger('holder.startTime', holder.startTime, 0);
    const mine = this.held.get(sessionId);
    const outcome = this.write((): { token: number; previous?: LeaseHolder } | { refusedBy: LeaseHolder; token: number } => {
      const row = this.q.lease.get(sessionId);
      const at = this.now();
      const boot = bootId();
      if (!row) {
        this.q.insertLease.run(sessionId, holder.pid, holder.startTime, boot, at);
        return { token: 1 };
      }
      if (row.holder_pid === null || row.holder_start === null) {
        this.q.takeLease.run(row.token + 1, holder.pid, holder.startTime, boot, at, sessionId);
        return { token: row.token + 1 };
      }
      if (mine === row.token) return { token: mine };
      const previous = { pid: row.holder_pid, startTime: row.holder_start };
      const sameBoot = row.holder_boot === null || boot === null || row.holder_boot === boot;
      if (sameBoot && isHolderAlive(previous)) return { refusedBy: previous, token: row.token };
      const token = row.token + 1;
      this.q.takeLease.run(token, holder.pid, holder.startTime, boot, at, sessionId);
      const sid = this.q.seqOf.get(sessionId)?.sid ?? null;
      const tags = encodeTags({ prev_pid: previous.pid, prev_token: row.token, token });
      this.q.insertIncident.run(sid, 'lease_takeover', at, tags);
      this.counters.incidentsWritten++;
      return { token, previous };
    });
    if ('refusedBy' in outcome) {
      const by = outcome.refusedBy;
      throw new LeaseError(
        'LEASE_HELD',
        `session "${sessionId}" is already driven by process ${by.pid} (started at tick ${by.startTime}, lease token ${outcome.token}); one drive has one driver: stop that process or use it`,
        sessionId,
        outcome.token,
        by,
      );
    }
    this.held.set(sessionId, outcome.token);
    // Another process may have appended since this one last looked: continue after its seqs.
    this.seqs.delete(sessionId);
    return outcome.previous ? { token: outcome.token, takenOverFrom: outcome.previous } : { token: outcome.token };
  }

  /** Throws LEASE_LOST unless `token` is the session's current, held token. Call before any input. */
  checkLease(sessionId: string, token: number): void {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const row = this.q.lease.get(sessionId);
    if (row && row.holder_pid !== null && row.token === token) return;
    const current = row && row.holder_pid !== null ? row.token : null;
    throw new LeaseError(
      'LEASE_LOST',
      `the lease on session "${sessionId}" is no longer this driver's (token ${String(token)}, current ${current === null ? 'none' : String(current)}): send nothing more to it`,
      sessionId,
      current,
    );
  }

  /** Lets go of the lease if `token` is still current; returns whether it was. */
  releaseLease(sessionId: string, token: number): boolean {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const released = this.write(() => this.q.releaseLease.run(this.now(), sessionId, token).changes > 0);
    if (this.held.get(sessionId) === token) this.held.delete(sessionId);
    return released;
  }

  lease(sessionId: string): LeaseInfo | undefined {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const row = this.q.lease.get(sessionId);
    if (!row) return undefined;
    const holder = row.holder_pid !== null && row.holder_start !== null ? { pid: row.holder_pid, startTime: row.holder_start } : null;
    return { sessionId, token: row.token, holder, acquiredAt: row.acquired_at, releasedAt: row.released_at };
  }

  // ---- upkeep ------------------------------------------------------------------------------

  /** Writes everything buffered now, in one transaction. Throws JOURNAL_WRITE_FAILED (rows kept). */
  flush(): void {
    this.assertOpen();
    this.flushPending();
  }

  /** `PRAGMA integrity_check` plus `foreign_key_check`: 'ok', or the problems found, one a line. */
  integrityCheck(): string {
    this.assertOpen();
    this.flushPending();
    const problems = (this.db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).filter((r) => r !== 'ok');
    const orphans = this.db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
    for (const o of orphans) problems.push(`${o.table} row ${o.rowid} references a missing ${o.parent} row`);
    return problems.length === 0 ? 'ok' : problems.join('\n');
  }

  stats(): JournalStats {
    return { ...this.counters, pendingEvents: this.pendingEvents.length, pendingIncidents: this.pendingIncidents.length, lastError: this.lastError };
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /**
   * Flushes, releases the leases this instance holds (a durable drive is then free for the next
   * host to re-attach) and closes the file. Idempotent. Throws if the last write failed (the file
   * is closed regardless).
   */
  close(): void {
    if (this.closed) return;
    this.cancelScheduled();
    let failure: unknown;
    try {
      if (this.held.size > 0 || this.pendingEvents.length > 0 || this.pendingIncidents.length > 0) {
        this.write(() => {
          const at = this.now();
          for (const [sessionId, token] of this.held) this.q.releaseLease.run(at, sessionId, token);
        });
      }
      this.held.clear();
    } catch (error) {
      failure = error;
    }
    this.closed = true;
    this.db.close();
    if (failure !== undefined) throw failure;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  // ---- internals ---------------------------------------------------------------------------

  private assertOpen(): void {
    if (this.closed) throw new JournalError('JOURNAL_CLOSED', `the journal ${this.file} is closed`, { file: this.file });
  }

  private now(): number {
    return Math.floor(this.clock());
  }

  /**
   * Runs `work` in one IMMEDIATE transaction, after writing whatever is buffered; the buffer is
   * cleared only once the transaction committed, so a failed write loses nothing.
   */
  private write<T>(work: () => T): T {
    let result: T;
    const events = this.pendingEvents.length;
    const incidents = this.pendingIncidents.length;
    try {
      result = this.tx.immediate(work) as T;
    } catch (error) {
      if (error instanceof JournalError) throw error;
      const code = sqliteCode(error) ?? 'unknown';
      this.lastError = code;
      throw new JournalError('JOURNAL_WRITE_FAILED', `a journal write failed (${code}: ${(error as Error).message}); ${events} events and ${incidents} incidents stay buffered`, { sqlite: code, events, incidents }, { cause: error });
    }
    this.counters.commits++;
    this.counters.eventsWritten += events;
    this.counters.incidentsWritten += incidents;
    this.lastError = null;
    if (events > 0 || incidents > 0) {
      this.pendingEvents = [];
      this.pendingIncidents = [];
      this.touched = new Map();
    }
    return result;
  }

  private flushPending(): void {
    this.cancelScheduled();
    if (this.pendingEvents.length === 0 && this.pendingIncidents.length === 0) return;
    this.write(() => undefined);
  }

  private afterBuffering(): void {
    // After a failed write, retry once a tick rather than on every append (a busy peer would
    // otherwise cost a busy_timeout per call).
    if (this.lastError === null && this.pendingEvents.length + this.pendingIncidents.length >= Limits.MaxPending) {
      this.autoFlush();
      return;
    }
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.autoFlush();
    });
  }

  private autoFlush(): void {
    if (this.closed) return;
    try {
      this.flushPending();
    } catch (error) {
      const journalError = error instanceof JournalError ? error : new JournalError('JOURNAL_WRITE_FAILED', String(error), {}, { cause: error });
      this.onError?.(journalError);
    }
  }

  private cancelScheduled(): void {
    if (this.scheduled) {
      clearImmediate(this.scheduled);
      this.scheduled = undefined;
    }
  }

  private seqRef(sessionId: string): SeqRef {
    let ref = this.seqs.get(sessionId);
    if (!ref) {
      const row = this.q.seqOf.get(sessionId);
      if (!row) throw notFound(sessionId);
      ref = { sid: row.sid, last: row.last_seq };
      this.seqs.set(sessionId, ref);
    }
    return ref;
  }

  /** Inside a write: a new row, every required field present. */
  private insertRow(id: string, fields: Partial<SessionColumns>, createdAtInput: number | undefined, at: number): void {
    for (const required of ['name', 'socket', 'allow_id', 'argv_hash', 'backend', 'durable', 'state'] as const) {
      if (fields[required] === undefined) reject(`session.${required}`, undefined, 'a value (required for a new session)');
    }
    const createdAt = createdAtInput === undefined ? at : checkInteger('session.createdAt', createdAtInput, 0);
    const defaults = { objective_hash: null, class_state: null, class_reason: null, interactions: 0, exit_code: null, exit_signal: null, failure_reason: null };
    this.q.insertSession.run({ ...defaults, ...fields, id, created_at: createdAt, updated_at: at });
  }

  private assertNameFree(id: string, name: string | undefined): void {
    if (name === undefined) return;
    const owner = this.q.idByName.get(name)?.id;
    if (owner !== undefined && owner !== id) throw new JournalError('NAME_IN_USE', `the name "${name}" already belongs to session "${owner}" in the journal`, { name, owner });
  }

  private mustGet(id: string): SessionRecord {
    const row = this.q.sessionById.get(id);
    if (!row) throw notFound(id);
    return this.recordOf(row);
  }

  /** Validates the fields present and maps them to columns. */
  private sessionFields(input: SessionPatch): Partial<SessionColumns> {
    const out: Partial<SessionColumns> = {};
    if (input.name !== undefined) out.name = checkSessionId('session.name', input.name);
    if (input.socketPath !== undefined) out.socket = this.encodeSocket(input.socketPath);
    if (input.allowId !== undefined) out.allow_id = checkString('session.allowId', input.allowId, ALLOW_ID, 'an allow-entry id');
    if (input.argvHash !== undefined) out.argv_hash = checkHash('session.argvHash', input.argvHash);
    if (input.objectiveHash !== undefined) out.objective_hash = input.objectiveHash === null ? null : checkHash('session.objectiveHash', input.objectiveHash);
    if (input.backend !== undefined) out.backend = checkOneOf('session.backend', input.backend, BACKENDS);
    if (input.durable !== undefined) {
      if (typeof input.durable !== 'boolean') reject('session.durable', input.durable, 'a boolean');
      out.durable = input.durable ? 1 : 0;
    }
    if (input.state !== undefined) out.state = checkOneOf('session.state', input.state, SESSION_STATES);
    if (input.classification !== undefined) {
      const c = input.classification;
      if (c !== null && (typeof c !== 'object' || Array.isArray(c))) reject('session.classification', c, 'null or { state, reason }');
      out.class_state = c === null ? null : checkOneOf('session.classification.state', c.state, CLASSIFIED_STATES);
      out.class_reason = c === null ? null : checkToken('session.classification.reason', c.reason);
    }
    if (input.interactions !== undefined) out.interactions = checkInteger('session.interactions', input.interactions, 0);
    if (input.exit !== undefined) {
      const e = input.exit;
      if (e !== null && (typeof e !== 'object' || Array.isArray(e))) reject('session.exit', e, 'null or { code, signal }');
      out.exit_code = e === null || e.code === null ? null : checkInteger('session.exit.code', e.code, -2147483648);
      out.exit_signal = e === null || e.signal === null ? null : checkInteger('session.exit.signal', e.signal, 0);
    }
    if (input.failureReason !== undefined) out.failure_reason = input.failureReason === null ? null : checkToken('session.failureReason', input.failureReason);
    return out;
  }

  private columnsOf(row: SessionRow): SessionColumns {
    const { sid: _sid, last_seq: _last, ...columns } = row;
    return columns;
  }

  /** Inside the data dir: stored relative (so the data dir's own name never constrains it). */
  private encodeSocket(path: unknown): string {
    if (typeof path !== 'string' || !isAbsolute(path)) reject('session.socketPath', path, 'an absolute path');
    const absolute = resolve(path);
    if (Buffer.byteLength(absolute) > Limits.MaxSocketPathBytes) reject('session.socketPath', path, `a path of at most ${Limits.MaxSocketPathBytes} bytes (sun_path)`);
    let stored = absolute;
    for (const base of [this.dataDir, this.realDataDir]) {
      if (absolute.startsWith(`${base}/`)) {
        stored = absolute.slice(base.length + 1);
        break;
      }
    }
    if (!SOCKET_PATH.test(stored) || stored.split('/').some((part) => part === '.' || part === '..')) {
      reject('session.socketPath', path, 'a path of [A-Za-z0-9._/-] (relative to the data dir when inside it)');
    }
    return stored;
  }

  private recordOf(row: SessionRow): SessionRecord {
    const pending = this.seqs.get(row.id)?.last ?? 0;
    return {
      id: row.id,
      name: row.name,
      socketPath: row.socket.startsWith('/') ? row.socket : join(this.dataDir, row.socket),
      allowId: row.allow_id,
      argvHash: row.argv_hash,
      objectiveHash: row.objective_hash,
      backend: row.backend,
      durable: row.durable === 1,
      state: row.state,
      classification: row.class_state !== null && row.class_reason !== null ? { state: row.class_state, reason: row.class_reason } : null,
      interactions: row.interactions,
      exit: row.exit_code !== null || row.exit_signal !== null ? { code: row.exit_code, signal: row.exit_signal } : null,
      failureReason: row.failure_reason,
      lastSeq: Math.max(row.last_seq, pending),
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }
}
