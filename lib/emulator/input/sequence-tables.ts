/**
 * The sequences tmux 3.3a acts on (input.c: input_esc_table, input_csi_table), each with the
 * canonical sequence the filter emits for it: a table walked by the filter, one entry per
 * sequence. A sequence with no entry is dropped, as tmux ignores it.
 */
import { clampCount, paramValue, type Param } from './params.js';
import { sgr } from './sgr.js';

/** `CSI n X` when the count is a number (input_get(0, 1, 1) != -1). */
function counted(final: string): (p: readonly Param[]) => string {
  return (p) => {
    const n = paramValue(p, 0, 1, 1);
    return n === -1 ? '' : `\x1b[${clampCount(n)}${final}`;
  };
}

/** ED, EL, TBC: only the listed selectors do anything. */
function selector(final: string, allowed: readonly number[]): (p: readonly Param[]) => string {
  return (p) => {
    const n = paramValue(p, 0, 0, 0);
    return allowed.includes(n) ? `\x1b[${n}${final}` : '';
  };
}

/** One sequence per mode value, in order (tmux applies them one by one; the handlers take one value each). */
function modes(privateMarker: '' | '?', final: 'h' | 'l', known: Readonly<Record<number, string>>): (p: readonly Param[]) => string {
  return (p) => {
    let out = '';
    for (let i = 0; i < p.length; i++) {
      const n = paramValue(p, i, 0, -1);
      const emitted = known[n];
      if (emitted !== undefined) out += emitted.replaceAll('%', final);
      else if (n !== -1 && privateMarker === '?' && PASSED_PRIVATE_MODES.has(n)) out += `\x1b[?${n}${final}`;
    }
    return out;
  };
}

/** DEC private modes tmux keeps that xterm.js handles the same way (input modes; no cell changes). */
const PASSED_PRIVATE_MODES = new Set([1, 6, 7, 25, 1004, 1005, 1006, 47, 1047, 1049, 2004]);

export const ESC_TABLE: Readonly<Record<string, string>> = {
  '(0': '\x1b(0',
  ')0': '\x1b)0',
  '(B': '\x1b(B',
  ')B': '\x1b)B',
  '7': '\x1b7',
  '8': '\x1b8',
  '#8': '\x1b#8',
  '=': '\x1b=',
  '>': '\x1b>',
  D: '\x1bD',
  E: '\x1bE',
  H: '\x1bH',
  M: '\x1bM',
  c: '\x1bc',
  '\\': '', // ST: ends a string, nothing of its own
};

export type CsiCommand = ((params: readonly Param[]) => string) | 'REP';

export const CSI_TABLE: Readonly<Record<string, CsiCommand>> = {
  '@': counted('@'),
  A: counted('A'),
  B: counted('B'),
  C: counted('C'),
  D: counted('D'),
  E: counted('E'),
  F: counted('F'),
  G: counted('G'),
  '`': counted('G'),
  H: cup,
  f: cup,
  J: (p) => {
    const n = paramValue(p, 0, 0, 0);
    if (n === 3) return paramValue(p, 1, 0, 0) === 0 ? '\x1b[3J' : '';
    return n >= 0 && n <= 2 ? `\x1b[${n}J` : '';
  },
  K: selector('K', [0, 1, 2]),
  L: counted('L'),
  M: counted('M'),
  P: counted('P'),
  S: counted('S'),
  T: counted('T'),
  X: counted('X'),
  Z: counted('Z'),
  b: 'REP',
  d: counted('d'),
  g: selector('g', [0, 3]),
  h: modes('', 'h', { 4: '\x1b[4%' }),
  l: modes('', 'l', { 4: '\x1b[4%' }),
  '?h': modes('?', 'h', { 3: '\x1b[H\x1b[2J', 1000: '\x1b[?1000h', 1002: '\x1b[?1002h', 1003: '\x1b[?1003h' }),
  '?l': modes('?', 'l', { 3: '\x1b[H\x1b[2J', 1000: '\x1b[?1000l', 1001: '\x1b[?1000l', 1002: '\x1b[?1000l', 1003: '\x1b[?1000l' }),
  m: sgr,
  r: (p) => {
    const top = paramValue(p, 0, 1, 1);
    const bottom = paramValue(p, 1, 1, -2); // -2: missing, the screen height (which only the emulator knows)
    if (top === -1 || bottom === -1) return '';
    return bottom === -2 ? `\x1b[${clampCount(top)}r` : `\x1b[${clampCount(top)};${clampCount(bottom)}r`;
  },
  s: () => '\x1b7', // SCP is DECSC in tmux
  u: () => '\x1b8',
  // Replies, cursor style, key modes, title stack: no cell changes.
  c: () => '',
  '>c': () => '',
  n: () => '',
  '>m': () => '',
  '>n': () => '',
  ' q': () => '',
  '>q': () => '',
  t: () => '',
};

function cup(p: readonly Param[]): string {
  const row = paramValue(p, 0, 1, 1);
  const col = paramValue(p, 1, 1, 1);
  return row === -1 || col === -1 ? '' : `\x1b[${clampCount(row)};${clampCount(col)}H`;
}
