/**
 * SGR as tmux 3.3a applies it (input_csi_dispatch_sgr and its _256 and _colon forms), written as
 * the xterm.js SGR codes that have the same effect.
 */
import { INT_MAX, paramValue, type Param } from './params.js';

/** SGR codes xterm.js applies exactly as tmux does, alone (not 38/48/58, which take arguments). */
const SAME_SGR = new Set([0, 1, 2, 3, 4, 5, 7, 8, 9, 21, 22, 23, 24, 25, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 39, 40, 41, 42, 43, 44, 45, 46, 47, 49, 53, 55, 59, 90, 91, 92, 93, 94, 95, 96, 97, 100, 101, 102, 103, 104, 105, 106, 107]);

export function plainSgr(params: readonly Param[]): boolean {
  if (params.length === 0) return false;
  for (const p of params) if (typeof p !== 'number' || !SAME_SGR.has(p)) return false;
  return true;
}

/** input_csi_dispatch_sgr: each effect as the xterm.js SGR code that has the same effect. */
export function sgr(p: readonly Param[]): string {
  if (p.length === 0) return '\x1b[0m';
  const codes: string[] = [];
  for (let i = 0; i < p.length; i++) {
    const raw = p[i];
    if (typeof raw === 'string') {
      const code = sgrColon(raw);
      if (code) codes.push(code);
      continue;
    }
    const n = paramValue(p, i, 0, 0);
    if (n === 38 || n === 48 || n === 58) {
      i++;
      const kind = paramValue(p, i, 0, -1);
      if (kind === 2) {
        const [r, g, b] = [paramValue(p, i + 1, 0, -1), paramValue(p, i + 2, 0, -1), paramValue(p, i + 3, 0, -1)];
        if (byte(r) && byte(g) && byte(b)) {
          codes.push(`${n};2;${r};${g};${b}`);
          i += 3;
        }
      } else if (kind === 5) {
        const c = paramValue(p, i + 1, 0, -1);
        const code = sgr256(n, c);
        if (code) codes.push(code);
        i++;
      }
      continue;
    }
    const code = SGR_CODES[n];
    if (code !== undefined) codes.push(code);
  }
  return codes.length === 0 ? '' : `\x1b[${codes.join(';')}m`;
}

function byte(n: number): boolean {
  return n >= 0 && n <= 255;
}

/** input_csi_dispatch_sgr_256_do: an index past 255 (or missing) sets the default colour; 58 then does nothing. */
function sgr256(which: number, c: number): string {
  if (c === -1 || c > 255) return which === 38 ? '39' : which === 48 ? '49' : '';
  return `${which};5;${c}`;
}

/** input_csi_dispatch_sgr_colon: `4:n` underline styles and `38:2:…`/`38:5:n` colours. */
function sgrColon(s: string): string {
  const p: number[] = [];
  for (const part of s.split(':')) {
    if (part === '') p.push(-1);
    else {
      const n = Number(part);
      if (!(n <= INT_MAX)) return '';
      p.push(n);
    }
    if (p.length === 8) return '';
  }
  const n = p.length;
  if (p[0] === 4) {
    if (n !== 2) return '';
    const style = p[1] as number;
    return style >= 0 && style <= 5 ? `4:${style}` : '';
  }
  if (n < 2 || (p[0] !== 38 && p[0] !== 48 && p[0] !== 58)) return '';
  const which = p[0];
  if (p[1] === 2) {
    if (n < 3) return '';
    const i = n === 5 ? 2 : 3;
    if (n < i + 3) return '';
    const [r, g, b] = [p[i] as number, p[i + 1] as number, p[i + 2] as number];
    return byte(r) && byte(g) && byte(b) ? `${which};2;${r};${g};${b}` : '';
  }
  if (p[1] === 5) return n < 3 ? '' : sgr256(which, p[2] as number);
  return '';
}

/** The SGR codes tmux knows, as the xterm.js code with the same effect (6 blinks; 21 is a double underline). */
const SGR_CODES: Readonly<Record<number, string>> = (() => {
  const t: Record<number, string> = { 0: '0', 1: '1', 2: '2', 3: '3', 4: '4', 5: '5', 6: '5', 7: '7', 8: '8', 9: '9', 21: '21' };
  for (const n of [22, 23, 24, 25, 27, 28, 29, 39, 49, 53, 55, 59]) t[n] = String(n);
  for (let n = 30; n <= 37; n++) t[n] = String(n);
  for (let n = 40; n <= 47; n++) t[n] = String(n);
  for (let n = 90; n <= 97; n++) t[n] = String(n);
  for (let n = 100; n <= 107; n++) t[n] = String(n);
  return t;
})();
