/**
 * tmux 3.3a's screen (screen-write.c, screen.c, grid.c, grid-view.c) as the emulator's behaviour.
 *
 * xterm.js and tmux agree on what most sequences mean and disagree on the details: the pending
 * wrap (tmux keeps the cursor at the right edge through LF, VPA, RI; xterm pulls it back), which
 * scrolls feed the history (tmux: any scroll of the region's top line, CSI S included, on the main
 * screen), what a cleared or shifted cell holds, wide characters cut in half, joining characters,
 * the alternate screen (tmux keeps one cursor save for 1049 and another for DECSC, shares the
 * scroll region and tab stops between screens, and restores the pen), DECSC (tmux restores the
 * origin mode and both charsets), RIS (tmux neither leaves the alternate screen nor clears the
 * history). Each tmux function the terminal needs is ported here, line by line, and installed as
 * the handler of the sequence the input filter (tmux-input-filter.ts) emits for it; the
 * differential fuzzer (tools/fuzz.ts) checks the result against real tmux.
 *
 * The port works on xterm.js's private core (buffer lines, pen, modes, charsets). installTmuxScreen
 * probes those members and installs nothing when one is missing: another xterm version falls back
 * to xterm's own behaviour, and the fidelity check reports the difference.
 */
import type { HeadlessTerminal } from './headless.js';
import { charWidth } from './char-width.js';

// ---- the private members of xterm.js 6.0.0 used here ------------------------------------------

interface AttrShape {
  fg: number;
  bg: number;
  extended: unknown;
  clone(): AttrShape;
}

interface CellShape extends AttrShape {
  getChars(): string;
  getWidth(): number;
}

interface LineShape {
  readonly length: number;
  isWrapped: boolean;
  getWidth(x: number): number;
  loadCell(x: number, cell: CellShape): CellShape;
  setCell(x: number, cell: CellShape): void;
  setCellFromCodepoint(x: number, codePoint: number, width: number, attrs: AttrShape): void;
  addCodepointToCell(x: number, codePoint: number, width: number): void;
}

interface CircularListShape {
  readonly length: number;
  readonly maxLength: number;
  get(index: number): LineShape | undefined;
  set(index: number, value: LineShape): void;
  shiftElements(start: number, count: number, offset: number): void;
  trimStart(count: number): void;
}

interface BufferShape {
  x: number;
  y: number;
  ybase: number;
  ydisp: number;
  scrollTop: number;
  scrollBottom: number;
  tabs: Record<number, boolean | undefined>;
  readonly lines: CircularListShape;
  getNullCell(attr?: AttrShape): CellShape;
  getBlankLine(attr: AttrShape, isWrapped?: boolean): LineShape;
  setupTabStops(i?: number): void;
}

interface CharsetServiceShape {
  glevel: number;
  charset: Readonly<Record<string, string>> | undefined;
  readonly _charsets: readonly unknown[];
  setgLevel(g: number): void;
  setgCharset(g: number, charset: unknown): void;
  reset(): void;
}

interface CoreServiceShape {
  isCursorHidden: boolean;
  decPrivateModes: { wraparound: boolean; origin: boolean };
  modes: { insertMode: boolean };
  reset(): void;
}

interface InputHandlerShape {
  print(data: Uint32Array, start: number, end: number): void;
  _curAttrData: AttrShape;
  readonly _activeBuffer: BufferShape;
  readonly _coreService: CoreServiceShape;
  readonly _charsetService: CharsetServiceShape;
  readonly _coreMouseService: { reset(): void };
}

interface BufferServiceShape {
  readonly cols: number;
  readonly rows: number;
  readonly buffer: BufferShape;
  readonly buffers: { readonly normal: BufferShape; readonly alt: BufferShape; activateNormalBuffer(): void; activateAltBuffer(fill?: AttrShape): void };
  scroll(eraseAttr: AttrShape, isWrapped?: boolean): void;
}

interface CoreShape {
  _inputHandler?: InputHandlerShape;
  _bufferService?: BufferServiceShape;
}

/** input_save_state: what DECSC keeps (the pen with both charsets and the shift state, cursor, origin mode). */
export interface TmuxSavedState {
  readonly pen: AttrShape;
  readonly glevel: number;
  readonly g0: unknown;
  readonly g1: unknown;
  readonly x: number;
  readonly y: number;
  readonly origin: boolean;
}

/** screen.c's saved_cx/saved_cy/saved_cell: what `?1049h` keeps for `?1049l` (null: nothing saved). */
export interface TmuxAlternateSave {
  readonly x: number;
  readonly y: number;
  readonly pen: AttrShape;
}

/** The state tmux keeps outside the grid that this port keeps outside xterm's. */
export interface TmuxScreenState {
  saved: TmuxSavedState;
  alternateSave: TmuxAlternateSave | null;
}

const COLOUR_BITS = 0x3ffffff;

/** The core reached through the probed members; every tmux function below is written against it. */
export class TmuxScreen implements TmuxScreenState {
  /** The next character joins the cell before the cursor (screen_write_cell's SCREEN_WRITE_ZWJ). */
  zwj = false;
  /** Set by `CSI < j` (captures only): the next character joins the cell before the cursor, even plain ASCII. */
  joinNext = false;
  saved: TmuxSavedState;
  alternateSave: TmuxAlternateSave | null = null;
  /**
   * GRID_LINE_WRAPPED, on the line objects themselves: the flag moves with its line through
   * scrolls and line moves as tmux's does (xterm's own isWrapped sits on the next line and cannot
   * be set for the bottom row). Read by backspace, which goes up a line when the one above wrapped.
   */
  readonly wrapped = new WeakSet<LineShape>();
  readonly #scratch: CellShape;
  readonly #default: AttrShape;
  readonly #erase: AttrShape;

  constructor(
    readonly handler: InputHandlerShape,
    readonly service: BufferServiceShape,
  ) {
    const nullCell = service.buffer.getNullCell();
    this.#default = nullCell.clone();
    this.#erase = nullCell.clone();
    // A CellData of xterm's own (clone() gives a plain AttributeData).
    this.#scratch = new (nullCell.constructor as new () => CellShape)();
    this.saved = this.initialSave();
  }

  get b(): BufferShape {
    return this.handler._activeBuffer;
  }

  get cols(): number {
    return this.service.cols;
  }

  get rows(): number {
    return this.service.rows;
  }

  get modes(): CoreServiceShape['decPrivateModes'] {
    return this.handler._coreService.decPrivateModes;
  }

  get alternate(): boolean {
    return this.service.buffers.alt === this.service.buffer;
  }

  line(y: number): LineShape {
    return this.b.lines.get(this.b.ybase + y) as LineShape;
  }

  cell(line: LineShape, x: number): CellShape {
    return line.loadCell(x, this.#scratch);
  }

  /** tmux's default cell (grid_default_cell). */
  get defaultAttr(): AttrShape {
    return this.#default;
  }

  /** A cleared cell with the pen's background (grid_clear_cell(…, ictx->cell.cell.bg)). */
  eraseAttr(): AttrShape {
    this.#erase.bg = this.handler._curAttrData.bg & COLOUR_BITS;
    this.#erase.extended = this.#default.extended;
    return this.#erase;
  }

  initialSave(): TmuxSavedState {
    return { pen: this.#default.clone(), glevel: 0, g0: undefined, g1: undefined, x: 0, y: 0, origin: false };
  }

  /** screen_write_set_cursor: -1 keeps a coordinate; x may be the width (pending wrap). */
  setCursor(x: number, y: number): void {
    if (x !== -1) this.b.x = x > this.cols ? this.cols - 1 : x;
    if (y !== -1) this.b.y = y > this.rows - 1 ? this.rows - 1 : y;
  }

  /** screen_write_cursormove: origin-relative when asked and DECOM is on, clamped inside the screen. */
  cursorMove(px: number, py: number, origin: boolean): void {
    const b = this.b;
    if (origin && py !== -1 && this.modes.origin) py = py > b.scrollBottom - b.scrollTop ? b.scrollBottom : py + b.scrollTop;
    if (px !== -1 && px > this.cols - 1) px = this.cols - 1;
    if (py !== -1 && py > this.rows - 1) py = this.rows - 1;
    this.setCursor(px, py);
  }

  /** grid_clear for one line: `n` cells from `x`, default cells with `attr`'s background. */
  clearCells(y: number, x: number, n: number, attr: AttrShape): void {
    if (n <= 0) return;
    if (x === 0 && n >= this.cols) return this.clearLines(y, 1, attr);
    const line = this.line(y);
    for (let i = x; i < x + n && i < this.cols; i++) line.setCellFromCodepoint(i, 0, 1, attr);
  }

  /** grid_clear_lines / grid_empty_line: whole lines emptied, their flags with them. */
  clearLines(y: number, n: number, attr: AttrShape): void {
    for (let i = y; i < y + n && i < this.rows; i++) {
      const line = this.line(i);
      for (let x = 0; x < this.cols; x++) line.setCellFromCodepoint(x, 0, 1, attr);
      this.wrapped.delete(line);
    }
  }

  /**
   * grid_move_lines(dy, py, ny): lines [py, py+ny) to [dy, dy+ny); the lines moved from and not
   * overwritten are emptied with `attr`; the lines above both blocks lose their wrap flag.
   */
  moveLines(dy: number, py: number, ny: number, attr: AttrShape): void {
    if (ny <= 0 || py === dy) return;
    if (py < 0 || py + ny > this.rows || dy < 0 || dy + ny > this.rows) return;
    const b = this.b;
    if (dy !== 0) this.wrapped.delete(this.line(dy - 1));
    const moved: LineShape[] = [];
    for (let i = 0; i < ny; i++) moved.push(this.line(py + i));
    const freed: LineShape[] = [];
    for (let y = dy; y < dy + ny; y++) if (y < py || y >= py + ny) freed.push(this.line(y));
    moved.forEach((line, i) => b.lines.set(b.ybase + dy + i, line));
    // The vacated positions get fresh lines (tmux empties them; the replaced lines are freed).
    for (let y = py; y < py + ny; y++) {
      if (y >= dy && y < dy + ny) continue;
      const fresh = freed.pop() ?? b.getBlankLine(attr);
      b.lines.set(b.ybase + y, fresh);
      this.clearLines(y, 1, attr);
      fresh.isWrapped = false;
    }
    if (py !== 0 && (py < dy || py >= dy + ny)) this.wrapped.delete(this.line(py - 1));
  }

  /** grid_move_cells(dx, px, nx) on one line: the moved-from cells not overwritten are cleared. */
  moveCells(y: number, dx: number, px: number, nx: number, attr: AttrShape): void {
    if (nx <= 0 || px === dx) return;
    const line = this.line(y);
    const CellData = this.#scratch.constructor as new () => CellShape;
    const cells: CellShape[] = [];
    for (let i = 0; i < nx; i++) cells.push(line.loadCell(px + i, new CellData()));
    cells.forEach((c, i) => {
      if (dx + i < this.cols) line.setCell(dx + i, c);
    });
    for (let x = px; x < px + nx; x++) {
      if (x >= dx && x < dx + nx) continue;
      line.setCellFromCodepoint(x, 0, 1, attr);
    }
  }

  /**
   * grid_view_scroll_region_up: on the main screen the region's top line goes into the history
   * (grid_scroll_history, or grid_scroll_history_region for a smaller region: the lines above the
   * region stay); on the alternate screen the region scrolls in place.
   */
  scrollRegionUp(attr: AttrShape): void {
    const b = this.b;
    const top = b.scrollTop;
    const bottom = b.scrollBottom;
    // No history on the alternate screen (tmux clears GRID_HISTORY there) nor with history-limit 0.
    if (this.alternate || b.lines.maxLength <= this.rows) {
      this.moveLines(top, top + 1, bottom - top, attr);
      return;
    }
    // xterm's scroll with the region starting at the top: the top line becomes history, a blank
    // line (with attr) enters at the region's bottom, the lines below the region stay.
    b.scrollTop = 0;
    const topLine = this.line(top);
    try {
      this.service.scroll(attr, false);
    } finally {
      b.scrollTop = top;
    }
    if (top > 0 && b.ybase > 0) {
      // Then the region's top line, not the screen's, is the one that went into the history.
      const history = b.ybase - 1;
      b.lines.shiftElements(history, top, 1);
      b.lines.set(history, topLine);
    }
    const fresh = this.line(bottom);
    this.wrapped.delete(fresh);
    fresh.isWrapped = false;
  }

  /** grid_view_scroll_region_down: grid_move_lines(rupper + 1, rupper, rlower - rupper). */
  scrollRegionDown(attr: AttrShape): void {
    const b = this.b;
    this.moveLines(b.scrollTop + 1, b.scrollTop, b.scrollBottom - b.scrollTop, attr);
  }

  /** screen_write_linefeed: x stays, even at the right edge (a pending wrap survives an LF). */
  lineFeed(wrapped: boolean, attr: AttrShape): void {
    const b = this.b;
    if (wrapped) this.wrapped.add(this.line(b.y));
    if (b.y === b.scrollBottom) this.scrollRegionUp(attr);
    else if (b.y < this.rows - 1) this.setCursor(-1, b.y + 1);
  }
}

export const TMUX_UNICODE_VERSION = 'tmux-glibc';

/** Installs tmux's widths always, and the port when xterm's private core has the members it needs. */
export function installTmuxScreen(term: HeadlessTerminal): TmuxScreen | null {
  installWidths(term);
  const core = (term as unknown as { _core?: CoreShape })._core;
  const handler = core?._inputHandler;
  const service = core?._bufferService;
  if (!handler || !service || !probe(handler, service)) return null;
  const s = new TmuxScreen(handler, service);
  handler.print = (data, start, end) => print(s, data, start, end);
  installHandlers(term, s);
  return s;
}

function probe(handler: InputHandlerShape, service: BufferServiceShape): boolean {
  const b = service.buffer as Partial<BufferShape> | undefined;
  const cs = handler._charsetService as Partial<CharsetServiceShape> | undefined;
  return (
    typeof handler.print === 'function' &&
    typeof handler._curAttrData?.clone === 'function' &&
    typeof handler._coreService?.decPrivateModes?.wraparound === 'boolean' &&
    typeof handler._coreService?.modes?.insertMode === 'boolean' &&
    typeof handler._coreService?.reset === 'function' &&
    typeof handler._coreMouseService?.reset === 'function' &&
    typeof cs?.setgCharset === 'function' &&
    typeof cs.setgLevel === 'function' &&
    Array.isArray(cs._charsets) &&
    typeof service.scroll === 'function' &&
    typeof service.buffers?.activateAltBuffer === 'function' &&
    typeof b?.ybase === 'number' &&
    typeof b.scrollBottom === 'number' &&
    typeof b.tabs === 'object' &&
    typeof b.setupTabStops === 'function' &&
    typeof b.lines?.shiftElements === 'function' &&
    typeof b.lines.maxLength === 'number' &&
    typeof b.lines.trimStart === 'function' &&
    typeof b.getNullCell === 'function' &&
    typeof b.getBlankLine === 'function' &&
    typeof b.lines.get(0)?.addCodepointToCell === 'function'
  );
}

/**
 * tmux measures with glibc's wcwidth. Width -1 never reaches here (the filter drops it). The
 * ported print decides joining itself; this provider keeps xterm's other width users (the
 * serializer, reflow) in step.
 */
function installWidths(term: HeadlessTerminal): void {
  const width = (cp: number): 0 | 1 | 2 => {
    const w = charWidth(cp);
    return w < 0 ? 1 : (w as 0 | 1 | 2);
  };
  term.unicode.register({
    version: TMUX_UNICODE_VERSION,
    wcwidth: width,
    charProperties: (cp, preceding) => {
      const w = width(cp);
      const precedingWidth = (preceding >> 1) & 3;
      const join = w === 0 && precedingWidth > 0;
      return ((join ? precedingWidth : w) << 1) | (join ? 1 : 0);
    },
  });
  term.unicode.activeVersion = TMUX_UNICODE_VERSION;
}

// ---- printing (screen_write_cell, screen_write_collect_add) ------------------------------------

const ZWJ = 0x200d;
/** struct utf8_data: a cell holds at most 21 bytes of UTF-8 (a base and its combining marks). */
const UTF8_SIZE = 21;

function utf8Length(cp: number): number {
  return cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
}

function print(s: TmuxScreen, data: Uint32Array, start: number, end: number): void {
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
    for (let k = 0; k < n; k++) line.setCellFromCodepoint(b.x + k, data[i + k] as number, 1, pen);
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
function insertCellsAt(s: TmuxScreen, x: number, n: number, attr: AttrShape): void {
  const y = s.b.y;
  if (x >= s.cols - 1) return s.clearCells(y, x, 1, attr);
  s.moveCells(y, x + n, x, s.cols - x - n, attr);
}

// ---- the handlers -------------------------------------------------------------------------------

type Params = (number | number[])[];

/** input_get as the filter already applied it: the emitted values are plain numbers ≥ 1 or absent. */
function param(params: Params, i: number, fallback: number): number {
  const p = params[i];
  return typeof p === 'number' && p > 0 ? p : fallback;
}

function installHandlers(term: HeadlessTerminal, s: TmuxScreen): void {
  const p = term.parser;
  const csi = (final: string, fn: (params: Params) => void, prefix?: string): void => {
    p.registerCsiHandler(prefix ? { prefix, final } : { final }, (params) => {
      fn(params);
      return true;
    });
  };
  const esc = (final: string, fn: () => void): void => {
    p.registerEscHandler({ final }, () => {
      fn();
      return true;
    });
  };
  const h = s.handler;

  // C0 (input_c0_dispatch): BS, HT and LF (the filter makes VT and FF line feeds).
  replaceExecute(h, 'backspace', () => backspace(s));
  replaceExecute(h, 'tab', () => tab(s));
  replaceExecute(h, 'lineFeed', () => s.lineFeed(false, s.eraseAttr()));

  // ESC (input_esc_dispatch)
  esc('7', () => saveState(s));
  esc('8', () => restoreState(s));
  esc('D', () => s.lineFeed(false, s.eraseAttr()));
  esc('E', () => {
    s.setCursor(0, -1);
    s.lineFeed(false, s.eraseAttr());
  });
  esc('H', () => {
    if (s.b.x < s.cols) s.b.tabs[s.b.x] = true;
  });
  esc('M', () => reverseIndex(s));
  esc('c', () => fullReset(s));
  p.registerEscHandler({ intermediates: '#', final: '8' }, () => {
    alignmentTest(s);
    return true;
  });

  // CSI (input_csi_dispatch); REP comes from the filter as `CSI < ch ; n b`.
  p.registerCsiHandler({ prefix: '<', final: 'b' }, (params) => {
    repeat(s, params);
    return true;
  });
  // U+FEFF, which xterm's UTF-8 decoder drops, comes as `CSI < 65279 z` (filter and captures).
  p.registerCsiHandler({ prefix: '<', final: 'z' }, (params) => {
    const cp = params[0];
    if (typeof cp === 'number' && cp > 0) print(s, Uint32Array.of(cp), 0, 1);
    return true;
  });
  p.registerCsiHandler({ prefix: '<', final: 'j' }, () => {
    s.joinNext = true;
    return true;
  });
  csi('@', (a) => insertCharacters(s, param(a, 0, 1)));
  csi('A', (a) => cursorUp(s, param(a, 0, 1)));
  csi('B', (a) => cursorDown(s, param(a, 0, 1)));
  csi('C', (a) => cursorRight(s, param(a, 0, 1)));
  csi('D', (a) => cursorLeft(s, param(a, 0, 1)));
  csi('E', (a) => {
    s.setCursor(0, -1);
    cursorDown(s, param(a, 0, 1));
  });
  csi('F', (a) => {
    s.setCursor(0, -1);
    cursorUp(s, param(a, 0, 1));
  });
  csi('G', (a) => s.cursorMove(param(a, 0, 1) - 1, -1, true));
  csi('H', (a) => s.cursorMove(param(a, 1, 1) - 1, param(a, 0, 1) - 1, true));
  csi('J', (a) => eraseDisplay(s, typeof a[0] === 'number' ? a[0] : 0));
  csi('K', (a) => eraseLine(s, typeof a[0] === 'number' ? a[0] : 0));
  csi('L', (a) => insertLines(s, param(a, 0, 1)));
  csi('M', (a) => deleteLines(s, param(a, 0, 1)));
  csi('P', (a) => deleteCharacters(s, param(a, 0, 1)));
  csi('S', (a) => scrollUp(s, param(a, 0, 1)));
  csi('T', (a) => scrollDown(s, param(a, 0, 1)));
  csi('X', (a) => clearCharacters(s, param(a, 0, 1)));
  csi('Z', (a) => backTab(s, param(a, 0, 1)));
  csi('d', (a) => s.cursorMove(-1, param(a, 0, 1) - 1, true));
  csi('g', (a) => {
    const n = typeof a[0] === 'number' ? a[0] : 0;
    if (n === 0 && s.b.x < s.cols) delete s.b.tabs[s.b.x];
    else if (n === 3) s.b.tabs = {};
  });
  csi('r', (a) => scrollRegion(s, param(a, 0, 1) - 1, param(a, 1, s.rows) - 1));
  // Modes come one value per sequence from the filter; the ones tmux treats like xterm pass on.
  p.registerCsiHandler({ final: 'h' }, (params) => setMode(s, params, true));
  p.registerCsiHandler({ final: 'l' }, (params) => setMode(s, params, false));
  p.registerCsiHandler({ prefix: '?', final: 'h' }, (params) => setPrivateMode(s, params, true));
  p.registerCsiHandler({ prefix: '?', final: 'l' }, (params) => setPrivateMode(s, params, false));
}

/**
 * BS, HT and LF are C0 controls: xterm's parser executes them through fixed InputHandler methods
 * (no registration API), so those methods are replaced on the instance.
 */
function replaceExecute(h: InputHandlerShape, method: 'backspace' | 'tab' | 'lineFeed', fn: () => void): void {
  const target = h as unknown as Record<string, unknown>;
  if (typeof target[method] !== 'function') return;
  target[method] = () => {
    fn();
    return true;
  };
}

/** input.c REP (`CSI < ch ; n b` from the filter): n times, but never past the last column. */
function repeat(s: TmuxScreen, a: Params): void {
  const ch = a[0];
  const n = a[1];
  if (typeof ch !== 'number' || typeof n !== 'number') return;
  const count = Math.max(0, Math.min(n, s.cols - s.b.x));
  if (count > 0) print(s, new Uint32Array(count).fill(ch), 0, count);
}

/** screen_write_backspace: at column 0, up to the end of the line above when that one wrapped. */
function backspace(s: TmuxScreen): void {
  const b = s.b;
  if (b.x === 0) {
    if (b.y === 0) return;
    if (s.wrapped.has(s.line(b.y - 1))) s.setCursor(s.cols - 1, b.y - 1);
    return;
  }
  s.setCursor(b.x - 1, -1);
}

/** input_c0_dispatch HT: never past the last column; from there, nothing. */
function tab(s: TmuxScreen): void {
  const b = s.b;
  const last = s.cols - 1;
  if (b.x >= last) return;
  let x = b.x;
  do {
    x++;
    if (b.tabs[x]) break;
  } while (x < last);
  b.x = x;
}

/** input.c CBT: from the last column at most, back `n` tab stops. */
function backTab(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = Math.min(b.x, s.cols - 1);
  while (x > 0 && n-- > 0) {
    do x--;
    while (x > 0 && !b.tabs[x]);
  }
  b.x = x;
}

function cursorUp(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = b.x;
  const y = b.y;
  if (y < b.scrollTop) n = Math.min(n, y);
  else n = Math.min(n, y - b.scrollTop);
  if (x === s.cols) x--;
  s.setCursor(x, y - n);
}

function cursorDown(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = b.x;
  const y = b.y;
  if (y > b.scrollBottom) n = Math.min(n, s.rows - 1 - y);
  else n = Math.min(n, b.scrollBottom - y);
  if (x === s.cols) x--;
  else if (n === 0) return;
  s.setCursor(x, y + n);
}

function cursorRight(s: TmuxScreen, n: number): void {
  const b = s.b;
  // u_int arithmetic: from the pending wrap column the limit wraps around and does not apply.
  const room = s.cols - 1 - b.x;
  if (room >= 0 && n > room) n = room;
  if (n === 0) return;
  s.setCursor(b.x + n, -1);
}

function cursorLeft(s: TmuxScreen, n: number): void {
  const b = s.b;
  if (n > b.x) n = b.x;
  if (n === 0) return;
  s.setCursor(b.x - n, -1);
}

function reverseIndex(s: TmuxScreen): void {
  const b = s.b;
  if (b.y === b.scrollTop) s.scrollRegionDown(s.eraseAttr());
  else if (b.y > 0) s.setCursor(-1, b.y - 1);
}

/** screen_write_scrollregion: ignored unless at least two lines; the cursor goes to the top left (not origin-relative). */
function scrollRegion(s: TmuxScreen, upper: number, lower: number): void {
  const last = s.rows - 1;
  if (upper > last) upper = last;
  if (lower > last) lower = last;
  if (upper >= lower) return;
  s.setCursor(0, 0);
  s.b.scrollTop = upper;
  s.b.scrollBottom = lower;
}

function eraseDisplay(s: TmuxScreen, n: number): void {
  const b = s.b;
  const attr = s.eraseAttr();
  const cols = s.cols;
  switch (n) {
    case 0:
      if (b.x <= cols - 1) s.clearCells(b.y, b.x, cols - b.x, attr);
      s.clearLines(b.y + 1, s.rows - (b.y + 1), attr);
      return;
    case 1:
      s.clearLines(0, b.y, attr);
      if (b.x > cols - 1) s.clearCells(b.y, 0, cols, attr);
      else s.clearCells(b.y, 0, b.x + 1, attr);
      return;
    case 2:
      s.clearLines(0, s.rows, attr);
      return;
    case 3: {
      // screen_write_clearhistory: the history of the grid, which is the main screen's.
      const normal = s.service.buffers.normal;
      const history = normal.ybase;
      if (history > 0) {
        normal.lines.trimStart(history);
        normal.ybase = 0;
        normal.ydisp = 0;
      }
      return;
    }
  }
}

function eraseLine(s: TmuxScreen, n: number): void {
  const b = s.b;
  const attr = s.eraseAttr();
  const cols = s.cols;
  switch (n) {
    case 0:
      if (b.x === 0) s.clearLines(b.y, 1, attr);
      else if (b.x <= cols - 1) s.clearCells(b.y, b.x, cols - b.x, attr);
      return;
    case 1:
      if (b.x >= cols - 1) s.clearLines(b.y, 1, attr);
      else s.clearCells(b.y, 0, b.x + 1, attr);
      return;
    case 2:
      s.clearLines(b.y, 1, attr);
      return;
  }
}

function insertCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, s.cols - b.x);
  if (n <= 0 || b.x > s.cols - 1) return;
  insertCellsAt(s, b.x, n, s.eraseAttr());
}

/** grid_view_delete_cells: shift left by `n`, the freed tail cleared with the pen's background. */
function deleteCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  const cols = s.cols;
  n = Math.min(n, cols - b.x);
  if (n <= 0 || b.x > cols - 1) return;
  const attr = s.eraseAttr();
  s.moveCells(b.y, b.x, b.x + n, cols - b.x - n, attr);
  s.clearCells(b.y, cols - n, n, attr);
}

function clearCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, s.cols - b.x);
  if (n <= 0 || b.x > s.cols - 1) return;
  s.clearCells(b.y, b.x, n, s.eraseAttr());
}

/** screen_write_insertline (grid_view_insert_lines and its _region form). */
function insertLines(s: TmuxScreen, n: number): void {
  const b = s.b;
  const y = b.y;
  const attr = s.eraseAttr();
  if (y < b.scrollTop || y > b.scrollBottom) {
    n = Math.min(n, s.rows - y);
    if (n === 0) return;
    s.moveLines(y + n, y, s.rows - y - n, attr);
    return;
  }
  n = Math.min(n, b.scrollBottom + 1 - y);
  if (n === 0) return;
  const kept = b.scrollBottom + 1 - y - n;
  s.moveLines(b.scrollBottom + 1 - kept, y, kept, attr);
  if (n > kept) s.clearLines(y + kept, n - kept, attr);
}

/** screen_write_deleteline (grid_view_delete_lines and its _region form). */
function deleteLines(s: TmuxScreen, n: number): void {
  const b = s.b;
  const y = b.y;
  const attr = s.eraseAttr();
  if (y < b.scrollTop || y > b.scrollBottom) {
    n = Math.min(n, s.rows - y);
    if (n === 0) return;
    s.moveLines(y, y + n, s.rows - y - n, attr);
    s.clearLines(s.rows - n, n, attr);
    return;
  }
  n = Math.min(n, b.scrollBottom + 1 - y);
  if (n === 0) return;
  const kept = b.scrollBottom + 1 - y - n;
  s.moveLines(y, y + n, kept, attr);
  if (n > kept) s.clearLines(y + kept, n - kept, attr);
}

function scrollUp(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, b.scrollBottom - b.scrollTop + 1);
  const attr = s.eraseAttr();
  for (let i = 0; i < n; i++) s.scrollRegionUp(attr);
}

function scrollDown(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, b.scrollBottom - b.scrollTop + 1);
  const attr = s.eraseAttr();
  for (let i = 0; i < n; i++) s.scrollRegionDown(attr);
}

/** screen_write_alignmenttest: every cell 'E' (default attributes), the cursor home, the region the whole screen. */
function alignmentTest(s: TmuxScreen): void {
  for (let y = 0; y < s.rows; y++) {
    const line = s.line(y);
    for (let x = 0; x < s.cols; x++) line.setCellFromCodepoint(x, 0x45, 1, s.defaultAttr);
  }
  s.setCursor(0, 0);
  s.b.scrollTop = 0;
  s.b.scrollBottom = s.rows - 1;
}

/** input_save_state (DECSC, SCP). */
function saveState(s: TmuxScreen): void {
  const h = s.handler;
  const cs = h._charsetService;
  s.saved = { pen: h._curAttrData.clone(), glevel: cs.glevel, g0: cs._charsets[0], g1: cs._charsets[1], x: s.b.x, y: s.b.y, origin: s.modes.origin };
}

/** input_restore_state (DECRC, RCP): the pen, both charsets and the shift, the origin mode, then an absolute move. */
function restoreState(s: TmuxScreen): void {
  const h = s.handler;
  const saved = s.saved;
  h._curAttrData = saved.pen.clone();
  const cs = h._charsetService;
  cs.setgCharset(0, saved.g0);
  cs.setgCharset(1, saved.g1);
  cs.setgLevel(saved.glevel);
  s.modes.origin = saved.origin;
  s.cursorMove(saved.x, saved.y, false);
}

/**
 * RIS: input_reset_cell (pen, charsets, the DECSC save) and screen_write_reset (tab stops, the
 * region, every mode but the cursor and wrap off, the screen cleared to default, the cursor home).
 * tmux stays on the alternate screen and keeps the history.
 */
function fullReset(s: TmuxScreen): void {
  const h = s.handler;
  h._curAttrData = s.defaultAttr.clone();
  h._charsetService.reset();
  const origin = s.saved.origin;
  s.saved = { ...s.initialSave(), origin };
  s.b.setupTabStops();
  scrollRegion(s, 0, s.rows - 1);
  h._coreService.reset();
  h._coreService.isCursorHidden = false;
  h._coreMouseService.reset();
  s.clearLines(0, s.rows, s.defaultAttr);
  s.setCursor(0, 0);
}

function setMode(s: TmuxScreen, a: Params, on: boolean): boolean {
  if (a.length !== 1 || a[0] !== 4) return false;
  s.handler._coreService.modes.insertMode = on;
  return true;
}

function setPrivateMode(s: TmuxScreen, a: Params, on: boolean): boolean {
  if (a.length !== 1) return false;
  switch (a[0]) {
    case 6:
      s.modes.origin = on;
      s.cursorMove(0, 0, true);
      return true;
    case 7:
      s.modes.wraparound = on;
      return true;
    case 47:
    case 1047:
      if (on) alternateOn(s, false);
      else alternateOff(s, false);
      return true;
    case 1049:
      if (on) alternateOn(s, true);
      else alternateOff(s, true);
      return true;
    default:
      return false;
  }
}

/**
 * screen_alternate_on: nothing if already on; the 1049 form saves the cursor, every form saves the
 * pen; the alternate screen starts cleared to default cells, with the same region and tab stops
 * (tmux keeps those per pane, xterm per buffer).
 */
function alternateOn(s: TmuxScreen, cursor: boolean): void {
  if (s.alternate) return;
  const normal = s.b;
  if (cursor) s.alternateSave = { x: normal.x, y: normal.y, pen: s.handler._curAttrData.clone() };
  else if (s.alternateSave) s.alternateSave = { ...s.alternateSave, pen: s.handler._curAttrData.clone() };
  const kept = paneState(normal);
  s.service.buffers.activateAltBuffer(s.defaultAttr);
  Object.assign(s.b, kept);
}

/**
 * screen_alternate_off: the 1049 form restores the saved cursor and pen even when not on the
 * alternate screen (and keeps them for the next time); the cursor is then clamped inside the
 * screen, which ends a pending wrap.
 */
function alternateOff(s: TmuxScreen, cursor: boolean): void {
  const saved = s.alternateSave;
  let x = s.b.x;
  let y = s.b.y;
  if (cursor && saved) {
    x = saved.x;
    y = saved.y;
    s.handler._curAttrData = saved.pen.clone();
  }
  if (s.alternate) {
    // Read before the switch: xterm clears the alternate buffer, region and tab stops included.
    const kept = paneState(s.b);
    s.service.buffers.activateNormalBuffer();
    Object.assign(s.b, kept);
  }
  s.b.x = Math.min(x, s.cols - 1);
  s.b.y = Math.min(y, s.rows - 1);
}

/** What tmux keeps per pane and xterm per buffer: the scroll region and the tab stops. */
function paneState(b: BufferShape): Pick<BufferShape, 'scrollTop' | 'scrollBottom' | 'tabs'> {
  return { scrollTop: b.scrollTop, scrollBottom: b.scrollBottom, tabs: { ...b.tabs } };
}
