/**
 * A transcript as an asciicast v2 recording (https://docs.asciinema.org/manual/asciicast/v2/):
 * one JSON header line, then one JSON array per event, `[seconds, code, data]`. Pure: no Node
 * API, no I/O; the caller writes the lines where it likes.
 *
 * - `output` entries become `"o"` events. Pane bytes are decoded with ONE streaming decoder across
 *   entries, because a UTF-8 character may be split between two chunks of output (entries that
 *   already carry text, as `Session.transcript()` returns them with redaction on, are used as is).
 * - `input` entries (the text sent) and `keys` entries (as the bytes a terminal would send for
 *   the key names) become `"i"` events.
 * - `resize` entries, and resyncs that changed the size, become `"r"` events, data `"COLSxROWS"`.
 * - `gap` entries (nobody was attached, the evidence has a hole) become `"m"` marker events.
 *
 * Secrets are redacted on the decoded streams, not per event: the output events are one terminal
 * stream and the input events another, each matched as the text it draws (escape sequences set
 * aside), so a secret split over two chunks of output, or styled, is found; its marker goes in the
 * event where it starts.
 *
 * Output is neutralised for the terminal that will play it (lib/asciicast-output-filter.ts):
 * clipboard writes, passthrough, titles, APC/PM/SOS and queries are removed unless `raw` is set.
 */
import type { TranscriptEntry } from './transcript.js';
import { redactTerminalChunks } from '../policy/redact.js';
import { AsciicastOutputFilter } from './asciicast-output-filter.js';

export interface AsciicastHeader {
  readonly version: 2;
  readonly width: number;
  readonly height: number;
  /** Unix time of the recording's start, in whole seconds. */
  readonly timestamp: number;
  readonly title?: string;
  readonly env: { readonly TERM: string; readonly SHELL?: string };
}

export type AsciicastEventCode = 'o' | 'i' | 'r' | 'm';
export type AsciicastEvent = readonly [time: number, code: AsciicastEventCode, data: string];

export interface AsciicastOptions {
  /** The terminal size when the first entry was recorded. */
  readonly cols: number;
  readonly rows: number;
  /** TERM inside the drive (tmux-drive's servers set `default-terminal tmux-256color`). */
  readonly term?: string;
  readonly title?: string;
  /** Replace secrets with `[REDACTED:kind]` markers (default true). */
  readonly redact?: boolean;
  /**
   * The screen (ANSI, as `read({ format: 'ansi' })` gives it) to show at time 0, before the
   * entries: for a transcript that starts in the middle of a drive (after a re-attach).
   */
  readonly initialScreen?: string;
  /** Wall-clock ms of time 0 (default: the first entry's time). */
  readonly startTime?: number;
  /**
   * Keep the program's output byte for byte, including what acts on the player's terminal rather
   * than its screen (OSC 52 clipboard writes, DCS tmux; passthrough, titles, APC/PM/SOS, queries).
   * Default false: those are removed and the screen plays the same.
   */
  readonly raw?: boolean;
}

export interface Asciicast {
  readonly header: AsciicastHeader;
  readonly events: readonly AsciicastEvent[];
  /** Secrets replaced across all events. */
  readonly redactions: number;
}

export const DEFAULT_TERM = 'tmux-256color';

/** What a terminal sends for the tmux key names the session accepts (C-x, M-x are computed). */
const KEY_BYTES: Readonly<Record<string, string>> = {
  Enter: '\r',
  KPEnter: '\r',
  Tab: '\t',
  BTab: '\x1b[Z',
  Escape: '\x1b',
  BSpace: '\x7f',
  Space: ' ',
  Up: '\x1b[A',
  Down: '\x1b[B',
  Right: '\x1b[C',
  Left: '\x1b[D',
  Home: '\x1b[H',
  End: '\x1b[F',
  PageUp: '\x1b[5~',
  PgUp: '\x1b[5~',
  PPage: '\x1b[5~',
  PageDown: '\x1b[6~',
  PgDn: '\x1b[6~',
  NPage: '\x1b[6~',
  Insert: '\x1b[2~',
  IC: '\x1b[2~',
  Delete: '\x1b[3~',
  DC: '\x1b[3~',
  F1: '\x1bOP',
  F2: '\x1bOQ',
  F3: '\x1bOR',
  F4: '\x1bOS',
  F5: '\x1b[15~',
  F6: '\x1b[17~',
  F7: '\x1b[18~',
  F8: '\x1b[19~',
  F9: '\x1b[20~',
  F10: '\x1b[21~',
  F11: '\x1b[23~',
  F12: '\x1b[24~',
};

/** The bytes for one key name, or undefined for a name the table does not cover. */
export function keyBytes(name: string): string | undefined {
  if ([...name].length === 1) return name;
  if (Object.hasOwn(KEY_BYTES, name)) return KEY_BYTES[name];
  if (name.startsWith('M-')) {
    const rest = keyBytes(name.slice(2));
    return rest === undefined ? undefined : `\x1b${rest}`;
  }
  if (name.startsWith('C-') && [...name.slice(2)].length === 1) {
    const ch = name.slice(2);
    if (ch === '?') return '\x7f';
    const code = ch.toUpperCase().charCodeAt(0);
    if (code >= 0x40 && code <= 0x5f) return String.fromCharCode(code - 0x40);
  }
  return undefined;
}

function round6(seconds: number): number {
  return Math.round(seconds * 1e6) / 1e6;
}

function positiveInt(n: unknown, label: string): number {
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1) throw new RangeError(`asciicast ${label} must be a positive integer (got ${String(n)})`);
  return n;
}

export function toAsciicast(entries: readonly TranscriptEntry[], opts: AsciicastOptions): Asciicast {
  let cols = positiveInt(opts.cols, 'cols');
  let rows = positiveInt(opts.rows, 'rows');
  const redact = opts.redact ?? true;
  const start = opts.startTime ?? entries[0]?.time ?? 0;
  const header: AsciicastHeader = {
    version: 2,
    width: cols,
    height: rows,
    timestamp: Math.floor(start / 1000),
    ...(opts.title === undefined ? {} : { title: opts.title }),
    env: { TERM: opts.term ?? DEFAULT_TERM },
  };
  let events: AsciicastEvent[] = [];
  let redactions = 0;
  let last = 0;
  const push = (time: number, code: AsciicastEventCode, data: string): void => {
    // Event times must never go back, even if the wall clock did.
    last = Math.max(last, round6(Math.max(0, time - start) / 1000));
    events.push([last, code, data]);
  };
  // One filter for the whole recording: a sequence may be split between two output entries.
  const outputFilter = opts.raw === true ? null : new AsciicastOutputFilter();
  const screen = (text: string): string => (outputFilter ? outputFilter.push(text) : text);
  if (opts.initialScreen !== undefined && opts.initialScreen.length > 0) push(start, 'o', screen(opts.initialScreen));
  const decoder = new TextDecoder('utf-8');
  let lastOutputTime = start;
  for (const e of entries) {
    switch (e.kind) {
      case 'output': {
        if (e.data === undefined) break;
        // Session.transcript() hands output back already decoded (and redacted) when redaction is on.
        const text = screen(typeof e.data === 'string' ? e.data : decoder.decode(e.data, { stream: true }));
        lastOutputTime = e.time;
        if (text.length > 0) push(e.time, 'o', text);
        break;
      }
      case 'input': {
        const text = typeof e.data === 'string' ? e.data : e.data ? new TextDecoder().decode(e.data) : '';
        if (text.length > 0) push(e.time, 'i', text);
        break;
      }
      case 'keys': {
        const names = typeof e.tags?.keys === 'string' ? e.tags.keys.split(' ').filter((k) => k.length > 0) : [];
        const bytes = names.map(keyBytes).filter((b): b is string => b !== undefined).join('');
        if (bytes.length > 0) push(e.time, 'i', bytes);
        break;
      }
      case 'resize':
      case 'resync': {
        const c = e.tags?.cols;
        const r = e.tags?.rows;
        if (typeof c === 'number' && typeof r === 'number' && Number.isInteger(c) && Number.isInteger(r) && c > 0 && r > 0 && (c !== cols || r !== rows)) {
          cols = c;
          rows = r;
          push(e.time, 'r', `${c}x${r}`);
        }
        break;
      }
      case 'gap':
        push(e.time, 'm', `gap: ${String(e.tags?.reason ?? 'unknown')}`);
        break;
      default:
        break;
    }
  }
  const tail = screen(decoder.decode());
  if (tail.length > 0) push(lastOutputTime, 'o', tail);
  if (redact) {
    for (const code of ['o', 'i'] as const) {
      const at = events.flatMap((e, i) => (e[1] === code ? [i] : []));
      const r = redactTerminalChunks(at.map((i) => (events[i] as AsciicastEvent)[2]));
      redactions += r.count;
      for (const [k, i] of at.entries()) {
        const e = events[i] as AsciicastEvent;
        events[i] = [e[0], e[1], r.chunks[k] ?? ''];
      }
    }
    // A chunk that held only the rest of a secret (its marker went where the secret starts).
    events = events.filter((e) => e[2].length > 0);
  }
  return { header, events, redactions };
}

/** The recording as asciicast v2 text: newline-delimited JSON, header first, ending in a newline. */
export function formatAsciicast(cast: Asciicast): string {
  return [JSON.stringify(cast.header), ...cast.events.map((e) => JSON.stringify(e))].join('\n') + '\n';
}
