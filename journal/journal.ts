/**
 * The durability journal: one SQLite file per data dir, holding what a restarted host needs to
 * re-attach to its drives and nothing a drive shows or is told. Sessions, events, leases, answered
 * prompts and incidents; ids, names, hashes, machine tokens, counts and times only.
 *
 * The room (journal/), behind this facade:
 *   records.ts          the closed value sets and the record shapes of the public API
 *   open-database.ts    opening the file: mode, WAL, pragmas, migrations
 *   migrations.ts       the schema, as numbered migrations
 *   statements.ts       every prepared statement and the rows they read
 *   write-buffer.ts     buffered events and incidents, and the one transaction every write runs in
 *   session-rows.ts     the sessions table and each session's event counter
 *   leases.ts           one drive, one driver: leases and fencing tokens
 *   wal-index-header.ts the WAL-index header read without SQLite: the lease check's fast path
 *   machine-values.ts   the machine shapes every stored string must have
 *   process-identity.ts who holds a lease: a pid and its start time, from /proc
 *   audit-log.ts        the audit log beside the journal (content, redacted by the caller)
 * It imports lib/common (errors) only; lib/driver is its one user.
 *
 * better-sqlite3's model: every call is synchronous. Events and incidents are written at the end
 * of the current turn of the event loop; everything else is written through at once, in the same
 * transaction as whatever is buffered, so the file's order is the call order (write-buffer.ts).
 */
import { realpathSync } from 'node:fs';
import type Database from 'better-sqlite3';
import { JournalError, type LeaseError, type LeaseHolder } from './journal-error.js';
import { DIGEST, KEY_NAME, checkInteger, checkKind, checkOneOf, checkSessionId, checkString, decodeTags, encodeTags, reject, type MachineTags } from './machine-values.js';
import { Leases } from './leases.js';
import { openDatabase } from './open-database.js';
import {
  INCIDENT_KINDS,
  type IncidentKind,
  type IncidentRecord,
  type JournalEvent,
  type JournalOptions,
  type JournalSessionState,
  type JournalStats,
  type Lease,
  type LeaseInfo,
  type SessionInput,
  type SessionPatch,
  type SessionRecord,
} from './records.js';
import { SessionRows } from './session-rows.js';
import { WalIndexHeader } from './wal-index-header.js';

export { isRetiredSessionId } from './machine-values.js';
import { prepareStatements, type Statements } from './statements.js';
import { WriteBuffer } from './write-buffer.js';

export { JournalError, LeaseError, type LeaseHolder } from './journal-error.js';
export { hashOf, type MachineTags } from './machine-values.js';
export { currentHolder, isHolderAlive, processStartTime } from './process-identity.js';
export * from './records.js';

export class Journal {
  readonly file: string;
  readonly dataDir: string;
  private readonly clock: () => number;
  private readonly q: Statements;
  private readonly buffer: WriteBuffer;
  private readonly rows: SessionRows;
  private readonly leases: Leases;
  /** The lease check's fast path, or why there is none (see leases.ts). */
  private readonly walIndex: WalIndexHeader | string;
  private closed = false;

  private constructor(
    private readonly db: Database.Database,
    dataDir: string,
    opts: JournalOptions,
  ) {
    this.file = db.name;
    this.dataDir = dataDir;
    this.clock = opts.clock ?? Date.now;
    const now = (): number => this.now();
    this.q = prepareStatements(db);
    this.buffer = new WriteBuffer(db, this.q, opts.onError);
    this.rows = new SessionRows(this.q, this.buffer, dataDir, realpathSync(dataDir), now);
    this.walIndex = WalIndexHeader.open(db.name, {
      journalMode: String(db.pragma('journal_mode', { simple: true })),
      lockingMode: String(db.pragma('locking_mode', { simple: true })),
      pageSize: Number(db.pragma('page_size', { simple: true })),
    });
    this.leases = new Leases(this.q, this.buffer, now, this.walIndex);
  }

  /**
   * Opens (creating if needed) `<dataDir>/journal.sqlite3` and migrates it. Throws JOURNAL_TOO_NEW
   * for a file from a newer tmux-drive and JOURNAL_UNREADABLE for one SQLite cannot read.
   */
  static open(dataDir: string, opts: JournalOptions = {}): Journal {
    return openDatabase(dataDir, opts.busyTimeoutMs, (db, dir) => new Journal(db, dir, opts));
  }

  // ---- sessions ----------------------------------------------------------------------------

  /** Inserts the session, or updates the fields given; fields left out keep their stored value. */
  upsertSession(input: SessionInput): SessionRecord {
    this.assertOpen();
    return this.rows.upsert(input);
  }

  /**
   * Inserts the session only when no row has its id or its name, in one IMMEDIATE transaction: of
   * two hosts adopting the same orphan at once, exactly one writes it. Returns the new record, or
   * undefined when a row was already there (left as it was).
   */
  insertSessionIfAbsent(input: SessionInput): SessionRecord | undefined {
    this.assertOpen();
    return this.rows.insertIfAbsent(input);
  }

  /** Updates some fields of a stored session (SESSION_NOT_FOUND if there is none). */
  updateSession(id: string, patch: SessionPatch): SessionRecord {
    this.assertOpen();
    return this.rows.update(id, patch);
  }

  /**
   * Updates some fields (not the name) of a stored session at the end of this turn, in the
   * transaction that writes the buffered events: a drive's verdict and its state event commit
   * together, with no transaction of their own each (session-rows.ts updateSoon). Values are
   * checked now; getSession and listSessions write it first.
   */
  updateSessionSoon(id: string, patch: SessionPatch): void {
    this.assertOpen();
    this.rows.updateSoon(id, patch);
  }

  /** The session's server is gone (or it was evicted): terminal, with a machine reason. */
  markFailed(id: string, reason: string): SessionRecord {
    return this.updateSession(id, { state: 'failed', failureReason: reason });
  }

  /**
   * A finished drive (exited or failed) gives up its name: its row, events, answered prompts and
   * incidents move to the id `r<sid>-<id>`, padded past 48 characters (longer than any drive
   * name). A new drive of the same
   * name starts with no history: an answered prompt belongs to the drive that answered it.
   * Returns the retired id.
   */
  retireSession(id: string): string {
    this.assertOpen();
    return this.rows.retire(id);
  }

  /** Deletes a finished drive (exited or failed) with its events, answered prompts and incidents. */
  forgetSession(id: string): void {
    this.assertOpen();
    this.rows.forget(id);
  }

  getSession(id: string): SessionRecord | undefined {
    this.assertOpen();
    return this.rows.get(id);
  }

  /** Sessions in creation order; `states` filters (NON_TERMINAL_STATES: what a new host reconciles). */
  listSessions(opts: { readonly states?: readonly JournalSessionState[] } = {}): SessionRecord[] {
    this.assertOpen();
    return this.rows.list(opts.states);
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
    const ref = this.rows.seqRef(sessionId);
    const seq = ref.last + 1;
    ref.last = seq;
    this.buffer.bufferEvent({ sid: ref.sid, seq, at: this.now(), kind, tags: encoded });
    return seq;
  }

  /**
   * Speaks for the session's seqs up to `upTo` (a host's transcript numbers its entries from the
   * same counter): written at once, so a host that takes over after a crash numbers above them.
   */
  reserveSeq(sessionId: string, upTo: number): void {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    this.rows.reserveSeq(sessionId, checkInteger('upTo', upTo, 0));
  }

  /** The last seq handed out for the session (0 before its first event). */
  lastSeq(sessionId: string): number {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    return this.rows.seqRef(sessionId).last;
  }

  /** Stored events of a session after `afterSeq`, in order (flushes the buffer first). */
  events(sessionId: string, opts: { readonly afterSeq?: number; readonly limit?: number } = {}): JournalEvent[] {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    const after = checkInteger('afterSeq', opts.afterSeq ?? 0, 0);
    const limit = checkInteger('limit', opts.limit ?? 1000, 1);
    this.buffer.flush();
    const { sid } = this.rows.seqRef(sessionId);
    return this.q.eventsAfter.all(sid, after, limit).map((r) => ({ sessionId, seq: r.seq, at: r.at, kind: r.kind, tags: decodeTags(r.tags) }));
  }

  /**
   * The first stored event of `kind` after `afterSeq`, and how far it looked (`throughSeq`: the
   * event's seq, or the last seq stored when it looked). Searched in SQL (no event read into
   * JavaScript on the way): a takeover looks for each drive's outcome among every event stored
   * since its standby started. The last seq is read first, so an event stored meanwhile is above
   * `throughSeq` and found by the next search (a session's seqs are stored in order).
   */
  firstEventOfKind(sessionId: string, kind: string, afterSeq = 0): { readonly throughSeq: number; readonly event?: JournalEvent } {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    checkKind('kind', kind);
    const after = checkInteger('afterSeq', afterSeq, 0);
    this.buffer.flush();
    const { sid } = this.rows.seqRef(sessionId);
    const last = this.q.lastStoredSeq.get(sid) ?? 0;
    const r = last > after ? this.q.firstEventOfKind.get(sid, after, last, kind) : undefined;
    if (!r) return { throughSeq: Math.max(after, last) };
    return { throughSeq: r.seq, event: { sessionId, seq: r.seq, at: r.at, kind: r.kind, tags: decodeTags(r.tags) } };
  }

  // ---- incidents ---------------------------------------------------------------------------

  /** Buffers an incident (a session's, or the host's when sessionId is null). */
  recordIncident(sessionId: string | null, kind: IncidentKind, tags?: MachineTags): void {
    this.assertOpen();
    if (sessionId !== null) checkSessionId('sessionId', sessionId);
    checkOneOf('kind', kind, INCIDENT_KINDS);
    const encoded = encodeTags(tags);
    const sid = sessionId === null ? null : this.rows.seqRef(sessionId).sid;
    this.buffer.bufferIncident({ sid, kind, at: this.now(), tags: encoded });
  }

  incidents(opts: { readonly sessionId?: string; readonly afterId?: number; readonly limit?: number } = {}): IncidentRecord[] {
    this.assertOpen();
    const after = checkInteger('afterId', opts.afterId ?? 0, 0);
    const limit = checkInteger('limit', opts.limit ?? 1000, 1);
    this.buffer.flush();
    const sid = opts.sessionId === undefined ? null : this.rows.seqRef(checkSessionId('sessionId', opts.sessionId)).sid;
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
    const { sid } = this.rows.seqRef(sessionId);
    return this.buffer.write(() => {
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
    const { sid } = this.rows.seqRef(sessionId);
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
    const lease = this.leases.acquire(sessionId, holder);
    // Another process may have appended since this one last looked: continue after its seqs.
    this.rows.forgetSeq(sessionId);
    return lease;
  }

  /**
   * acquireLease for many sessions in ONE IMMEDIATE transaction (a takeover takes every drive at
   * once): each id maps to its Lease, or to the LEASE_HELD error acquireLease would have thrown.
   */
  acquireLeases(sessionIds: readonly string[], holder: LeaseHolder): Map<string, Lease | LeaseError> {
    this.assertOpen();
    for (const id of sessionIds) checkSessionId('sessionIds', id);
    if (typeof holder !== 'object' || holder === null) reject('holder', holder, 'a lease holder { pid, startTime }');
    checkInteger('holder.pid', holder.pid, 1);
    checkInteger('holder.startTime', holder.startTime, 0);
    const leases = this.leases.acquireAll(sessionIds, holder);
    for (const id of sessionIds) this.rows.forgetSeq(id);
    return leases;
  }

  /** Throws LEASE_LOST unless `token` is the session's current, held token. Call before any input. */
  checkLease(sessionId: string, token: number): void {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    this.leases.check(sessionId, token);
  }

  /** Lets go of the lease if `token` is still current; returns whether it was. */
  releaseLease(sessionId: string, token: number): boolean {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    return this.leases.release(sessionId, token);
  }

  lease(sessionId: string): LeaseInfo | undefined {
    this.assertOpen();
    checkSessionId('sessionId', sessionId);
    return this.leases.info(sessionId);
  }

  // ---- upkeep ------------------------------------------------------------------------------

  /** Writes everything buffered now, in one transaction. Throws JOURNAL_WRITE_FAILED (rows kept). */
  flush(): void {
    this.assertOpen();
    this.buffer.flush();
  }

  /** `PRAGMA integrity_check` plus `foreign_key_check`: 'ok', or the problems found, one a line. */
  integrityCheck(): string {
    this.assertOpen();
    this.buffer.flush();
    const problems = (this.db.pragma('integrity_check') as { integrity_check: string }[]).map((r) => r.integrity_check).filter((r) => r !== 'ok');
    const orphans = this.db.pragma('foreign_key_check') as { table: string; rowid: number; parent: string }[];
    for (const o of orphans) problems.push(`${o.table} row ${o.rowid} references a missing ${o.parent} row`);
    return problems.length === 0 ? 'ok' : problems.join('\n');
  }

  stats(): JournalStats {
    return { ...this.buffer.stats(), leaseChecks: this.leases.checkStats() };
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
    this.buffer.stop();
    let failure: unknown;
    try {
      if (this.leases.holdsAny || this.buffer.hasPending) this.buffer.write(() => this.leases.releaseAllHeld(this.now()));
      this.leases.forgetAll();
    } catch (error) {
      failure = error;
    }
    this.closed = true;
    this.db.close();
    // Only now: closing the shm descriptor earlier would drop SQLite's locks on the file.
    if (typeof this.walIndex !== 'string') this.walIndex.release();
    if (failure !== undefined) throw failure;
  }

  [Symbol.dispose](): void {
    this.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new JournalError('JOURNAL_CLOSED', `the journal ${this.file} is closed`, { file: this.file });
  }

  private now(): number {
    return Math.floor(this.clock());
  }
}
