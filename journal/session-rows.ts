/**
 * The sessions table: every field checked to its machine shape before it reaches a column
 * (machine-values.ts), socket paths stored relative to the data dir, rows read back as records.
 * Also each session's event counter (the seq last handed out), kept in memory between writes.
 */
import { isAbsolute, join, resolve } from 'node:path';
import { JournalError } from './journal-error.js';
import { ALLOW_ID, checkHash, checkInteger, checkOneOf, checkSessionId, checkString, checkToken, reject } from './machine-values.js';
import {
  BACKENDS,
  CLASSIFIED_STATES,
  SESSION_STATES,
  type JournalSessionState,
  type SessionInput,
  type SessionPatch,
  type SessionRecord,
} from './records.js';
import type { SessionColumns, SessionRow, Statements } from './statements.js';
import type { WriteBuffer } from './write-buffer.js';
import { RETIRED_ID_MIN } from './machine-values.js';

/** sun_path is 108 bytes including the NUL: a longer socket path cannot exist. */
const MAX_SOCKET_PATH_BYTES = 107;
const SOCKET_PATH = /^[A-Za-z0-9._/-]+$/;


/** The in-memory view of a session's event counter: the seq last handed out. */
export interface SeqRef {
  readonly sid: number;
  last: number;
}

function notFound(id: string): JournalError {
  return new JournalError('SESSION_NOT_FOUND', `the journal has no session "${id}" (upsertSession first)`, { id });
}

export class SessionRows {
  private readonly seqs = new Map<string, SeqRef>();

  constructor(
    private readonly q: Statements,
    private readonly buffer: WriteBuffer,
    /** As the caller named it, and with symlinks resolved: a socket under either is stored relative. */
    private readonly dataDir: string,
    private readonly realDataDir: string,
    private readonly now: () => number,
  ) {}

  /** Inserts the session, or updates the fields given; fields left out keep their stored value. */
  upsert(input: SessionInput): SessionRecord {
    if (typeof input !== 'object' || input === null) reject('session', input, 'a session record');
    const id = checkSessionId('session.id', input.id);
    const fields = this.sessionFields(input);
    this.buffer.write(() => {
      this.assertNameFree(id, fields.name);
      const existing = this.q.sessionById.get(id);
      const at = this.now();
      if (existing) {
        this.q.updateSession.run({ ...columnsOf(existing), ...fields, id, updated_at: at });
        return;
      }
      this.insertRow(id, fields, input.createdAt, at);
    });
    return this.mustGet(id);
  }

  /** Inserts only when no row has the id or the name, in one IMMEDIATE transaction; undefined if one had. */
  insertIfAbsent(input: SessionInput): SessionRecord | undefined {
    if (typeof input !== 'object' || input === null) reject('session', input, 'a session record');
    const id = checkSessionId('session.id', input.id);
    const fields = this.sessionFields(input);
    const inserted = this.buffer.write(() => {
      if (this.q.sessionById.get(id) || (fields.name !== undefined && this.q.idByName.get(fields.name))) return false;
      this.insertRow(id, fields, input.createdAt, this.now());
      return true;
    });
    return inserted ? this.mustGet(id) : undefined;
  }

  /** Updates some fields of a stored session (SESSION_NOT_FOUND if there is none). */
  update(id: string, patch: SessionPatch): SessionRecord {
    checkSessionId('session.id', id);
    if (typeof patch !== 'object' || patch === null) reject('patch', patch, 'a session patch');
    const fields = this.sessionFields(patch);
    this.buffer.write(() => {
      this.assertNameFree(id, fields.name);
      const existing = this.q.sessionById.get(id);
      if (!existing) throw notFound(id);
      this.q.updateSession.run({ ...columnsOf(existing), ...fields, id, updated_at: this.now() });
    });
    return this.mustGet(id);
  }

  /**
   * Updates some fields of a stored session at the end of this turn, in the one transaction that
   * writes the buffered events (a verdict and its state event commit together), instead of a
   * transaction of its own now. Checked now (a bad value throws here); reads of sessions write it
   * first, so they see the call order. A row gone by then (pruned) is not written. No name: a name
   * is checked against the others' in its own transaction (update).
   */
  updateSoon(id: string, patch: SessionPatch): void {
    checkSessionId('session.id', id);
    if (typeof patch !== 'object' || patch === null) reject('patch', patch, 'a session patch');
    if (patch.name !== undefined) reject('patch.name', patch.name, 'no name (a rename is written at once: updateSession)');
    this.buffer.bufferPatch(id, this.sessionFields(patch), this.writePatch);
  }

  /**
   * A read sees the patches buffered before it (call order). When that write fails (a peer holds
   * the file past busy_timeout) the read still answers, from the file: the patches stay buffered,
   * and the end-of-turn write reports its failure (onError) as for events.
   */
  private writePatchesBeforeRead(): void {
    if (!this.buffer.hasPendingPatches) return;
    try {
      this.buffer.flush();
    } catch (error) {
      if (!(error instanceof JournalError) || error.code !== 'JOURNAL_WRITE_FAILED') throw error;
    }
  }

  private readonly writePatch = (id: string, fields: Partial<SessionColumns>): void => {
    const existing = this.q.sessionById.get(id);
    if (existing) this.q.updateSession.run({ ...columnsOf(existing), ...fields, id, updated_at: this.now() });
  };

  get(id: string): SessionRecord | undefined {
    checkSessionId('id', id);
    this.writePatchesBeforeRead();
    const row = this.q.sessionById.get(id);
    return row ? this.recordOf(row) : undefined;
  }

  list(states: readonly JournalSessionState[] | undefined): SessionRecord[] {
    const checked = states?.map((s, i) => checkOneOf(`states[${i}]`, s, SESSION_STATES));
    this.writePatchesBeforeRead();
    return this.q.allSessions
      .all()
      .filter((row) => !checked || checked.includes(row.state))
      .map((row) => this.recordOf(row));
  }

  /**
   * Moves a finished drive's row (its events, answered prompts and incidents with it) to the id
   * `r<sid>-<id>`, padded with `-` past 48 characters: longer than any drive name, unique by its
   * sid. Its name is free for a new drive, and its history stays its own. Returns the new id.
   */
  retire(id: string): string {
    checkSessionId('session.id', id);
    const retired = this.buffer.write(() => {
      const row = this.q.sessionById.get(id);
      if (!row) throw notFound(id);
      if (row.state === 'live' || row.state === 'detached') throw new JournalError('JOURNAL_BAD_VALUE', `session "${id}" is ${row.state}: only a finished drive is retired`, { id });
      const to = `r${row.sid}-${id}`.padEnd(RETIRED_ID_MIN, '-').slice(0, 64);
      this.q.renameSession.run(to, to, row.sid);
      return to;
    });
    this.seqs.delete(id);
    return retired;
  }

  /** Deletes a finished drive's row, events, answered prompts and incidents (prune). */
  forget(id: string): void {
    checkSessionId('session.id', id);
    this.buffer.write(() => {
      const row = this.q.sessionById.get(id);
      if (!row) return;
      if (row.state === 'live' || row.state === 'detached') throw new JournalError('JOURNAL_BAD_VALUE', `session "${id}" is ${row.state}: only a finished drive is forgotten`, { id });
      for (const del of [this.q.deleteEvents, this.q.deleteAnswers, this.q.deleteIncidents, this.q.deleteSession]) del.run(row.sid);
    });
    this.seqs.delete(id);
  }

  /** The session's event counter (SESSION_NOT_FOUND when the journal has no such session). */
  seqRef(sessionId: string): SeqRef {
    let ref = this.seqs.get(sessionId);
    if (!ref) {
      const row = this.q.seqOf.get(sessionId);
      if (!row) throw notFound(sessionId);
      ref = { sid: row.sid, last: row.last_seq };
      this.seqs.set(sessionId, ref);
    }
    return ref;
  }

  /**
   * Raises the session's counter to `upTo` now (written at once, not at the end of the tick): seqs
   * up to it are spoken for, and a later host, which numbers from the stored counter, never hands
   * one of them out again. Events appended after this get seqs above it.
   */
  reserveSeq(sessionId: string, upTo: number): void {
    const ref = this.seqRef(sessionId);
    if (upTo <= ref.last) return;
    this.q.bumpSeq.run(upTo, ref.sid);
    ref.last = upTo;
  }

  /** Another process may have appended since this one last looked: read the counter again next time. */
  forgetSeq(sessionId: string): void {
    this.seqs.delete(sessionId);
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

  /** Inside the data dir: stored relative (so the data dir's own name never constrains it). */
  private encodeSocket(path: unknown): string {
    if (typeof path !== 'string' || !isAbsolute(path)) reject('session.socketPath', path, 'an absolute path');
    const absolute = resolve(path);
    if (Buffer.byteLength(absolute) > MAX_SOCKET_PATH_BYTES) reject('session.socketPath', path, `a path of at most ${MAX_SOCKET_PATH_BYTES} bytes (sun_path)`);
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

function columnsOf(row: SessionRow): SessionColumns {
  const { sid: _sid, last_seq: _last, ...columns } = row;
  return columns;
}
