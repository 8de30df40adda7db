/**
 * The editing sequences as tmux 3.3a's screen-write.c runs them: cursor moves (clamped to the
 * region or the screen, the pending wrap kept or ended as tmux does), tabs, erases, character and
 * line insertion and deletion, scrolls, REP, the alignment test. Each takes the parameters the
 * input filter emitted (one canonical form per sequence).
 */
import { insertCellsAt, print } from './print.js';
import type { TmuxScreen } from './tmux-screen.js';

export type Params = (number | number[])[];

/** input_get as the filter already applied it: the emitted values are plain numbers ≥ 1 or absent. */
export function param(params: Params, i: number, fallback: number): number {
  const p = params[i];
  return typeof p === 'number' && p > 0 ? p : fallback;
}

/** input.c REP (`CSI < ch ; n b` from the filter): n times, but never past the last column. */
export function repeat(s: TmuxScreen, a: Params): void {
  const ch = a[0];
  const n = a[1];
  if (typeof ch !== 'number' || typeof n !== 'number') return;
  const count = Math.max(0, Math.min(n, s.cols - s.b.x));
  if (count > 0) print(s, new Uint32Array(count).fill(ch), 0, count);
}

/** screen_write_backspace: at column 0, up to the end of the line above when that one wrapped. */
export function backspace(s: TmuxScreen): void {
  const b = s.b;
  if (b.x === 0) {
    if (b.y === 0) return;
    if (s.wrapped.has(s.line(b.y - 1))) s.setCursor(s.cols - 1, b.y - 1);
    return;
  }
  s.setCursor(b.x - 1, -1);
}

/** input_c0_dispatch HT: never past the last column; from there, nothing. */
export function tab(s: TmuxScreen): void {
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
export function backTab(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = Math.min(b.x, s.cols - 1);
  while (x > 0 && n-- > 0) {
    do x--;
    while (x > 0 && !b.tabs[x]);
  }
  b.x = x;
}

export function cursorUp(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = b.x;
  const y = b.y;
  if (y < b.scrollTop) n = Math.min(n, y);
  else n = Math.min(n, y - b.scrollTop);
  if (x === s.cols) x--;
  s.setCursor(x, y - n);
}

export function cursorDown(s: TmuxScreen, n: number): void {
  const b = s.b;
  let x = b.x;
  const y = b.y;
  if (y > b.scrollBottom) n = Math.min(n, s.rows - 1 - y);
  else n = Math.min(n, b.scrollBottom - y);
  if (x === s.cols) x--;
  else if (n === 0) return;
  s.setCursor(x, y + n);
}

export function cursorRight(s: TmuxScreen, n: number): void {
  const b = s.b;
  // u_int arithmetic: from the pending wrap column the limit wraps around and does not apply.
  const room = s.cols - 1 - b.x;
  if (room >= 0 && n > room) n = room;
  if (n === 0) return;
  s.setCursor(b.x + n, -1);
}

export function cursorLeft(s: TmuxScreen, n: number): void {
  const b = s.b;
  if (n > b.x) n = b.x;
  if (n === 0) return;
  s.setCursor(b.x - n, -1);
}

export function reverseIndex(s: TmuxScreen): void {
  const b = s.b;
  if (b.y === b.scrollTop) s.scrollRegionDown(s.eraseAttr());
  else if (b.y > 0) s.setCursor(-1, b.y - 1);
}

/** screen_write_scrollregion: ignored unless at least two lines; the cursor goes to the top left (not origin-relative). */
export function scrollRegion(s: TmuxScreen, upper: number, lower: number): void {
  const last = s.rows - 1;
  if (upper > last) upper = last;
  if (lower > last) lower = last;
  if (upper >= lower) return;
  s.setCursor(0, 0);
  s.b.scrollTop = upper;
  s.b.scrollBottom = lower;
}

export function eraseDisplay(s: TmuxScreen, n: number): void {
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

export function eraseLine(s: TmuxScreen, n: number): void {
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

export function insertCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, s.cols - b.x);
  if (n <= 0 || b.x > s.cols - 1) return;
  insertCellsAt(s, b.x, n, s.eraseAttr());
}

/** grid_view_delete_cells: shift left by `n`, the freed tail cleared with the pen's background. */
export function deleteCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  const cols = s.cols;
  n = Math.min(n, cols - b.x);
  if (n <= 0 || b.x > cols - 1) return;
  const attr = s.eraseAttr();
  s.moveCells(b.y, b.x, b.x + n, cols - b.x - n, attr);
  s.clearCells(b.y, cols - n, n, attr);
}

export function clearCharacters(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, s.cols - b.x);
  if (n <= 0 || b.x > s.cols - 1) return;
  s.clearCells(b.y, b.x, n, s.eraseAttr());
}

/** screen_write_insertline (grid_view_insert_lines and its _region form). */
export function insertLines(s: TmuxScreen, n: number): void {
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
export function deleteLines(s: TmuxScreen, n: number): void {
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

export function scrollUp(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, b.scrollBottom - b.scrollTop + 1);
  const attr = s.eraseAttr();
  for (let i = 0; i < n; i++) s.scrollRegionUp(attr);
}

export function scrollDown(s: TmuxScreen, n: number): void {
  const b = s.b;
  n = Math.min(n, b.scrollBottom - b.scrollTop + 1);
  const attr = s.eraseAttr();
  for (let i = 0; i < n; i++) s.scrollRegionDown(attr);
}

/** screen_write_alignmenttest: every cell 'E' (default attributes), the cursor home, the region the whole screen. */
export function alignmentTest(s: TmuxScreen): void {
  for (let y = 0; y < s.rows; y++) {
    const line = s.line(y);
    for (let x = 0; x < s.cols; x++) line.setCellFromCodepoint(x, 0x45, 1, s.defaultAttr);
  }
  s.setCursor(0, 0);
  s.b.scrollTop = 0;
  s.b.scrollBottom = s.rows - 1;
}
