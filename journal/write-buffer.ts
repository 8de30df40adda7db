/**
 * The journal's writes. Events, incidents and session-row patches (a verdict's classification and
 * counts: updateSessionSoon) are buffered and written in one transaction at the end of the current
 * turn of the event loop (setImmediate, armed by the first append, never a timer loop), on flush()
 * and on close(). Every other write (sessions, answers, leases) runs
 * through `write()`, in the same IMMEDIATE transaction as whatever is buffered, so the file's
 * order is the call order; the buffer is cleared only once that transaction committed, so a
 * failed write loses nothing.
 */
import type Database from 'better-sqlite3';
import { JournalError } from './journal-error.js';
import { sqliteCode } from './open-database.js';
import type { IncidentKind, JournalStats } from './records.js';
import type { SessionColumns, Statements } from './statements.js';

/** A flood inside one tick is written in slices of this many rows: bounds memory and commit size. */
const MAX_PENDING = 10_000;

export interface PendingEvent {
  readonly sid: number;
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: string | null;
}

export interface PendingIncident {
  readonly sid: number | null;
  readonly kind: IncidentKind;
  readonly at: number;
  readonly tags: string | null;
}

/** Writes a buffered patch of session `id`'s row, inside the transaction. */
export type PatchWriter = (id: string, fields: Partial<SessionColumns>) => void;

export class WriteBuffer {
  private pendingEvents: PendingEvent[] = [];
  private pendingIncidents: PendingIncident[] = [];
  /** Session id → its fields patched this turn (later patches win field by field), in call order. */
  private pendingPatches = new Map<string, { fields: Partial<SessionColumns>; readonly write: PatchWriter }>();
  /** sid → highest seq in pendingEvents, written to sessions.last_seq in the same transaction. */
  private touched = new Map<number, number>();
  private scheduled: NodeJS.Immediate | undefined;
  private stopped = false;
  private readonly counters = { commits: 0, eventsWritten: 0, incidentsWritten: 0 };
  private lastError: string | null = null;
  private readonly tx: Database.Transaction<(work: () => unknown) => unknown>;

  constructor(
    db: Database.Database,
    private readonly q: Statements,
    /** A buffered write that failed at the end of a tick (the rows stay buffered). */
    private readonly onError: ((error: JournalError) => void) | undefined,
  ) {
    this.tx = db.transaction((work: () => unknown) => {
      for (const e of this.pendingEvents) this.q.insertEvent.run(e.sid, e.seq, e.at, e.kind, e.tags);
      for (const [sid, seq] of this.touched) this.q.bumpSeq.run(seq, sid);
      for (const i of this.pendingIncidents) this.q.insertIncident.run(i.sid, i.kind, i.at, i.tags);
      for (const [id, patch] of this.pendingPatches) patch.write(id, patch.fields);
      return work();
    });
  }

  get hasPending(): boolean {
    return this.pendingEvents.length > 0 || this.pendingIncidents.length > 0 || this.pendingPatches.size > 0;
  }

  get hasPendingPatches(): boolean {
    return this.pendingPatches.size > 0;
  }

  bufferEvent(event: PendingEvent): void {
    this.pendingEvents.push(event);
    this.touched.set(event.sid, event.seq);
    this.afterBuffering();
  }

  /** A patch of session `id`'s row, merged with any patch of it already buffered this turn. */
  bufferPatch(id: string, fields: Partial<SessionColumns>, write: PatchWriter): void {
    const pending = this.pendingPatches.get(id);
    if (pending) pending.fields = { ...pending.fields, ...fields };
    else this.pendingPatches.set(id, { fields, write });
    this.afterBuffering();
  }

  bufferIncident(incident: PendingIncident): void {
    this.pendingIncidents.push(incident);
    this.afterBuffering();
  }

  /** An incident `work` inserted itself (a lease takeover, decided inside its transaction). */
  countIncidentWritten(): void {
    this.counters.incidentsWritten++;
  }

  /**
   * Runs `work` in one IMMEDIATE transaction, after writing whatever is buffered. Throws
   * JOURNAL_WRITE_FAILED (rows kept) when SQLite fails; a JournalError from `work` passes as is.
   */
  write<T>(work: () => T): T {
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
    if (this.pendingPatches.size > 0) this.pendingPatches = new Map();
    return result;
  }

  /** Writes everything buffered now (nothing when the buffer is empty). */
  flush(): void {
    this.cancelScheduled();
    if (!this.hasPending) return;
    this.write(() => undefined);
  }

  /** The journal is closing: no end-of-tick write may run after this. */
  stop(): void {
    this.stopped = true;
    this.cancelScheduled();
  }

  stats(): Omit<JournalStats, 'leaseChecks'> {
    return { ...this.counters, pendingEvents: this.pendingEvents.length, pendingIncidents: this.pendingIncidents.length, lastError: this.lastError };
  }

  private afterBuffering(): void {
    // After a failed write, retry once a tick rather than on every append (a busy peer would
    // otherwise cost a busy_timeout per call).
    if (this.lastError === null && this.pendingEvents.length + this.pendingIncidents.length + this.pendingPatches.size >= MAX_PENDING) {
      this.autoFlush();
      return;
    }
    this.scheduled ??= setImmediate(() => {
      this.scheduled = undefined;
      this.autoFlush();
    });
  }

  private autoFlush(): void {
    if (this.stopped) return;
    try {
      this.flush();
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
}
