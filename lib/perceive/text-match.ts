/**
 * Decides whether waited-for text has appeared, never counting the echo of what we typed: the
 * haystack is the output that arrived after the wait began plus the screen rows that are new since
 * the last input, leaving out the lines that are the echo of what we typed (an old prompt with
 * the command after it).
 */
export type TextPattern = string | RegExp;

/** A non-global, non-sticky copy: `test` on a /g RegExp is stateful. */
export function toMatcher(pattern: TextPattern): (hay: string) => boolean {
  if (typeof pattern === 'string') return (hay) => hay.includes(pattern);
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return (hay) => re.test(hay);
}

/** Typed lines shorter than this are key answers (y, q, 1), not commands: their echo is not sought. */
const MIN_NEEDLE = 3;
/** A piece of a long echoed command that wrapped onto its own row is recognised from this length. */
const MIN_WRAPPED_PIECE = 20;

/** The trimmed lines of what we typed that are long enough to recognise an echo by. */
export function typedNeedles(typed: readonly string[]): string[] {
  const out: string[] = [];
  for (const input of typed) {
    for (const line of input.split(/\r\n|\r|\n/)) {
      const needle = line.trim();
      if (needle.length >= MIN_NEEDLE) out.push(needle);
    }
  }
  return out;
}

/**
 * True when `line` is the echo of `needle`: it ends with it (a prompt, then the command), or, for a
 * long command that wrapped, it is a piece of it or ends with its beginning. Output that merely
 * contains the typed word ("make: *** Error" after typing "make") is not an echo.
 */
export function isEcho(line: string, needle: string): boolean {
  const row = line.trimEnd();
  if (row.length === 0) return false;
  if (row.endsWith(needle)) return true;
  if (needle.length < MIN_WRAPPED_PIECE || row.length < MIN_WRAPPED_PIECE) return false;
  const piece = row.trimStart();
  if (piece.length >= MIN_WRAPPED_PIECE && needle.includes(piece)) return true;
  for (let k = Math.min(needle.length, row.length); k >= MIN_WRAPPED_PIECE; k--) {
    if (row.endsWith(needle.slice(0, k))) return true;
  }
  return false;
}

/** Drops the lines that are the echo of something we typed. */
export function withoutEcho(lines: readonly string[], needles: readonly string[]): string[] {
  if (needles.length === 0) return [...lines];
  return lines.filter((line) => !needles.some((n) => isEcho(line, n)));
}

/**
 * Rows of `now` that `before` did not have, compared as a multiset so that scrolling (the same rows
 * one line higher) adds nothing new.
 */
export function newRows(before: readonly string[], now: readonly string[]): string[] {
  const counts = new Map<string, number>();
  for (const row of before) counts.set(row, (counts.get(row) ?? 0) + 1);
  const out: string[] = [];
  for (const row of now) {
    const left = counts.get(row) ?? 0;
    if (left > 0) counts.set(row, left - 1);
    else if (row.trim().length > 0) out.push(row);
  }
  return out;
}
