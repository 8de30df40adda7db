/**
 * Turns `capture-pane -p -e` output back into bytes that paint the same cells in xterm.
 *
 * The capture's SGR escapes are differences from the previous cell, carried across lines
 * (reference §5), so lines cannot be reset one by one. But a plain `\r\n` at the bottom row
 * scrolls, and xterm fills the new row with the current background (BCE): a line that ends with a
 * background set would paint the next row's blank tail, which tmux's grid (and capture) do not
 * have. So the background is tracked through the SGR escapes and dropped for the line break only.
 */
import { ByteBuilder } from './byte-builder.js';

const ESC = 0x1b;
const LF = 0x0a;

/** Rows of a capture: separated by \n, no trailing \n. An empty capture is one empty row. */
export function splitCaptureRows(capture: Uint8Array): Uint8Array[] {
  const rows: Uint8Array[] = [];
  let from = 0;
  for (let lf = capture.indexOf(LF); lf >= 0; lf = capture.indexOf(LF, from)) {
    rows.push(capture.subarray(from, lf));
    from = lf + 1;
  }
  rows.push(capture.subarray(from));
  return rows;
}

/**
 * The background an SGR parameter list leaves, starting from `bg` (null = default). Returns the
 * parameters that re-establish it, e.g. "44" or "48;5;17".
 */
export function backgroundAfterSgr(params: string, bg: string | null): string | null {
  const ps = params.split(';');
  for (let i = 0; i < ps.length; i++) {
    const p = ps[i] ?? '';
    const code = p === '' ? 0 : Number.parseInt(p, 10);
    // Colon forms (38:5:n, 48:2::r:g:b) carry their arguments in the same parameter.
    const extended = (n: number): number => (p.includes(':') ? 0 : ps[i + 1] === '5' ? n + 2 : ps[i + 1] === '2' ? n + 4 : n);
    if (code === 0 || code === 49) bg = null;
    else if ((code >= 40 && code <= 47) || (code >= 100 && code <= 107)) bg = String(code);
    else if (code === 48) {
      const end = extended(i);
      bg = ps.slice(i, end + 1).join(';');
      i = end;
    } else if (code === 38 || code === 58) i = extended(i);
  }
  return bg;
}

const ZWJ = [0xe2, 0x80, 0x8d] as const;
const BOM = [0xef, 0xbb, 0xbf] as const;

/**
 * A capture's characters as the emulator must receive them to rebuild tmux's cells: U+FEFF, which
 * xterm.js's UTF-8 decoder drops, as `CSI < 65279 z` (print this code point), and a printable ASCII
 * character right after a ZWJ with `CSI < j` before it (join the next character): inside one cell's
 * data they were joined (screen_write_combine), which printing plain ASCII would not do.
 */
export function replayable(row: Uint8Array): Uint8Array {
  if (!row.includes(0xe2) && !row.includes(0xef)) return row;
  const out: number[] = [];
  const ascii = (s: string): void => {
    for (let k = 0; k < s.length; k++) out.push(s.charCodeAt(k));
  };
  for (let i = 0; i < row.length; i++) {
    const b = row[i] as number;
    if (b === BOM[0] && row[i + 1] === BOM[1] && row[i + 2] === BOM[2]) {
      ascii('\x1b[<65279z');
      i += 2;
      continue;
    }
    out.push(b);
    if (b === ZWJ[0] && row[i + 1] === ZWJ[1] && row[i + 2] === ZWJ[2]) {
      out.push(ZWJ[1], ZWJ[2]);
      i += 2;
      const next = row[i + 1];
      if (next !== undefined && next >= 0x20 && next < 0x7f) ascii('\x1b[<j');
    }
  }
  return Uint8Array.from(out);
}

/**
 * tmux 3.3a's capture writes attribute codes of two digits as `tens:units` (grid_string_cells_code,
 * meant for the underline styles 4:2…4:5), so overline (53) comes out as `5:3`, which any
 * terminal reads as blink with a sub-parameter. Inside SGR sequences it is put back to 53.
 */
export function withOverline(row: Uint8Array): Uint8Array {
  let out: number[] | null = null;
  let copied = 0;
  for (let i = row.indexOf(ESC); i >= 0 && i + 1 < row.length; i = row.indexOf(ESC, i + 1)) {
    if (row[i + 1] !== 0x5b) continue;
    let j = i + 2;
    while (j < row.length && (row[j] as number) >= 0x30 && (row[j] as number) <= 0x3f) j++;
    if (row[j] !== 0x6d) continue;
    const params = String.fromCharCode(...row.subarray(i + 2, j)).split(';');
    if (params.includes('5:3')) {
      out ??= [];
      out.push(...row.subarray(copied, i + 2));
      const fixed = params.map((p) => (p === '5:3' ? '53' : p)).join(';');
      for (let k = 0; k < fixed.length; k++) out.push(fixed.charCodeAt(k));
      copied = j;
    }
    i = j;
  }
  if (out === null) return row;
  out.push(...row.subarray(copied));
  return Uint8Array.from(out);
}

/** Scans a row for CSI … m sequences and returns the background it leaves. */
function backgroundAfterRow(row: Uint8Array, bg: string | null): string | null {
  for (let i = row.indexOf(ESC); i >= 0 && i + 1 < row.length; i = row.indexOf(ESC, i + 1)) {
    if (row[i + 1] !== 0x5b) continue;
    let j = i + 2;
    while (j < row.length && (row[j] as number) >= 0x30 && (row[j] as number) <= 0x3f) j++;
    if (row[j] !== 0x6d) continue;
    bg = backgroundAfterSgr(String.fromCharCode(...row.subarray(i + 2, j)), bg);
    i = j;
  }
  return bg;
}

/**
 * Bytes that paint `rows` from the cursor on: joined by CR LF (without BCE), no line break after
 * the last row (it would scroll), then SGR 0.
 *
 * tmux stores a character printed while the DEC special graphics set was active with its CHARSET
 * attribute and `-e` writes SO before such cells and SI after them (measured: `ESC ) 0 SO qqx SI`
 * captures as `SO qqx SI`, the plain capture shows "qqx"). So G1 is designated as DEC special
 * graphics for the replay, and GL and G1 are back at their defaults after it.
 */
export function captureReplay(rows: readonly Uint8Array[], out = new ByteBuilder()): ByteBuilder {
  out.ascii('\x1b)0');
  let bg: string | null = null;
  rows.forEach((row, i) => {
    if (i > 0) out.ascii(bg === null ? '\r\n' : `\x1b[49m\r\n\x1b[${bg}m`);
    out.bytes(replayable(withOverline(row)));
    bg = backgroundAfterRow(row, bg);
  });
  return out.ascii('\x1b[0m\x0f\x1b)B');
}
