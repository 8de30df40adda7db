/**
 * Printing as tmux 3.3a does it (screen_write_cell, screen_write_collect_add): the pending wrap,
 * a wide character that does not fit, writing over half of a wide character, joining marks and
 * ZWJ sequences to the cell before the cursor, the insert mode.
 */
import { charWidth } from '../char-width.js';
import type { TmuxScreen } from './tmux-screen.js';
import type { AttrShape, LineShape } from './xterm-core.js';

const ZWJ = 0x200d;
/** xterm 6's cell content: the width sits above bit 22; a pen with extended attributes (bg bit 28) needs setCellFromCodepoint. */
const WIDTH_1 = 1 << 22;
const BG_HAS_EXTENDED = 0x10000000;
/** struct utf8_data: a cell holds at most 21 bytes of UTF-8 (a base and its combining marks). */
const UTF8_SIZE = 21;

function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

export function print(s: TmuxScreen, data: Uint32Array, start: number, end: number): void {
  const h = s.handler;
  const cols = s.cols;
  const wrap = h._coreService.decPrivateModes.wraparound;
  const insert = h._coreService.modes.insertMode;
  const charset = h._charsetService.charset;
  const pen = h._curAttrData;
  // input_print's collect path: plain ASCII while wrapping, not inserting, no line drawing. It
  // neither joins nor clears a pending ZWJ.
  const collecting = wrap && !insert && !charset;
  let i = start;
  while (i < end) {
    const cp = data[i] as number;
    const ascii = cp < 0x7f;
    if (ascii && collecting && !s.joinNext) {
      let run = i + 1;
      while (run < end && (data[run] as number) < 0x7f) run++;
      collect(s, data, i, run, pen);
      i = run;
      continue;
    }
    i++;
    let code = cp;
    if (ascii && charset) {
      const mapped = charset[String.fromCharCode(cp)];
      if (mapped) code = mapped.codePointAt(0) as number;
    }
    // Joined characters keep their own code: screen_write_combine appends the data, not the
    // line-drawing glyph (the charset is an attribute of the cell, which is the previous one's).
    if (s.joinNext) {
      // A character of a cell's joined data, replayed from a capture.
      if (s.zwj) combine(s, ZWJ);
      s.zwj = false;
      s.joinNext = false;
      combine(s, cp);
      continue;
    }
    if (cp === ZWJ) {
      s.zwj = true;
      continue;
    }
    const width = ascii ? 1 : Math.max(0, charWidth(cp));
    if (width === 0 || s.zwj) {
      if (s.zwj) combine(s, ZWJ);
      s.zwj = false;
      combine(s, cp);
      continue;
    }
    const b = s.b;
    // A wide character that does not fit without wrapping is dropped.
    if (!wrap && width > 1 && (width > cols || (b.x !== cols && b.x > cols - width))) continue;
    if (insert) insertCellsAt(s, b.x, width, s.defaultAttr);
    place(s, code, width, wrap, pen);
  }
}

/** screen_write_linefeed(ctx, 1, 8) and the cursor to column 0: a line that ran past the last column. */
function wrapLine(s: TmuxScreen): void {
  const b = s.b;
  const from = b.y;
  const scrolls = b.y === b.scrollBottom;
  s.lineFeed(true, s.defaultAttr);
  s.setCursor(0, -1);
  // xterm's own wrap marker (this line continues the one above), for its reflow on resize.
  if (scrolls || b.y !== from) s.line(b.y).isWrapped = true;
}

/** The part of screen_write_cell after the joining rules: wrap, overwrite, set, advance. */
function place(s: TmuxScreen, code: number, width: number, wrap: boolean, pen: AttrShape): void {
  const b = s.b;
  const cols = s.cols;
  if (wrap && b.x > cols - width) wrapLine(s);
  if (b.x > cols - width || b.y > s.rows - 1) return;
  const line = s.line(b.y);
  overwrite(s, line, b.x, width);
  line.setCellFromCodepoint(b.x, code, width, pen);
  // The rest of a wide character: xterm's width-0 cell (tmux's padding cell).
  for (let x = b.x + 1; x < b.x + width; x++) line.setCellFromCodepoint(x, 0, 0, pen);
  const last = wrap ? 0 : 1;
  b.x = b.x <= cols - last - width ? b.x + width : cols - last;
}

/**
 * screen_write_collect_add/_end for a run of plain ASCII: line by line, wrap first, write what fits,
 * and clear a wide character the run cuts at either end. Unlike screen_write_overwrite, the walk
 * left stops before column 0, so a wide character starting at column 0 keeps its first half when
 * its second half is overwritten.
 */
function collect(s: TmuxScreen, data: Uint32Array, start: number, end: number, pen: AttrShape): void {
  const b = s.b;
  const cols = s.cols;
  let i = start;
  while (i < end) {
    if (b.x > cols - 1) wrapLine(s);
    const line = s.line(b.y);
    if (b.x !== 0) {
      let xx = b.x;
      let width = 1;
      for (; xx > 0; xx--) {
        width = line.getWidth(xx);
        if (width !== 0) break;
        line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
      }
      if (width > 1) line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
    }
    const n = Math.min(end - i, cols - b.x);
    const cells = line._data;
    if (cells !== undefined && (pen.bg & BG_HAS_EXTENDED) === 0) {
      // The bulk-output hot path: what setCellFromCodepoint stores, without a call per cell.
      for (let k = 0, o = b.x * 3; k < n; k++, o += 3) {
        cells[o] = (data[i + k] as number) | WIDTH_1;
        cells[o + 1] = pen.fg;
        cells[o + 2] = pen.bg;
      }
    } else for (let k = 0; k < n; k++) line.setCellFromCodepoint(b.x + k, data[i + k] as number, 1, pen);
    b.x += n;
    i += n;
    for (let xx = b.x; xx < cols && line.getWidth(xx) === 0; xx++) line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
  }
}

/** screen_write_overwrite: writing over part of a wide character clears the rest of it. */
function overwrite(s: TmuxScreen, line: LineShape, x: number, width: number): void {
  const nowWidth = line.getWidth(x);
  const padding = nowWidth === 0;
  if (padding) {
    let xx = x + 1;
    while (--xx > 0) {
      if (line.getWidth(xx) !== 0) break;
      line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
    }
    line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
  }
  if (width !== 1 || nowWidth !== 1 || padding) {
    let xx = x + width - 1;
    while (++xx < s.cols) {
      if (line.getWidth(xx) !== 0) break;
      line.setCellFromCodepoint(xx, 0, 1, s.defaultAttr);
    }
  }
}

/**
 * screen_write_combine: append to the first cell left of the cursor that is not a padding cell;
 * nothing at column 0, nothing past 21 bytes. A blank cell is tmux's ' ', so the mark joins a
 * space (xterm would replace the empty cell with the mark).
 */
function combine(s: TmuxScreen, code: number): void {
  const b = s.b;
  if (b.x === 0) return;
  const line = s.line(b.y);
  let n = 1;
  while (n <= b.x && line.getWidth(b.x - n) === 0) n++;
  if (n > b.x) return;
  const x = b.x - n;
  const cell = s.cell(line, x);
  const chars = cell.getChars();
  let size = 0;
  for (const ch of chars === '' ? ' ' : chars) size += utf8Length(ch.codePointAt(0) as number);
  if (size + utf8Length(code) > UTF8_SIZE) return;
  if (chars === '') line.setCellFromCodepoint(x, 0x20, cell.getWidth() || 1, cell);
  line.addCodepointToCell(x, code, 0);
}

/** grid_view_insert_cells: shift right by `n`; at the last column, clear it. */
export function insertCellsAt(s: TmuxScreen, x: number, n: number, attr: AttrShape): void {
  const y = s.b.y;
  if (x >= s.cols - 1) return s.clearCells(y, x, 1, attr);
  s.moveCells(y, x + n, x, s.cols - x - n, attr);
}
