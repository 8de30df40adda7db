/**
 * What waited-for text is matched against: a pattern (string or RegExp) as a matcher, and the
 * screen rows that are new since the last input. The echo of what we typed is told by position
 * (text-watch.ts and the wait engine), never by content: output that repeats the typed text
 * ("Hello Alice" after typing Alice) is output.
 */
export type TextPattern = string | RegExp;

/** A non-global, non-sticky copy: `test` on a /g RegExp is stateful. */
export function toMatcher(pattern: TextPattern): (hay: string) => boolean {
  if (typeof pattern === 'string') return (hay) => hay.includes(pattern);
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return (hay) => re.test(hay);
}

/**
 * Indexes of the rows of `now` that `before` did not have (blank rows left out), compared as a
 * multiset so that scrolling (the same rows one line higher) adds nothing new.
 */
export function newRowIndexes(before: readonly string[], now: readonly string[]): number[] {
  const counts = new Map<string, number>();
  for (const row of before) counts.set(row, (counts.get(row) ?? 0) + 1);
  const out: number[] = [];
  now.forEach((row, y) => {
    const left = counts.get(row) ?? 0;
    if (left > 0) counts.set(row, left - 1);
    else if (row.trim().length > 0) out.push(y);
  });
  return out;
}

/** The lines of typed text (CR, LF or CRLF breaks): each is echoed on a line of its own. */
export function inputLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/);
}

/**
 * True when `row`, from string index `x` (the column the input was typed at), shows the start of
 * `typed` (all of it, or as much as the row holds before it wraps): the echo is where it was
 * typed and is what was typed. A program that does not echo prints its answer there instead.
 */
export function echoedAt(row: string, x: number, typed: string): boolean {
  const shown = row.slice(x).trimEnd();
  if (shown.length === 0 || typed.length === 0) return false;
  return shown.length >= typed.length ? shown.startsWith(typed) : typed.startsWith(shown);
}
