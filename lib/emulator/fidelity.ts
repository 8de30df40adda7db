/**
 * Proves the mirror equals tmux's grid (invariant 6): tmux's own capture of the visible screen is
 * painted into a scratch terminal of the same size and compared with the mirror cell by cell,
 * attributes included, plus the cursor.
 *
 * One blind spot of tmux 3.3a: capture-pane stops at the last written cell of a row, so blank
 * cells after it that tmux cleared with a background colour (EL, ED or a scroll with a colour
 * set) come back as nothing. Measured: `ab ESC[44m ESC[K` holds blue cells to the end of the row,
 * and the capture shows "ab". Those cells, and only those, are checked for being blank without
 * attributes; their background cannot be known from the capture.
 */
import { TmuxDriveError } from '../common/errors.js';
import { captureReplay, splitCaptureRows } from './capture-replay.js';
import { CELL_FLAGS, readVisibleCells, type Cell } from './cell-grid.js';
import { createTerminal } from './headless.js';
import type { Mirror } from './mirror.js';

export interface CellMismatch {
  readonly row: number;
  readonly col: number;
  /** The cell as tmux has it, e.g. `"a" fg=palette:1 bold`. */
  readonly expected: string;
  readonly actual: string;
}

export interface FidelityReport {
  readonly equal: boolean;
  /** The first MAX_REPORTED mismatches, row by row. */
  readonly mismatches: readonly CellMismatch[];
  readonly mismatchCount: number;
  readonly cursorMatches: boolean;
}

/** Enough to see the pattern of a divergence without copying a whole screen into a report. */
const MAX_REPORTED = 20;

/**
 * @param visibleCapture `capture-pane -p -e -N` of the visible screen (no -J), rows separated by \n.
 * @param cursor tmux's `cursor_x`/`cursor_y` (cursor_x may equal the width: pending wrap).
 */
export function compareWithCapture(mirror: Mirror, visibleCapture: Uint8Array, cursor: { readonly x: number; readonly y: number }): FidelityReport {
  const actual = mirror.cells();
  const painted = paintCapture(visibleCapture, actual.cols, actual.rows);
  const mismatches: CellMismatch[] = [];
  let mismatchCount = 0;
  for (let row = 0; row < actual.rows; row++) {
    const mirrorRow = actual.cells[row] ?? [];
    const rowMismatches: CellMismatch[] = [];
    for (let col = 0; col < actual.cols; col++) {
      const e = painted.cells[row]?.[col];
      const a = mirrorRow[col];
      if (e && a && (painted.captured[row]?.[col] ? sameCell(e, a) : blankTail(a))) continue;
      rowMismatches.push({ row, col, expected: e ? describeCell(e) : '(none)', actual: a ? describeCell(a) : '(none)' });
    }
    if (rowMismatches.length === 0 || (hasCutWideCharacter(mirrorRow) && sameInCaptureOrder(mirrorRow, painted.cells[row] ?? [], painted.captured[row] ?? []))) continue;
    mismatchCount += rowMismatches.length;
    mismatches.push(...rowMismatches.slice(0, MAX_REPORTED - mismatches.length));
  }
  const cursorMatches = actual.cursor.x === cursor.x && actual.cursor.y === cursor.y;
  return { equal: mismatchCount === 0 && cursorMatches, mismatches, mismatchCount, cursorMatches };
}

/**
 * tmux 3.3a can hold a wide character without its second half (the half overwritten by a plain
 * character through the collect path, which does not clear a wide character in column 0; or
 * shifted to the last column by an insert). Its capture lists the cells in order and drops the
 * missing half, so the position of what follows is lost: such a row is compared in capture order.
 */
function hasCutWideCharacter(row: readonly Cell[]): boolean {
  return row.some((c, x) => c.width === 2 && row[x + 1]?.width !== 0);
}

/** The row's cells as the capture lists them (second halves of wide characters left out), then blank tails. */
function sameInCaptureOrder(mirrorRow: readonly Cell[], paintedRow: readonly Cell[], captured: readonly boolean[]): boolean {
  const listed = (cells: readonly Cell[]): Cell[] => cells.filter((c) => c.width !== 0);
  const expected = listed(paintedRow.filter((_c, x) => captured[x]));
  const actual = listed(mirrorRow);
  return expected.every((e, i) => actual[i] !== undefined && sameCell(e, actual[i] as Cell)) && actual.slice(expected.length).every(blankTail);
}

/**
 * Paints the capture into a scratch terminal twice as wide as the pane plus two columns, so that
 * no row wraps into the next even when a cut wide character makes it longer than the pane.
 */
function paintCapture(capture: Uint8Array, cols: number, rows: number): { cells: Cell[][]; captured: boolean[][] } {
  const width = cols * 2 + 2;
  const { term, internals } = createTerminal(width, rows, 0);
  try {
    if (!internals) {
      throw new TmuxDriveError('BAD_ARGUMENT', 'the fidelity check needs the synchronous parser of @xterm/headless 6.0.0', { cols, rows });
    }
    internals.writeSync(captureReplay(splitCaptureRows(capture).slice(0, rows)).build());
    // A cell the capture never wrote is still xterm's null cell (code 0, not a written space).
    const captured: boolean[][] = [];
    const active = term.buffer.active;
    for (let y = 0; y < rows; y++) {
      const line = active.getLine(active.baseY + y);
      const row: boolean[] = [];
      for (let x = 0; x < width; x++) {
        const c = line?.getCell(x);
        row.push(c !== undefined && (c.getCode() !== 0 || c.getWidth() === 0));
      }
      captured.push(row);
    }
    return { cells: readVisibleCells(term), captured };
  } finally {
    term.dispose();
  }
}

/** What an uncaptured cell may hold: a blank with at most a background colour. */
function blankTail(a: Cell): boolean {
  return a.ch === ' ' && a.width === 1 && a.fgMode === 'default' && CELL_FLAGS.every((f) => !a[f]);
}

function sameCell(e: Cell, a: Cell): boolean {
  if (e.ch !== a.ch || e.width !== a.width) return false;
  if (e.fgMode !== a.fgMode || e.fg !== a.fg || e.bgMode !== a.bgMode || e.bg !== a.bg) return false;
  return CELL_FLAGS.every((f) => e[f] === a[f]);
}

export function describeCell(c: Cell): string {
  const parts = [JSON.stringify(c.ch)];
  if (c.width !== 1) parts.push(`width=${c.width}`);
  if (c.fgMode !== 'default') parts.push(`fg=${c.fgMode}:${c.fgMode === 'rgb' ? `#${c.fg.toString(16).padStart(6, '0')}` : c.fg}`);
  if (c.bgMode !== 'default') parts.push(`bg=${c.bgMode}:${c.bgMode === 'rgb' ? `#${c.bg.toString(16).padStart(6, '0')}` : c.bg}`);
  for (const f of CELL_FLAGS) if (c[f]) parts.push(f);
  return parts.join(' ');
}
