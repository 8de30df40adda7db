/**
 * Terminal output as a person sees it (pane bytes decoded, an ANSI read, typed input): escape
 * sequences and control characters set aside (a cursor movement stands for a line break, a
 * cursor-forward for blanks), control strings (OSC, DCS, APC, PM, SOS) set aside with their
 * payloads kept apart for redaction of their own.
 */
import { ViewBuilder, type VisibleText } from './visible-text.js';

const enum Ch {
  Bs = 0x08,
  Tab = 0x09,
  Lf = 0x0a,
  Vt = 0x0b,
  Ff = 0x0c,
  Cr = 0x0d,
  Can = 0x18,
  Sub = 0x1a,
  Esc = 0x1b,
  Space = 0x20,
  Dash = 0x2d,
  Backslash = 0x5c,
  Del = 0x7f,
  Bel = 0x07,
  C1First = 0x80,
  C1Last = 0x9f,
  C1Dcs = 0x90,
  C1Sos = 0x98,
  C1Csi = 0x9b,
  C1St = 0x9c,
  C1Osc = 0x9d,
  C1Pm = 0x9e,
  C1Apc = 0x9f,
  C1Ind = 0x84,
  C1Nel = 0x85,
  C1Ri = 0x8d,
}

/**
 * CSI finals that move the cursor somewhere else (up, down, to a column or a position, scroll,
 * restore): what follows is drawn elsewhere, so the view gets a line break. Cursor-forward (C, a)
 * shows as blanks; the rest (SGR m, erase K/J/X, modes h/l, …) draws nothing between two
 * characters and contributes nothing.
 */
const CSI_MOVES = new Set('ABDEFGHLMSTZdefjkru`');
/**
 * Blanks a cursor-forward stands for at most: enough to separate words and to fill the gap
 * between a key and its value; bounded so a stream of short CUFs cannot blow up the view.
 */
const MAX_FORWARD = 8;

/** The serializer's forced wrap (addon-serialize `_rowEnd`): dashes then back-and-erase, maybe a fix-up of the row above. */
const SERIALIZER_WRAP_TAIL = /\x1b\[1D\x1b\[1X(?:\x1b\[A\x1b\[\d{1,5}C\x1b\[\d{1,5}X\x1b\[\d{1,5}D\x1b\[B)?/y;

function csiContribution(source: string, paramsStart: number, finalAt: number): string {
  const final = source.charAt(finalAt);
  if (final === 'C' || final === 'a') {
    const first = /^\d{0,6}/.exec(source.slice(paramsStart, Math.min(finalAt, paramsStart + 6)))?.[0] ?? '';
    const n = Math.min(MAX_FORWARD, Math.max(1, Number(first) || 1));
    return ' '.repeat(n);
  }
  if (final === 'I') return '\t';
  return CSI_MOVES.has(final) ? '\n' : '';
}

/**
 * Terminal output as a person sees it (pane bytes decoded, an ANSI read, typed input): escape
 * sequences and control characters set aside (a cursor movement stands for a line break, a
 * cursor-forward for blanks), control strings set aside with their payloads redacted apart.
 */
export function terminalStream(source: string): VisibleText {
  const b = new ViewBuilder(source);
  const n = source.length;
  let textFrom = 0;
  let i = 0;
  const flush = (to: number): void => {
    b.text(textFrom, to);
  };
  while (i < n) {
    const c = source.charCodeAt(i);
    if (c === Ch.Dash && (i === 0 || source.charCodeAt(i - 1) !== Ch.Dash)) {
      let k = i;
      while (k < n && source.charCodeAt(k) === Ch.Dash) k += 1;
      if (source.charCodeAt(k) === Ch.Esc) {
        SERIALIZER_WRAP_TAIL.lastIndex = k;
        if (SERIALIZER_WRAP_TAIL.test(source)) {
          flush(i);
          b.aside(i, SERIALIZER_WRAP_TAIL.lastIndex, '');
          i = textFrom = SERIALIZER_WRAP_TAIL.lastIndex;
          continue;
        }
      }
      i = k;
      continue;
    }
    if ((c >= Ch.Space && c !== Ch.Del && (c < Ch.C1First || c > Ch.C1Last)) || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab) {
      i += 1;
      continue;
    }
    flush(i);
    const end = controlEnd(source, i, b);
    i = textFrom = end;
  }
  flush(n);
  return b.build();
}

/** Sets aside the control sequence or character at `at`; returns where it ends. */
function controlEnd(source: string, at: number, b: ViewBuilder): number {
  const n = source.length;
  const c = source.charCodeAt(at);
  if (c === Ch.Esc) {
    if (at + 1 >= n) {
      b.aside(at, n, '');
      return n;
    }
    const next = source.charCodeAt(at + 1);
    switch (next) {
      case 0x5b: // [
        return csi(source, at, at + 2, b);
      case 0x5d: // ]
        return controlString(source, at, at + 2, true, b);
      case 0x50: // P
      case 0x58: // X
      case 0x5e: // ^
      case 0x5f: // _
        return controlString(source, at, at + 2, false, b);
      default:
        break;
    }
    if (next >= 0x20 && next <= 0x2f) {
      // Intermediates then a final: charset designations (ESC ( B), ESC # 8, ESC % G, …
      let j = at + 1;
      while (j < n && source.charCodeAt(j) >= 0x20 && source.charCodeAt(j) <= 0x2f) j += 1;
      if (j < n && source.charCodeAt(j) >= 0x30 && source.charCodeAt(j) <= 0x7e) j += 1;
      b.aside(at, j, '');
      return j;
    }
    if (next >= 0x30 && next <= 0x7e) {
      // RI, IND, NEL, DECRC and RIS move the cursor; the other single finals draw nothing.
      b.aside(at, at + 2, 'MDE8c'.includes(String.fromCharCode(next)) ? '\n' : '');
      return at + 2;
    }
    b.aside(at, at + 1, '');
    return at + 1;
  }
  if (c >= Ch.C1First && c <= Ch.C1Last) {
    switch (c) {
      case Ch.C1Csi:
        return csi(source, at, at + 1, b);
      case Ch.C1Osc:
        return controlString(source, at, at + 1, true, b);
      case Ch.C1Dcs:
      case Ch.C1Sos:
      case Ch.C1Pm:
      case Ch.C1Apc:
        return controlString(source, at, at + 1, false, b);
      default:
        b.aside(at, at + 1, c === Ch.C1Ind || c === Ch.C1Nel || c === Ch.C1Ri ? '\n' : '');
        return at + 1;
    }
  }
  // C0 and DEL: backspace, VT and FF move the cursor; NUL, BEL, SO, SI … draw nothing.
  b.aside(at, at + 1, c === Ch.Bs || c === Ch.Vt || c === Ch.Ff ? '\n' : '');
  return at + 1;
}

function csi(source: string, at: number, paramsStart: number, b: ViewBuilder): number {
  const n = source.length;
  let j = paramsStart;
  while (j < n && source.charCodeAt(j) >= 0x30 && source.charCodeAt(j) <= 0x3f) j += 1;
  while (j < n && source.charCodeAt(j) >= 0x20 && source.charCodeAt(j) <= 0x2f) j += 1;
  if (j < n && source.charCodeAt(j) >= 0x40 && source.charCodeAt(j) <= 0x7e) {
    b.aside(at, j + 1, csiContribution(source, paramsStart, j));
    return j + 1;
  }
  // Cut short (end of the stream, or a control inside): what was read is set aside.
  b.aside(at, j, '');
  return j;
}

/**
 * OSC (ended by BEL or ST), DCS, SOS, PM and APC (ended by ST). As in xterm, ESC, CAN or SUB also
 * end the string; an unterminated string runs to the end of the stream (a terminal would swallow
 * all of it, and so does the payload).
 */
function controlString(source: string, at: number, payloadStart: number, belEnds: boolean, b: ViewBuilder): number {
  const n = source.length;
  let j = payloadStart;
  for (; j < n; j++) {
    const c = source.charCodeAt(j);
    if (c === Ch.Esc || c === Ch.Can || c === Ch.Sub || c === Ch.C1St || (belEnds && c === Ch.Bel)) break;
  }
  let end = j;
  if (j < n) {
    const c = source.charCodeAt(j);
    if (c === Ch.Esc) end = source.charCodeAt(j + 1) === Ch.Backslash ? j + 2 : j;
    else end = j + 1;
  }
  b.aside(at, end, '', [payloadStart, j]);
  return end;
}
