/**
 * The control-mode protocol as a pure state machine: stdout bytes in, typed events out. It never
 * throws on input: anything it cannot make sense of becomes an `unknown`, `stray` or `incident`
 * event, so a newer tmux, a hook's stray output or a corrupted stream is surfaced, not fatal.
 *
 * Guarantees (see docs/protocol.md):
 * - A `%begin t n f` block ends ONLY on the exact `%end t n f` / `%error t n f` line. Reply lines
 *   are raw (unescaped) and may imitate anything, so every line inside a block is content: another
 *   block's guard, `%begin`, `%output %N …` and `%exit` included (a block never gives them up: a
 *   screen can show them, and a program must not inject pane bytes or end the stream that way).
 *   The one exception is below. tmux 3.3a writes pane output and `%exit` between commands; a real
 *   `%exit` inside a block is followed by EOF, and `end()` reports the open block.
 * - The guard alone is guessable (a clock second, a server-wide counter), so a block whose content
 *   is pane text is framed by its size, known before it arrives (`BlockFraming`): the guard closes
 *   it only where that content ends, and must come exactly there. Anything else is a
 *   `framing-mismatch`: the stream can no longer be trusted, and the parser interprets nothing more
 *   (the owner replaces the channel).
 * - Inside a block of tmux's own text, `%pause` and `%continue` lines are dispatched as
 *   notifications: tmux 3.3a writes them between the `%begin` and `%end` of `refresh-client -A`.
 * - Blocks whose flags lack bit 0 did not come from this client's stdin (the attach command of the
 *   command line, hooks): they become `foreign-block` events and never reach the command queue.
 * - Pane output stays bytes; only short header fields are decoded to strings.
 */
import { OctalDecoder } from './octal.js';
import { LineSplitter } from './line-splitter.js';
import { isNotificationName, parseNotification, type Notification } from './notifications.js';
import type { PaneId } from './ids.js';
import { decodeUtf8 } from './utf8.js';

export type { PaneId, WindowId, SessionId } from './ids.js';
export type { Notification, NotificationName } from './notifications.js';

/**
 * A single line longer than this is dropped and reported. 3.3a's `%output` lines stay under ~11 KB
 * (2730 raw bytes, 4x for escapes) and replies are split per line, so only a broken stream gets
 * near it; the cap bounds the memory such a stream can take.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

export interface OutputEvent {
  readonly kind: 'output';
  readonly pane: PaneId;
  /** The bytes the program wrote, octal escapes decoded. May end inside a UTF-8 sequence. */
  readonly data: Uint8Array;
  /** `%extended-output` only: how long tmux held the data before sending it. */
  readonly ageMs?: number;
}

/** A block answering one command from this client (flags bit 0 set). */
export interface ReplyEvent {
  readonly kind: 'reply';
  /** false for `%error`; the error text is in `lines`. */
  readonly ok: boolean;
  readonly time: number;
  readonly number: number;
  /** Raw, unescaped lines: they can hold ESC bytes or text that looks like protocol. */
  readonly lines: Uint8Array[];
}

/** A block this client did not ask for (flags bit 0 clear), e.g. the initial `%begin … 0` of attach. */
export interface ForeignBlockEvent {
  readonly kind: 'foreign-block';
  readonly ok: boolean;
  readonly time: number;
  readonly number: number;
  readonly flags: number;
  readonly lines: Uint8Array[];
}

/** A `%word` line this parser does not know (a newer tmux); tolerated and surfaced. */
export interface UnknownEvent {
  readonly kind: 'unknown';
  readonly line: Uint8Array;
}

/** A non-`%` line outside any block, e.g. `display-message -p` run by a hook with no client. */
export interface StrayEvent {
  readonly kind: 'stray';
  readonly line: Uint8Array;
}

export type IncidentCode =
  /** A known line whose fields do not parse (`%output` without a pane, `%begin x`). */
  | 'malformed-line'
  /** `%end`/`%error` with no block open. */
  | 'orphan-end'
  /** A block still open when the stream ended (a `%exit` inside it was content); `line` is its `%begin`. */
  | 'unterminated-block'
  /** A line over the length cap; `line` holds its first bytes. */
  | 'line-too-long'
  /**
   * A framed block's content ended and the next line was not its guard; `line` is that line. The
   * parser stops interpreting the stream (see BlockFraming).
   */
  | 'framing-mismatch'
  /**
   * Framed pane text held a line equal to the block's own guard: a program printed it (it was
   * taken as content, as it is). Worth knowing; nothing was trusted.
   */
  | 'guard-in-content';

export interface IncidentEvent {
  readonly kind: 'incident';
  readonly code: IncidentCode;
  readonly line: Uint8Array;
  readonly detail: string;
}

export type ControlEvent = OutputEvent | ReplyEvent | ForeignBlockEvent | Notification | UnknownEvent | StrayEvent | IncidentEvent;

/**
 * How the end of a reply block is found.
 * - `guard`: tmux's own text (numbers, ids, fixed formats, error messages): the exact guard ends it.
 * - `text`: pane text, `bytes` long as tmux holds it in a paste buffer (each line with its LF). tmux
 *   writes it with a LF added when it lacks a final one, so the content is at least one line and
 *   ends at the first line end at or after `bytes`; the guard must follow there.
 * - `lines`: exactly `count` lines, then the guard.
 * A program can print a line equal to the guard, but it cannot change where its text ends.
 */
export type BlockFraming = { readonly kind: 'guard' } | { readonly kind: 'text'; readonly bytes: number } | { readonly kind: 'lines'; readonly count: number };

export const GUARD_FRAMING: BlockFraming = Object.freeze({ kind: 'guard' });
/** For a framing that cannot be worked out: one line at most, so a longer reply is a mismatch, never trusted. */
const STRICTEST: BlockFraming = Object.freeze({ kind: 'lines', count: 1 });

export interface ControlParserOptions {
  readonly maxLineBytes?: number;
  /**
   * The framing of the reply block that just began (flags bit 0 set: one of this client's
   * commands, in order). Absent: every block is `guard`-framed.
   */
  readonly replyFraming?: () => BlockFraming;
}

const SPACE = 0x20;
const PERCENT = 0x25;
const COLON = 0x3a;

function ascii(s: string): Uint8Array {
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

const OUTPUT = ascii('%output ');
const EXTENDED_OUTPUT = ascii('%extended-output ');
const BEGIN = ascii('%begin ');
const END = ascii('%end ');
const ERROR = ascii('%error ');
/**
 * Lines routed as notifications even inside a block of tmux's own text (guard framing; framed pane
 * text routes nothing): tmux 3.3a writes %pause/%continue inside the
 * `refresh-client -A` reply. Nothing else is taken out of a block: reply lines are raw screen text
 * (capture-pane), and a program that prints `%output %0 …` or `%exit` must not be able to inject
 * pane bytes or end the stream. A real %exit mid-block is followed by EOF, which end() reports.
 */
const IN_BLOCK = [ascii('%pause '), ascii('%continue ')];

function startsWith(line: Uint8Array, prefix: Uint8Array, at = 0): boolean {
  if (line.length < at + prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (line[at + i] !== prefix[i]) return false;
  return true;
}

/** Longest decimal field accepted; keeps every value an exact JS number. */
const MAX_DIGITS = 15;

/** Parses decimal digits in [start, end); -1 when empty, too long or not all digits. */
function parseDigits(line: Uint8Array, start: number, end: number): number {
  if (end <= start || end - start > MAX_DIGITS) return -1;
  let n = 0;
  for (let i = start; i < end; i++) {
    const d = (line[i] ?? 0) - 0x30;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/** End of the space-delimited field starting at `at`. */
function fieldEnd(line: Uint8Array, at: number): number {
  const space = line.indexOf(SPACE, at);
  return space < 0 ? line.length : space;
}

/** Reads `%<digits>` at `at`; returns the pane and the index after it, or undefined. */
function paneAt(line: Uint8Array, at: number): [PaneId, number] | undefined {
  if (line[at] !== PERCENT) return undefined;
  const end = fieldEnd(line, at);
  const n = parseDigits(line, at + 1, end);
  if (n < 0) return undefined;
  // Built from the number, not decoded: this runs for every %output line (a TextDecoder call each
  // cost ~5 ms per MB of bulk output). A leading zero (tmux writes none) keeps its spelling.
  return [(line[at + 1] === 0x30 && end - at > 2 ? decodeUtf8(line.subarray(at, end)) : `%${n}`) as PaneId, end];
}

/** Index just after the first ` : ` (or a final ` :`) at or after `from`, or -1. */
function afterValueSeparator(line: Uint8Array, from: number): number {
  for (let i = line.indexOf(COLON, from); i >= 0; i = line.indexOf(COLON, i + 1)) {
    if (line[i - 1] !== SPACE) continue;
    if (i + 1 === line.length) return line.length;
    if (line[i + 1] === SPACE) return i + 2;
  }
  return -1;
}

interface OpenBlock {
  readonly begin: Uint8Array;
  /** `t n f` exactly as written after `%begin `; the closing line must repeat it byte for byte. */
  readonly guard: Uint8Array;
  readonly time: number;
  readonly number: number;
  readonly flags: number;
  readonly lines: Uint8Array[];
  readonly framing: BlockFraming;
  /** Content bytes so far, each line with its LF (framing `text`). */
  bytes: number;
  /** The content is complete: the next line must be the guard (framings `text` and `lines`). */
  complete: boolean;
}

function checkedFraming(framing: BlockFraming | undefined): BlockFraming {
  if (!framing || typeof framing !== 'object') return STRICTEST;
  if (framing.kind === 'guard') return framing;
  if (framing.kind === 'text' && Number.isSafeInteger(framing.bytes) && framing.bytes >= 0) return framing;
  if (framing.kind === 'lines' && Number.isSafeInteger(framing.count) && framing.count >= 0) return framing;
  return STRICTEST;
}

export class ControlParser {
  readonly #emit: (event: ControlEvent) => void;
  readonly #splitter: LineSplitter;
  /** Output payloads are carved from its slab: one allocation per few dozen lines, not per line. */
  readonly #octal = new OctalDecoder();
  readonly #replyFraming: (() => BlockFraming) | undefined;
  #block: OpenBlock | undefined;
  /** After a framing mismatch nothing more is interpreted: the stream is not trusted. */
  #untrusted = false;

  /** `onEvent` must not throw: an exception escapes push() and the rest of that chunk is lost. */
  constructor(onEvent: (event: ControlEvent) => void, options: ControlParserOptions = {}) {
    this.#emit = onEvent;
    this.#replyFraming = options.replyFraming;
    this.#splitter = new LineSplitter((line, strippedCr) => this.#line(line, strippedCr), {
      maxLineBytes: options.maxLineBytes ?? MAX_LINE_BYTES,
      onOverflow: (head, dropped) => this.#incident('line-too-long', head, `a line of ${dropped} bytes was dropped`),
    });
  }

  push(chunk: Uint8Array): void {
    this.#splitter.push(chunk);
  }

  /** The stream ended (stdout EOF): flushes the last line and reports a block left open. */
  end(): void {
    this.#splitter.end();
    if (!this.#untrusted) this.#abandonBlock('the stream ended inside a reply block');
  }

  /** True once a framing mismatch was seen: every later line is dropped uninterpreted. */
  get untrusted(): boolean {
    return this.#untrusted;
  }

  #line(line: Uint8Array, strippedCr: boolean): void {
    if (this.#untrusted) return;
    const block = this.#block;
    if (block && block.framing.kind !== 'guard') return this.#framedLine(block, line, strippedCr);
    if (block) {
      if (this.#closes(block, line)) return;
      if (!IN_BLOCK.some((prefix) => startsWith(line, prefix))) {
        block.lines.push(line.slice());
        return;
      }
    }
    if (line[0] !== PERCENT) this.#emit({ kind: 'stray', line: line.slice() });
    else if (startsWith(line, OUTPUT)) this.#output(line);
    else if (startsWith(line, EXTENDED_OUTPUT)) this.#extendedOutput(line);
    else if (startsWith(line, BEGIN)) this.#begin(line);
    else if (startsWith(line, END) || startsWith(line, ERROR)) this.#incident('orphan-end', line, 'no reply block is open');
    else this.#notification(line);
  }

  #output(line: Uint8Array): void {
    const pane = paneAt(line, OUTPUT.length);
    if (!pane) return this.#incident('malformed-line', line, '%output without a pane id');
    const [id, end] = pane;
    this.#emit({ kind: 'output', pane: id, data: this.#octal.decode(line, Math.min(end + 1, line.length)) });
  }

  #extendedOutput(line: Uint8Array): void {
    // `%extended-output %N <age> [reserved…] : <escaped>`; skip to the first ` : `.
    const pane = paneAt(line, EXTENDED_OUTPUT.length);
    const payload = pane ? afterValueSeparator(line, pane[1]) : -1;
    if (!pane || payload < 0) return this.#incident('malformed-line', line, '%extended-output without a pane id or " : "');
    const ageStart = pane[1] + 1;
    const age = parseDigits(line, ageStart, fieldEnd(line, ageStart));
    const data = this.#octal.decode(line, payload);
    this.#emit(age < 0 ? { kind: 'output', pane: pane[0], data } : { kind: 'output', pane: pane[0], data, ageMs: age });
  }

  #begin(line: Uint8Array): void {
    const t = BEGIN.length;
    const tEnd = fieldEnd(line, t);
    const nEnd = fieldEnd(line, tEnd + 1);
    const fEnd = fieldEnd(line, nEnd + 1);
    const time = parseDigits(line, t, tEnd);
    const number = parseDigits(line, tEnd + 1, nEnd);
    const flags = parseDigits(line, nEnd + 1, fEnd);
    if (time < 0 || number < 0 || flags < 0 || fEnd !== line.length) {
      return this.#incident('malformed-line', line, '%begin needs "<time> <number> <flags>"');
    }
    const begin = line.slice();
    const framing = flags % 2 === 1 && this.#replyFraming ? this.#framingOfReply() : GUARD_FRAMING;
    const complete = framing.kind === 'lines' && framing.count === 0;
    this.#block = { begin, guard: begin.subarray(t), time, number, flags, lines: [], framing, bytes: 0, complete };
  }

  #framingOfReply(): BlockFraming {
    try {
      return checkedFraming(this.#replyFraming?.());
    } catch {
      return STRICTEST;
    }
  }

  /** A line of a block framed by size: content until the size is reached, then exactly the guard. */
  #framedLine(block: OpenBlock, line: Uint8Array, strippedCr: boolean): void {
    if (block.complete) {
      if (this.#closes(block, line)) return;
      this.#block = undefined;
      this.#untrusted = true;
      this.#incident('framing-mismatch', line, `the reply began by "${decodeUtf8(block.begin)}" should have ended here; the stream is no longer interpreted`);
      return;
    }
    if (this.#isGuard(block, line)) this.#incident('guard-in-content', line, 'pane text holds a line equal to the reply\'s guard; kept as content');
    block.lines.push(line.slice());
    // Counted as tmux wrote it: a CR the splitter took off still belongs to the text's size.
    block.bytes += line.length + (strippedCr ? 2 : 1);
    const f = block.framing;
    block.complete = f.kind === 'text' ? block.bytes >= Math.max(f.bytes, 1) : f.kind === 'lines' && block.lines.length >= f.count;
  }

  #isGuard(block: OpenBlock, line: Uint8Array): boolean {
    const closer = startsWith(line, END) ? END : startsWith(line, ERROR) ? ERROR : undefined;
    return closer !== undefined && line.length === closer.length + block.guard.length && startsWith(line, block.guard, closer.length);
  }

  #closes(block: OpenBlock, line: Uint8Array): boolean {
    if (!this.#isGuard(block, line)) return false;
    this.#block = undefined;
    const { time, number, flags, lines } = block;
    const ok = startsWith(line, END);
    // Bit 0 of the flags marks a command read from this client's stdin (cmd-queue.c, CMDQ_STATE_CONTROL).
    if (flags % 2 === 1) this.#emit({ kind: 'reply', ok, time, number, lines });
    else this.#emit({ kind: 'foreign-block', ok, time, number, flags, lines });
    return true;
  }

  #abandonBlock(detail: string): void {
    const block = this.#block;
    if (!block) return;
    this.#block = undefined;
    this.#incident('unterminated-block', block.begin, detail);
  }

  #notification(line: Uint8Array): void {
    const nameEnd = fieldEnd(line, 1);
    const name = decodeUtf8(line.subarray(1, nameEnd));
    if (!isNotificationName(name)) return this.#emit({ kind: 'unknown', line: line.slice() });
    const event = parseNotification(name, nameEnd < line.length ? decodeUtf8(line.subarray(nameEnd + 1)) : '');
    if (event) this.#emit(event);
    else this.#incident('malformed-line', line, `%${name} with unexpected fields`);
  }

  #incident(code: IncidentCode, line: Uint8Array, detail: string): void {
    this.#emit({ kind: 'incident', code, line: line.slice(), detail });
  }
}
