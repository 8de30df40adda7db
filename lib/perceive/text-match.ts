/**
 * Decides whether waited-for text has appeared, never counting the echo of what we typed: the
 * haystack is the output that arrived after the wait began plus the screen rows that are new since
 * the last input, with every line that holds a line we typed left out (that is where its echo is,
 * next to an old prompt).
 */
export type TextPattern = string | RegExp;

/** A non-global, non-sticky copy: `test` on a /g RegExp is stateful. */
export function toMatcher(pattern: TextPattern): (hay: string) => boolean {
  if (typeof pattern === 'string') return (hay) => hay.includes(pattern);
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return (hay) => re.test(hay);
}

/** The non-empty, trimmed lines of what we typed: the needles an echo is recognised by. */
export function typedNeedles(typed: readonly string[]): string[] {
  const out: string[] = [];
  for (const input of typed) {
    for (const line of input.split(/\r\n|\r|\n/)) {
      const needle = line.trim();
      if (needle.length > 0) out.push(needle);
    }
  }
  return out;
}

/** Drops every line that contains one of the typed needles. */
export function withoutEcho(lines: readonly string[], needles: readonly string[]): string[] {
  if (needles.length === 0) return [...lines];
  return lines.filter((line) => !needles.some((n) => line.includes(n)));
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
