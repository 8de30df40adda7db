/**
 * The mirror's digest: a stable hash of the visible grid (chars, widths, colours, attributes), the
 * cursor and the alternate-screen flag. Settle detection compares it, so equal grids hash equal.
 */
import { Fnv1a64 } from '../common/fnv1a64.js';
import { CELL_FLAGS, readVisibleCells, type Cell, type CursorState } from './cell-grid.js';
import type { HeadlessTerminal } from './headless.js';

export function gridDigest(term: HeadlessTerminal, cursor: CursorState, alternate: boolean): string {
  const h = new Fnv1a64();
  h.u32(term.cols);
  h.u32(term.rows);
  h.u32(cursor.x);
  h.u32(cursor.y);
  h.byte(cursor.visible ? 1 : 0);
  h.byte(alternate ? 1 : 0);
  for (const row of readVisibleCells(term)) {
    for (const cell of row) hashCell(h, cell);
  }
  return h.hex();
}

function hashCell(h: Fnv1a64, cell: Cell): void {
  h.str(cell.ch);
  h.byte(cell.width);
  h.u32(cell.fg);
  h.u32(cell.bg);
  h.byte(MODE_CODE[cell.fgMode] | (MODE_CODE[cell.bgMode] << 2));
  let flags = 0;
  CELL_FLAGS.forEach((f, i) => {
    if (cell[f]) flags |= 1 << i;
  });
  h.u32(flags);
}

const MODE_CODE = { default: 0, palette: 1, rgb: 2 } as const;
