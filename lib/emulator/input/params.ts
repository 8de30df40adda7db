/**
 * A CSI sequence's parameters as tmux 3.3a reads them (input.c: input_split, input_get): the
 * bounds tmux puts on them, and the counts the filter clamps before the emulator sees them.
 */

/** input.c: `u_char param_buf[64]` (63 bytes and a NUL), `interm_buf[4]`, `param_list[24]`. */
export const PARAM_BYTES = 63;
export const INTERMEDIATE_BYTES = 3;
const PARAM_VALUES = 24;
export const INT_MAX = 2147483647;
/**
 * Counts are clamped before the emulator sees them: tmux bounds every count by the screen, but
 * xterm.js loops `n` times for CBT and allocates `n` cells for REP (a `CSI 2147483647 Z` would
 * spin the host for seconds). tmux's largest pane is 10000 cells a side.
 */
export const MAX_COUNT = 10000;

/** null: missing; string: has a ':' (sub-parameters). */
export type Param = number | null | string;

/**
 * input_split: null when tmux rejects the whole sequence (a value past INT_MAX, 24 or more values).
 * The buffer holds only digits, ':' and ';' ('<'..'?' go to the intermediates).
 */
export function splitParams(bytes: Uint8Array, length: number): Param[] | null {
  if (length === 0) return [];
  const out: Param[] = [];
  let start = 0;
  for (let i = 0; i <= length; i++) {
    if (i < length && bytes[i] !== 0x3b) continue;
    if (i === start) out.push(null);
    else {
      let n = 0;
      let colon = false;
      for (let k = start; k < i; k++) {
        const b = bytes[k] as number;
        if (b === 0x3a) colon = true;
        else n = n * 10 + (b - 0x30);
      }
      if (colon) out.push(String.fromCharCode(...bytes.subarray(start, i)));
      else if (n > INT_MAX) return null; // strtonum(out, 0, INT_MAX)
      else out.push(n);
    }
    if (out.length === PARAM_VALUES) return null;
    start = i + 1;
  }
  return out;
}

/** input_get: a missing value is `fallback`, a sub-parameter list is -1, below `min` is `min`. */
export function paramValue(params: readonly Param[], index: number, min: number, fallback: number): number {
  if (index >= params.length) return fallback;
  const p = params[index];
  if (p === null || p === undefined) return fallback;
  if (typeof p === 'string') return -1;
  return p < min ? min : p;
}

export const clampCount = (n: number): number => Math.min(n, MAX_COUNT);
