/**
 * The shapes of a read, pure: `digest` (the visible rows, right-trimmed, trailing blank rows
 * dropped), `diff` (the digest rows that changed since a caller's previous read) and the byte cap
 * every mode applies (the oldest/top text is dropped first: the bottom of a screen — the prompt, the
 * question, the last output — is what a reader needs).
 */

export type ReadMode = 'full' | 'digest' | 'diff';
export const READ_MODES: readonly ReadMode[] = ['full', 'digest', 'diff'];
export const DEFAULT_MAX_BYTES: Readonly<Record<ReadMode, number>> = { full: 64 * 1024, digest: 16 * 1024, diff: 16 * 1024 };
export const MAX_READ_BYTES = 16 * 1024 * 1024;

/** One changed row of a diff: its index among the digest rows and its new text. */
export interface DiffRow {
  readonly row: number;
  readonly text: string;
}

export interface ScreenDiff {
  /** True when this caller had no previous read: every row is reported. */
  readonly first: boolean;
  readonly changed: readonly DiffRow[];
  /** Rows the previous read had and this one no longer has (the screen's content got shorter). */
  readonly removed: readonly number[];
}

/** The visible rows, right-trimmed, without the trailing blank rows. */
export function digestRows(lines: readonly string[]): string[] {
  const rows = lines.map((l) => l.replace(/\s+$/u, ''));
  while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  return rows;
}

/**
 * The rows of `now` that differ from `before` (all of them when there is no `before`), and the
 * indices `before` had beyond the end of `now`. An `undefined` baseline row always counts as changed
 * (it was never delivered).
 */
export function diffRows(before: readonly (string | undefined)[] | undefined, now: readonly string[]): ScreenDiff {
  const changed: DiffRow[] = [];
  for (let row = 0; row < now.length; row++) {
    const text = now[row] ?? '';
    if (!before || before[row] !== text) changed.push({ row, text });
  }
  const removed: number[] = [];
  if (before) for (let row = now.length; row < before.length; row++) removed.push(row);
  return { first: before === undefined, changed, removed };
}

const encoder = new TextEncoder();
const decoder = new TextDecoder('utf-8');

export function byteLength(text: string): number {
  return encoder.encode(text).length;
}

/**
 * At most `maxBytes` of `text`, keeping its end: the cut is moved to the next line start when one
 * is inside the kept part, else to the next UTF-8 character start.
 */
export function capTail(text: string, maxBytes: number): { readonly text: string; readonly droppedBytes: number } {
  const bytes = encoder.encode(text);
  if (bytes.length <= maxBytes) return { text, droppedBytes: 0 };
  let start = bytes.length - maxBytes;
  const nl = bytes.indexOf(0x0a, start - 1);
  if (nl !== -1 && nl + 1 < bytes.length) start = nl + 1;
  else while (start < bytes.length && ((bytes[start] ?? 0) & 0xc0) === 0x80) start += 1;
  return { text: decoder.decode(bytes.subarray(start)), droppedBytes: start };
}

/**
 * The diff's rows within `maxBytes` once rendered (one `@row text` line each), keeping the last
 * (bottom) ones; the rows left out are returned so the caller can report them again next time.
 */
export function capDiff(changed: readonly DiffRow[], maxBytes: number): { readonly kept: DiffRow[]; readonly dropped: DiffRow[]; readonly droppedBytes: number } {
  const sizes = changed.map((c) => byteLength(renderDiffRow(c)) + 1);
  let total = sizes.reduce((a, b) => a + b, 0);
  let cut = 0;
  let droppedBytes = 0;
  while (cut < changed.length && total > maxBytes) {
    total -= sizes[cut] ?? 0;
    droppedBytes += sizes[cut] ?? 0;
    cut += 1;
  }
  return { kept: changed.slice(cut), dropped: changed.slice(0, cut), droppedBytes };
}

/** `@<row> <text>`: one line of a diff's text form. */
export function renderDiffRow(c: DiffRow): string {
  return `@${c.row} ${c.text}`;
}
