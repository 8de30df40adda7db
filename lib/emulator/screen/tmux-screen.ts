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
 * history). Each tmux function the terminal needs is ported, line by line, and installed as the
 * handler of the sequence the input filter (../input/tmux-input-filter.ts) emits for it; the
 * differential fuzzer (tools/fuzz.ts) checks the result against real tmux.
 *
 * The rooms of the port: this file (the state tmux keeps and the grid primitives of grid.c and
 * grid-view.c, on xterm's buffer), print.ts (screen_write_cell: wrap, overwrite, join),
 * screen-write.ts (cursor moves, erases, insertions, scrolls), modes.ts (DECSC, RIS, modes, the
 * alternate screen), install-tmux-screen.ts (the probe, and the tables that bind each sequence to
 * its function), xterm-core.ts (the private members used).
 *
 * The port works on xterm.js's private core (buffer lines, pen, modes, charsets). installTmuxScreen
 * probes those members and installs nothing when one is missing: another xterm version falls back
 * to xterm's own behaviour, and the fidelity check reports the difference.
 */
import { ChangedRows } from './changed-rows.js';
import type { AttrShape, BufferServiceShape, BufferShape, CellShape, CoreServiceShape, InputHandlerShape, LineShape } from './xterm-core.js';

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
  /** Rows fetched since the baseline last read them (changed-rows.ts). */
  readonly changedRows = new ChangedRows();
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
    // Every write reaches a line here: the rows it may change (changed-rows.ts).
    this.changedRows.mark(y);
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
