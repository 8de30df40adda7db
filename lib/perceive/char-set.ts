/**
 * Sets of code points as sorted, disjoint, inclusive ranges: what the regex safety check compares
 * to decide whether two parts of a pattern can match the same character.
 */

/** The largest code point. */
export const MAX_CP = 0x10ffff;

/** A set of code points as sorted, disjoint, inclusive ranges. */
export type CharSet = readonly (readonly [number, number])[];

export function union(a: CharSet, b: CharSet): CharSet {
  const all = [...a, ...b].sort((p, q) => p[0] - q[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of all) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

export function complement(a: CharSet): CharSet {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of union(a, [])) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= MAX_CP) out.push([next, MAX_CP]);
  return out;
}

export function overlaps(a: CharSet, b: CharSet): boolean {
  for (const [alo, ahi] of a) for (const [blo, bhi] of b) if (alo <= bhi && blo <= ahi) return true;
  return false;
}
