/**
 * gridDigest reads xterm's cells straight into the hash; the oracle here is the digest as it was
 * built before, from `readVisibleCells` (the `Cell` objects perception reads): the same bytes, so
 * the same value, on any screen.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Fnv1a64 } from '../../lib/common/fnv1a64.js';
import { CELL_FLAGS, readVisibleCells, type Cell } from '../../lib/emulator/cell-grid.js';
import { gridDigest } from '../../lib/emulator/grid-digest.js';
import { createTerminal, type HeadlessTerminal } from '../../lib/emulator/headless.js';

const terms: HeadlessTerminal[] = [];
afterEach(() => {
  for (const t of terms.splice(0)) t.dispose();
});

function oracle(term: HeadlessTerminal, cursor: { x: number; y: number; visible: boolean }, alternate: boolean): string {
  const h = new Fnv1a64();
  for (const n of [term.cols, term.rows, cursor.x, cursor.y]) h.u32(n);
  h.byte(cursor.visible ? 1 : 0);
  h.byte(alternate ? 1 : 0);
  const mode = { default: 0, palette: 1, rgb: 2 } as const;
  for (const row of readVisibleCells(term)) {
    for (const cell of row as Cell[]) {
      h.str(cell.ch);
      h.byte(cell.width);
      h.u32(cell.fg);
      h.u32(cell.bg);
      h.byte(mode[cell.fgMode] | (mode[cell.bgMode] << 2));
      let flags = 0;
      CELL_FLAGS.forEach((f, i) => {
        if (cell[f]) flags |= 1 << i;
      });
      h.u32(flags);
    }
  }
  return h.hex();
}

const PIECES = ['a', 'é', '中', '😀', ' ', '\r\n', '\x1b[1m', '\x1b[2m', '\x1b[3;4;5;7;8;9;53m', '\x1b[0m', '\x1b[31m', '\x1b[48;5;200m', '\x1b[38;2;1;2;3m',
  '\x1b[?1049h', '\x1b[?1049l', '\x1b[H', '\x1b[2J', '\x1b[5;7H', '\x1b[K', 'x'.repeat(50), '\x1b[?25l', 'e\u0301'];

describe('gridDigest', () => {
  it('hashes the bytes readVisibleCells gives, on any screen', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.constantFrom(...PIECES), { maxLength: 60 }), fc.boolean(), fc.boolean(), async (pieces, visible, alternate) => {
        const { term } = createTerminal(30, 8, 20, () => undefined);
        terms.push(term);
        await new Promise<void>((resolve) => term.write(pieces.join(''), resolve));
        const cursor = { x: term.buffer.active.cursorX, y: term.buffer.active.cursorY, visible };
        expect(gridDigest(term, cursor, alternate)).toBe(oracle(term, cursor, alternate));
      }),
      { numRuns: 150 },
    );
  });
});
