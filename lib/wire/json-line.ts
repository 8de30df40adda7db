/**
 * Newline-delimited JSON on a byte stream: the one decoder every surface uses (the host's socket,
 * its clients, the MCP server's stdio). Lines are framed on bytes, so a chunk may end anywhere (in
 * a line, in a UTF-8 character: 0x0A never occurs inside one); a trailing CR is dropped; empty and
 * blank lines are skipped. Bounded: a line is held in one buffer of at most `maxLineBytes` (a peer
 * that never sends a newline costs that much, never more), and a line past the limit is reported
 * the moment it passes it (its first bytes kept to find its id), the rest skipped to its newline.
 * Every line that is not a JSON value within the limits is a typed LineError, never a throw.
 */
import { HostError } from './host-error.js';

const NEWLINE = 0x0a;
const CR = 0x0d;
/** A line buffer past this is let go once its line is done: a big line does not pin its size. */
const KEEP_BUFFER_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/** Why a line was not a value: past the limit, not UTF-8, not JSON, nested too deep. */
export type LineFault = 'too_large' | 'not_utf8' | 'not_json' | 'too_deep';

/** A JSON-RPC id as MCP allows it (a string or an integer), or any other number a client used. */
export type ReadableId = string | number;

/** A line that is not a value, with the request id read from it when one could be (to answer it). */
export class LineError extends HostError {
  constructor(
    readonly fault: LineFault,
    message: string,
    /** The line's size; for `too_large`, the bytes seen when it passed the limit. */
    readonly bytes: number,
    readonly id: ReadableId | undefined,
  ) {
    super('PROTOCOL_ERROR', message, { fault, bytes });
  }
}

export interface LineFramerOptions {
  readonly maxLineBytes: number;
  /** Of a line past the limit, this many first bytes are kept for `onOversize`. */
  readonly headBytes: number;
  /** A complete line, without its newline (and without a trailing CR): valid during the call only. */
  readonly onLine: (line: Buffer) => void;
  /** A line passed the limit: its first bytes and the bytes seen so far. Its rest is skipped. */
  readonly onOversize: (head: Buffer, bytesSoFar: number) => void;
}

/** Lines out of chunks, bounded; the JSON layer is JsonLineDecoder below. */
export class LineFramer {
  /** The current line's bytes: one buffer, grown by doubling up to the limit. */
  private buf: Buffer = EMPTY;
  private len = 0;
  /** Set while the rest of a line past the limit is skipped. */
  private skipping = false;
  private skipped = 0;

  constructor(private readonly opts: LineFramerOptions) {}

  push(chunk: Uint8Array): void {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    let start = 0;
    while (start < bytes.length) {
      const nl = bytes.indexOf(NEWLINE, start);
      const end = nl < 0 ? bytes.length : nl;
      // The common case, a whole line in this chunk, is handed over without a copy.
      if (nl >= 0 && this.len === 0 && !this.skipping && end - start <= this.opts.maxLineBytes) this.emit(bytes.subarray(start, end));
      else {
        this.append(bytes.subarray(start, end));
        if (nl >= 0) this.endLine();
      }
      if (nl < 0) return;
      start = nl + 1;
    }
  }

  /** Bytes held for the current line (at most the limit; 0 while a line past it is skipped). */
  get heldBytes(): number {
    return this.buf.length;
  }

  /** Drops an unterminated last line; returns its size (0 when there was none). */
  end(): number {
    const size = this.skipping ? this.skipped : this.len;
    this.reset();
    return size;
  }

  private append(bytes: Buffer): void {
    if (bytes.length === 0) return;
    if (this.skipping) {
      this.skipped += bytes.length;
      return;
    }
    const need = this.len + bytes.length;
    if (need > this.opts.maxLineBytes) {
      const headLen = Math.min(this.opts.headBytes, need);
      const head = Buffer.allocUnsafe(headLen);
      const fromBuf = Math.min(this.len, headLen);
      this.buf.copy(head, 0, 0, fromBuf);
      bytes.copy(head, fromBuf, 0, headLen - fromBuf);
      this.buf = EMPTY;
      this.len = 0;
      this.skipping = true;
      this.skipped = need;
      this.opts.onOversize(head, need);
      return;
    }
    if (need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(this.opts.maxLineBytes, Math.max(need, this.buf.length * 2, 1024)));
      this.buf.copy(grown, 0, 0, this.len);
      this.buf = grown;
    }
    bytes.copy(this.buf, this.len);
    this.len = need;
  }

  private endLine(): void {
    if (this.skipping) {
      this.reset();
      return;
    }
    const line = this.buf.subarray(0, this.len);
    this.len = 0;
    if (this.buf.length > KEEP_BUFFER_BYTES) this.buf = EMPTY;
    this.emit(line);
  }

  private reset(): void {
    this.buf = EMPTY;
    this.len = 0;
    this.skipping = false;
    this.skipped = 0;
  }

  private emit(line: Buffer): void {
    this.opts.onLine(line.length > 0 && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line);
  }
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
const lossy = new TextDecoder('utf-8');

/** What one complete line holds: nothing (blank), a JSON value, or why it is not one. */
export type ParsedLine = { readonly kind: 'blank' } | { readonly kind: 'value'; readonly value: unknown } | { readonly kind: 'error'; readonly error: LineError };

function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (!WHITESPACE.has(text[i] as string)) return false;
  return true;
}

/** One complete line (no newline) as JSON: strict UTF-8, nesting bounded before parsing. Never throws. */
export function parseJsonLine(bytes: Uint8Array, maxDepth: number): ParsedLine {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { kind: 'error', error: new LineError('not_utf8', 'the line is not valid UTF-8', bytes.length, readIdLeniently(lossy.decode(bytes))) };
  }
  if (isBlank(text)) return { kind: 'blank' };
  if (nestingDepth(bytes, maxDepth) > maxDepth) return { kind: 'error', error: new LineError('too_deep', `nested deeper than ${maxDepth} levels`, bytes.length, readIdLeniently(text)) };
  try {
    return { kind: 'value', value: JSON.parse(text) as unknown };
  } catch {
    return { kind: 'error', error: new LineError('not_json', 'the line is not valid JSON', bytes.length, readIdLeniently(text)) };
  }
}

/** The LineError of a line past the limit, from its first bytes (the id, when they hold it). */
export function oversizeLineError(head: Uint8Array, bytesSoFar: number, maxLineBytes: number): LineError {
  return new LineError('too_large', `line too large (over ${maxLineBytes} bytes)`, bytesSoFar, readIdLeniently(lossy.decode(head)));
}

export interface JsonLineDecoderOptions {
  readonly maxLineBytes: number;
  readonly maxDepth: number;
  /** Of a line past the limit, this many first bytes are read for its id (default 64 KiB). */
  readonly headBytes?: number;
  readonly onValue: (value: unknown, bytes: number) => void;
  /**
   * A line that is not a value. `too_large` comes as soon as the line passes the limit (the
   * caller may end the connection then; if it does not, the rest of the line is skipped).
   */
  readonly onError: (error: LineError) => void;
}

/** Newline-delimited JSON values out of byte chunks: the framer, then parseJsonLine per line. */
export class JsonLineDecoder {
  private readonly framer: LineFramer;

  constructor(opts: JsonLineDecoderOptions) {
    this.framer = new LineFramer({
      maxLineBytes: opts.maxLineBytes,
      headBytes: opts.headBytes ?? 64 * 1024,
      onLine: (line) => {
        const parsed = parseJsonLine(line, opts.maxDepth);
        if (parsed.kind === 'value') opts.onValue(parsed.value, line.length);
        else if (parsed.kind === 'error') opts.onError(parsed.error);
      },
      onOversize: (head, bytesSoFar) => opts.onError(oversizeLineError(head, bytesSoFar, opts.maxLineBytes)),
    });
  }

  push(chunk: Uint8Array): void {
    this.framer.push(chunk);
  }

  /** Bytes held for an unfinished line (bounded by maxLineBytes). */
  get heldBytes(): number {
    return this.framer.heldBytes;
  }

  /** The stream ended: an unterminated last line is dropped; returns its size (0 when none). */
  end(): number {
    return this.framer.end();
  }
}

/** Deepest nesting of arrays and objects outside strings; stops counting past `limit`. */
export function nestingDepth(bytes: Uint8Array, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++; // backslash: the next byte is escaped
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x5b || b === 0x7b) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return deepest;
      }
    } else if (b === 0x5d || b === 0x7d) depth--;
  }
  return deepest;
}

function readableId(v: unknown): ReadableId | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  return undefined;
}

const WHITESPACE = new Set([' ', '\t', '\n', '\r']);

function skipWhitespace(text: string, i: number): number {
  while (i < text.length && WHITESPACE.has(text[i] as string)) i++;
  return i;
}

/** Index of the closing quote of the string opening at `i`, or -1 when it does not end. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    const c = text[j];
    if (c === '\\') j++;
    else if (c === '"') return j;
  }
  return -1;
}

/** Index just after the value starting at `i`, or -1 when it does not end in `text`. */
function skipValue(text: string, i: number): number {
  const c = text[i];
  if (c === '"') {
    const end = stringEnd(text, i);
    return end < 0 ? -1 : end + 1;
  }
  if (c === '{' || c === '[') {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j);
        if (j < 0) return -1;
      } else if (d === '{' || d === '[') depth++;
      else if (d === '}' || d === ']') {
        depth--;
        if (depth === 0) return j + 1;
      }
    }
    return -1;
  }
  let j = i;
  while (j < text.length && !WHITESPACE.has(text[j] as string) && text[j] !== ',' && text[j] !== '}' && text[j] !== ']') j++;
  return j === i || j === text.length ? -1 : j;
}

const NUMBER = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/;

/**
 * The `id` member of a top-level object, read without parsing the rest: for a line that is cut
 * off, badly encoded or malformed after its id. Only a complete string or number followed by a
 * delimiter counts (a number at the very end may have been cut). Linear in the text.
 */
export function readIdLeniently(text: string): ReadableId | undefined {
  let i = skipWhitespace(text, 0);
  if (text[i] !== '{') return undefined;
  i++;
  for (;;) {
    i = skipWhitespace(text, i);
    if (text[i] !== '"') return undefined;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    let key: unknown;
    try {
      key = JSON.parse(text.slice(i, keyEnd + 1));
    } catch {
      return undefined;
    }
    i = skipWhitespace(text, keyEnd + 1);
    if (text[i] !== ':') return undefined;
    i = skipWhitespace(text, i + 1);
    if (key === 'id') {
      if (text[i] === '"') {
        const end = stringEnd(text, i);
        if (end < 0) return undefined;
        try {
          return JSON.parse(text.slice(i, end + 1)) as string;
        } catch {
          return undefined;
        }
      }
      const m = NUMBER.exec(text.slice(i, i + 64));
      if (!m) return undefined;
      const after = text[i + m[0].length];
      if (after === undefined || !(WHITESPACE.has(after) || after === ',' || after === '}')) return undefined;
      return readableId(Number(m[0]));
    }
    i = skipValue(text, i);
    if (i < 0) return undefined;
    i = skipWhitespace(text, i);
    if (text[i] !== ',') return undefined;
    i++;
  }
}
