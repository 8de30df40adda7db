/**
 * The cost reading: what a driven program (an AI CLI) shows it has spent, read from the screen
 * through its profile's `cost` rule. Pure. The screen is untrusted: the reading only ever tightens
 * (it can stop a drive at config `drive.maxCostUsd`), it never grants anything.
 */
import type { Profile } from './profile.js';
import { boundedExec } from './regex-safety.js';

/** Readings above this are not a spend line (a mistyped rule matching some other number). */
const MAX_READING_USD = 1_000_000;

/**
 * The highest cost (USD) the profile's rule finds on the visible rows, or undefined when the profile
 * has no rule or nothing matches. Each row is matched on its own (bounded); the rule's first capture
 * group (else the whole match) is the number. `bottomRows` limits the search to the last rows with content.
 */
export function readCost(snapshot: { readonly lines: readonly string[] }, profile: Pick<Profile, 'cost'>): number | undefined {
  const rule = profile.cost;
  if (!rule) return undefined;
  const lines = snapshot.lines;
  let bottom = lines.length - 1;
  while (bottom >= 0 && (lines[bottom] ?? '').trim() === '') bottom -= 1;
  const top = rule.bottomRows === undefined ? 0 : Math.max(0, bottom - rule.bottomRows + 1);
  let best: number | undefined;
  for (let y = top; y <= bottom; y++) {
    const row = lines[y] ?? '';
    rule.re.lastIndex = 0;
    const m = boundedExec(rule.re, row);
    if (!m) continue;
    const raw = (m[1] ?? m[0]).replace(/,/g, '');
    if (!/^\d{1,9}(?:\.\d{1,9})?$/.test(raw)) continue;
    const n = Number(raw);
    if (Number.isFinite(n) && n <= MAX_READING_USD && (best === undefined || n > best)) best = n;
  }
  return best;
}
