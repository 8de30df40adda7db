/**
 * The width tmux 3.3a gives a code point (glibc's wcwidth; lib/emulator/glibc-widths.ts), which
 * differs from xterm's Unicode 11 tables for ~830k code points: unassigned ones (tmux drops them,
 * xterm prints them 1 wide), newer emoji (tmux 2, xterm 1), prepended concatenation marks
 * (tmux 1, xterm 0) and more. Both the input filter (which drops width -1) and the terminal's
 * unicode provider (which places the rest) read this table.
 */
import { GLIBC_WIDTH_RUNS } from './glibc-widths.js';

export type CharWidth = -1 | 0 | 1 | 2;

const { starts, widths } = decodeRuns(GLIBC_WIDTH_RUNS);

function decodeRuns(text: string): { starts: Uint32Array; widths: Int8Array } {
  const parts = text.split(',');
  const s = new Uint32Array(parts.length);
  const w = new Int8Array(parts.length);
  let at = 0;
  parts.forEach((part, i) => {
    at += Number.parseInt(part.slice(0, -1), 36);
    s[i] = at;
    const code = part.slice(-1);
    w[i] = code === 'm' ? -1 : Number(code);
  });
  return { starts: s, widths: w };
}

/** -1: tmux drops the character (control, unassigned, surrogate); 0: combines onto the previous cell. */
export function charWidth(cp: number): CharWidth {
  if (cp >= 0x20 && cp < 0x7f) return 1;
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if ((starts[mid] as number) <= cp) lo = mid;
    else hi = mid - 1;
  }
  return widths[lo] as CharWidth;
}
