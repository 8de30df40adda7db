/**
 * Decides whether waited-for text has appeared, never counting the echo of what we typed: the
 * haystack is the output that arrived after the wait began plus the screen rows that changed since,
 * with every occurrence of a line we typed removed (that is where its echo would be).
 */
export type TextPattern = string | RegExp;

/** A non-global, non-sticky copy: `test` on a /g RegExp is stateful. */
export function toMatcher(pattern: TextPattern): (hay: string) => boolean {
  if (typeof pattern === 'string') return (hay) => hay.includes(pattern);
  const re = new RegExp(pattern.source, pattern.flags.replace(/[gy]/g, ''));
  return (hay) => re.test(hay);
}

/** Removes echoed copies of typed lines from `text`. */
export function withoutEcho(text: string, typed: readonly string[]): string {
  let hay = text;
  for (const input of typed) {
    for (const line of input.split(/\r\n|\r|\n/)) {
      const needle = line.trim();
      if (needle.length === 0) continue;
      hay = hay.split(needle).join('\u0000');
    }
  }
  return hay;
}

/** Rows of `now` that differ from the same row in `before` (new content on the screen). */
export function changedRows(before: readonly string[], now: readonly string[]): string[] {
  const out: string[] = [];
  now.forEach((row, i) => {
    if (row !== before[i]) out.push(row);
  });
  return out;
}
