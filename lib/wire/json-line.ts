/**
 * Newline-delimited JSON on a byte stream, bounded: lines are framed on bytes (a chunk may end
 * inside a UTF-8 character or a line), a line past the limit is never buffered whole (its first
 * bytes are kept to find its id, the rest skipped to its newline), and the helpers that read an
 * id out of a line that is not valid JSON. Pure; never throws on input.
 */

const NEWLINE = 0x0a;
const CR = 0x0d;

export interface LineFramerOptions {
  readonly maxLineBytes: number;
  /** Of a line past the limit, this many first bytes are kept for `onOversize`. */
  readonly headBytes: number;
  /** A complete line, without its newline (and without a trailing CR). */
  readonly onLine: (line: Buffer) => void;
  /** A complete line that was too long: its first bytes and its whole size. */
  readonly onOversize: (head: Buffer, totalBytes: number) => void;
}

export class LineFramer {
  /** The current line's bytes so far (while it is within the limit). */
  private parts: Buffer[] = [];
  private size = 0;
  /** Set once the current line passed the limit: its first bytes. */
  private head: Buffer | undefined;

  constructor(private readonly opts: LineFramerOptions) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (let nl = chunk.indexOf(NEWLINE, start); nl >= 0; nl = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < chunk.length) this.take(chunk.subarray(start));
  }

  /** Drops an unterminated last line; returns its size (0 when there was none). */
  end(): number {
    const size = this.size;
    this.parts = [];
    this.size = 0;
    this.head = undefined;
    return size;
  }

  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.head) return;
    this.parts.push(bytes);
    if (this.size > this.opts.maxLineBytes) {
      const whole = Buffer.concat(this.parts);
      this.head = Buffer.from(whole.subarray(0, this.opts.headBytes));
      this.parts = [];
    }
  }

  private endLine(): void {
    const size = this.size;
    const head = this.head;
    const parts = this.parts;
    this.parts = [];
    this.size = 0;
    this.head = undefined;
    if (head) {
      this.opts.onOversize(head, size);
      return;
    }
    let line = parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts, size);
    if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
    this.opts.onLine(line);
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

/** A JSON-RPC id as MCP allows it (a string or an integer), or any other number a client used. */
export type ReadableId = string | number;

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
