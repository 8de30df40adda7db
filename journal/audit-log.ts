/**
 * The audit log: what was done to each drive, beside the journal, as `<dataDir>/audit.jsonl`. One
 * JSON object per line, appended through an O_APPEND descriptor (0600) and never rewritten or
 * truncated, so a record once written stays where it is, and records of several processes sharing
 * the data dir interleave whole lines.
 *
 * Unlike the journal it holds content: what a caller typed or pressed. The caller redacts the
 * payload before it gets here (lib/policy/redact.ts); this module only bounds and writes it.
 */
import { closeSync, constants, fchmodSync, fstatSync, mkdirSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { JournalError } from './journal-error.js';

export const AUDIT_FILE = 'audit.jsonl';

/** `call`: a call through the serving host's gate (its verb, the token's id, how it ended; no payload). */
export const AUDIT_KINDS = ['sendText', 'sendKeys', 'create', 'kill', 'signal', 'resize', 'call'] as const;
export type AuditKind = (typeof AUDIT_KINDS)[number];

/** Machine details of an action: `{ paste: true, submit: false }`, `{ cols: 80, rows: 24 }`. */
export type AuditTags = Readonly<Record<string, string | number | boolean>>;

export interface AuditEntry {
  /** null: a call about no one drive (list, mint, revoke, hello). */
  readonly sessionId: string | null;
  readonly kind: AuditKind;
  /** What was sent (text, key names, the argv of a create), already redacted by the caller. */
  readonly payload: string;
  readonly tags?: AuditTags;
}

/** One line of the log as written and as read back. */
export interface AuditRecord {
  /** ISO 8601, UTC, milliseconds. */
  readonly time: string;
  readonly sessionId: string | null;
  readonly kind: AuditKind;
  readonly payload: string;
  readonly tags: AuditTags;
}

export interface AuditLogOptions {
  /** Wall-clock milliseconds since the epoch (default Date.now). */
  readonly now?: () => number;
  /** Longer payloads are cut to this many characters, with `payloadChars` and `truncated` tags. */
  readonly maxPayloadChars?: number;
  /**
   * Leave a torn last line to `endTornLine()` (a standby opens the log while another process still
   * appends to it: that writer's line may be in the middle of its write).
   */
  readonly deferTornLine?: boolean;
}

const enum Limits {
  /** A paste of a whole file is kept in full up to 64 Ki characters; beyond that a line would dwarf the rest of the log. */
  MaxPayloadChars = 65_536,
  /** Tags are a few machine details, not a second payload. */
  MaxTags = 16,
  MaxTagChars = 256,
}

/** As the journal spells session ids (they are also tmux session and socket names). */
const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const TAG_KEY = /^[A-Za-z][A-Za-z0-9_]{0,31}$/;
const KINDS: ReadonlySet<string> = new Set(AUDIT_KINDS);
/** Owner read/write only: payloads are what callers typed. */
const FILE_MODE = 0o600;
const DIR_MODE = 0o700;

function bad(field: string, rule: string): never {
  // Never the value: a rejected payload or tag may be exactly what must not leak.
  throw new JournalError('JOURNAL_BAD_VALUE', `audit: ${field} must be ${rule}`, { field, rule });
}

function checkTags(tags: unknown): AuditTags {
  if (tags === undefined) return {};
  if (typeof tags !== 'object' || tags === null || Array.isArray(tags)) bad('tags', 'an object of machine values');
  const entries = Object.entries(tags);
  if (entries.length > Limits.MaxTags) bad('tags', `at most ${Limits.MaxTags} entries`);
  for (const [k, v] of entries) {
    if (!TAG_KEY.test(k)) bad(`tags key`, 'a name ([A-Za-z][A-Za-z0-9_]{0,31})');
    const ok = typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && v.length <= Limits.MaxTagChars);
    if (!ok) bad(`tags.${k}`, `a boolean, a finite number or a string of at most ${Limits.MaxTagChars} characters`);
  }
  return tags as AuditTags;
}

function writeRest(fd: number, line: Buffer, from: number): void {
  let written = from;
  while (written < line.length) written += writeSync(fd, line, written, line.length - written);
}

export class AuditLog {
  private fd: number | undefined;
  /** The session id checked last and its JSON: one drive's keys come one after another. */
  private lastSessionId: string | undefined;
  private lastSessionIdJson = '';
  /** Frozen tags (the keystroke path's constants) cannot change: each is checked and spelled once. */
  private readonly frozenTagsJson = new WeakMap<object, string>();
  /** The ISO time's first 20 characters for the second `isoSecond`: a key's time is that and its milliseconds. */
  private isoSecond = Number.NaN;
  private isoPrefix = '';

  private constructor(
    fd: number,
    readonly path: string,
    private readonly now: () => number,
    private readonly maxPayloadChars: number,
  ) {
    this.fd = fd;
  }

  /**
   * Opens (creating when absent) `<dataDir>/audit.jsonl` for appending. A symlink in its place is
   * refused, and an existing file is brought back to 0600.
   */
  static open(dataDir: string, opts: AuditLogOptions = {}): AuditLog {
    const max = opts.maxPayloadChars ?? Limits.MaxPayloadChars;
    if (!Number.isInteger(max) || max < 1) throw new JournalError('JOURNAL_BAD_VALUE', 'audit: maxPayloadChars must be a positive integer', { field: 'maxPayloadChars' });
    const path = join(dataDir, AUDIT_FILE);
    let fd: number;
    try {
      mkdirSync(dataDir, { recursive: true, mode: DIR_MODE });
      fd = openSync(path, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, FILE_MODE); // libuv adds O_CLOEXEC
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new JournalError('JOURNAL_UNREADABLE', `audit: cannot open ${path} for appending (${code ?? 'error'})${code === 'ELOOP' ? ': it is a symlink' : ''}`, { path, errno: code }, { cause: err });
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw new JournalError('JOURNAL_UNREADABLE', `audit: ${path} is not a regular file`, { path });
      if ((st.mode & 0o777) !== FILE_MODE) fchmodSync(fd, FILE_MODE);
      if (!opts.deferTornLine) endTornLineOf(fd);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return new AuditLog(fd, path, opts.now ?? Date.now, max);
  }

  /** Appends one record. Synchronous: when it returns, the line is in the file (not fsync'd). */
  record(entry: AuditEntry): void {
    if (typeof entry !== 'object' || entry === null) bad('entry', 'an object');
    this.append(this.sessionIdJson(entry.sessionId), entry.kind, entry.payload, entry.tags);
  }

  private sessionIdJson(sessionId: string | null): string {
    if (sessionId === null) return 'null';
    if (sessionId === this.lastSessionId) return this.lastSessionIdJson;
    if (typeof sessionId !== 'string' || !SESSION_ID.test(sessionId)) bad('sessionId', 'a session id ([A-Za-z0-9][A-Za-z0-9_-]{0,63})');
    this.lastSessionId = sessionId;
    this.lastSessionIdJson = JSON.stringify(sessionId);
    return this.lastSessionIdJson;
  }

  /** Checked tags as JSON: `{}` when there are none (JSON.stringify keeps the caller's key order). */
  private tagsJson(tags: unknown): string {
    if (tags === undefined) return '{}';
    if (typeof tags !== 'object' || tags === null || !Object.isFrozen(tags)) return JSON.stringify(checkTags(tags));
    let json = this.frozenTagsJson.get(tags);
    if (json !== undefined) return json;
    json = JSON.stringify(checkTags(tags));
    // A getter could answer differently next time: only data properties are kept.
    if (Object.values(Object.getOwnPropertyDescriptors(tags)).every((d) => 'value' in d)) this.frozenTagsJson.set(tags, json);
    return json;
  }

  /** `new Date(ms).toISOString()`, without a Date per record within one second. */
  private isoTime(ms: number): string {
    // Date truncates a fractional time toward zero; a negative or huge one takes the full path.
    const whole = Math.trunc(ms);
    const second = Math.floor(whole / 1000);
    if (second === this.isoSecond) {
      const milli = whole - second * 1000;
      return `${this.isoPrefix}${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
    }
    const iso = new Date(ms).toISOString();
    if (whole >= 0 && iso.length === 24) {
      this.isoSecond = second;
      this.isoPrefix = iso.slice(0, 20);
    }
    return iso;
  }

  /**
   * The line, built as JSON.stringify of an AuditRecord would spell it (the same keys in the same
   * order), from the pieces that vary; written as a string, so no Buffer is made per record.
   */
  private append(sessionIdJson: string, kind: AuditKind, payload: string, tags: AuditTags | undefined): void {
    const fd = this.fd;
    if (fd === undefined) throw new JournalError('JOURNAL_CLOSED', 'audit: the log was closed', { path: this.path });
    if (!KINDS.has(kind)) bad('kind', `one of ${AUDIT_KINDS.join(', ')}`);
    if (typeof payload !== 'string') bad('payload', 'a string');
    let tagsJson = this.tagsJson(tags);
    if (payload.length > this.maxPayloadChars) {
      tagsJson = this.tagsJson({ ...checkTags(tags), payloadChars: payload.length, truncated: true });
      payload = payload.slice(0, this.maxPayloadChars);
    }
    // JSON escapes every line break inside strings, so a record is exactly one line.
    const line = `{"time":"${this.isoTime(this.now())}","sessionId":${sessionIdJson},"kind":"${kind}","payload":${JSON.stringify(payload)},"tags":${tagsJson}}\n`;
    try {
      // One write(2) per line: with O_APPEND it lands whole at the end. A short write (a full disk)
      // continues where it stopped.
      const written = writeSync(fd, line);
      if (written < Buffer.byteLength(line)) writeRest(fd, Buffer.from(line, 'utf8'), written);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new JournalError('JOURNAL_WRITE_FAILED', `audit: appending to ${this.path} failed (${code ?? 'error'})`, { path: this.path, errno: code }, { cause: err });
    }
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  /** Ends a last line left without its newline (see open; for a log opened with `deferTornLine`). */
  endTornLine(): void {
    if (this.fd !== undefined) endTornLineOf(this.fd);
  }

  /** Idempotent. */
  close(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }

  [Symbol.dispose](): void {
    this.close();
  }
}

/**
 * A crash mid-write leaves a last line without its newline: end it, so the next record starts a
 * line of its own (the fragment stays, as readAudit reports it).
 */
function endTornLineOf(fd: number): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) writeSync(fd, '\n');
}

function isRecord(v: unknown): v is AuditRecord {
  if (typeof v !== 'object' || v === null) return false;
  const r = v as Record<string, unknown>;
  return (
    typeof r.time === 'string' &&
    (typeof r.sessionId === 'string' || r.sessionId === null) &&
    typeof r.kind === 'string' &&
    KINDS.has(r.kind) &&
    typeof r.payload === 'string' &&
    typeof r.tags === 'object' &&
    r.tags !== null &&
    !Array.isArray(r.tags)
  );
}

export interface ReadAuditOptions {
  /** Only this session's records. */
  readonly sessionId?: string;
  /**
   * Called with the (1-based) number of each complete line that is not a record, which is then
   * skipped; without it such a line is an error. A fragment left by a crash mid-write is one.
   */
  readonly onMalformed?: (line: number) => void;
}

/**
 * Every record of `<dataDir>/audit.jsonl`, oldest first; none when the file does not exist. A last
 * line without its newline is a write still in progress or cut short, and is left out. Any other
 * line that is not a record is an error naming its line number (the log is append-only: it is a
 * crash's fragment, or the file was tampered with) unless `onMalformed` takes it.
 */
export function readAudit(dataDir: string, opts: ReadAuditOptions = {}): AuditRecord[] {
  const path = join(dataDir, AUDIT_FILE);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new JournalError('JOURNAL_UNREADABLE', `audit: cannot read ${path}`, { path, errno: (err as NodeJS.ErrnoException).code }, { cause: err });
  }
  const lines = text.split('\n');
  lines.pop(); // after the last newline: empty, or a write in progress
  const out: AuditRecord[] = [];
  lines.forEach((line, i) => {
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    if (!isRecord(parsed)) {
      if (!opts.onMalformed) throw new JournalError('JOURNAL_UNREADABLE', `audit: line ${i + 1} of ${path} is not an audit record`, { path, line: i + 1 });
      opts.onMalformed(i + 1);
      return;
    }
    if (opts.sessionId === undefined || parsed.sessionId === opts.sessionId) out.push(parsed);
  });
  return out;
}
