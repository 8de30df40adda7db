/**
 * readCell's shared cells: a default-pen, one-column cell holding nothing or printable ASCII is
 * one frozen object per character, and reads exactly as a cell read field by field from xterm's
 * public API does. Checked against that reading on a screen of every kind of cell the classifier
 * and the fidelity check meet: pens, flags, colours of each mode, wide and joined characters,
 * blanks erased with a colour, blanks never written.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { readCell, readVisibleCells, type Cell } from '../../lib/emulator/cell-grid.js';
import { createTerminal, type BufferCell } from '../../lib/emulator/headless.js';
import { Mirror } from '../../lib/emulator/mirror.js';

const enc = new TextEncoder();
const mirrors: Mirror[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

/** Every field from the public API, one call each (readCell's rule, written out). */
function fieldByField(c: BufferCell): Cell {
  const width = c.getWidth() as 0 | 1 | 2;
  const chars = c.getChars();
  const mode = (isDefault: boolean, isRgb: boolean): Cell['fgMode'] => (isDefault ? 'default' : isRgb ? 'rgb' : 'palette');
  return {
    ch: width === 0 ? '' : chars === '' ? ' ' : chars,
    width,
    fg: c.isFgDefault() ? -1 : c.getFgColor(),
    bg: c.isBgDefault() ? -1 : c.getBgColor(),
    fgMode: mode(c.isFgDefault(), c.isFgRGB()),
    bgMode: mode(c.isBgDefault(), c.isBgRGB()),
    bold: c.isBold() !== 0,
    dim: c.isDim() !== 0,
    italic: c.isItalic() !== 0,
    underline: c.isUnderline() !== 0,
    inverse: c.isInverse() !== 0,
    invisible: c.isInvisible() !== 0,
    strikethrough: c.isStrikethrough() !== 0,
    blink: c.isBlink() !== 0,
    overline: c.isOverline() !== 0,
  };
}

const SCREEN = [
  'plain ASCII ~!@#$%^&*()_+{}|:"<>? 0123456789',
  '\x1b[1mbold\x1b[0m \x1b[2mdim\x1b[0m \x1b[3mit\x1b[0m \x1b[4mul\x1b[0m \x1b[7minv\x1b[0m \x1b[8mhid\x1b[0m \x1b[9mst\x1b[0m \x1b[5mbl\x1b[0m \x1b[53mov\x1b[0m',
  '\x1b[31mred\x1b[0m \x1b[38;5;200mpal\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m \x1b[44mbg\x1b[0m \x1b[48;2;9;8;7mbgrgb\x1b[0m \x1b[39;49mdefault again',
  'wide 中😀 joined e\u0301 a\u200db end',
  '\x1b[45m\x1b[K\x1b[0m',
  '\x1b[4:3mcurly\x1b[0m \x1b[58;5;3munderline colour\x1b[0m',
].join('\r\n');

describe('readCell', () => {
  it('reads every cell as the field-by-field reading does, sharing the default-pen ASCII ones', () => {
    const m = new Mirror({ cols: 60, rows: 8, scrollback: 10 });
    mirrors.push(m);
    m.write(enc.encode(SCREEN));
    const cells = m.cells().cells;
    expect(cells).toHaveLength(8);
    const seen = new Map<string, Cell>();
    let shared = 0;
    for (const row of cells) {
      for (const cell of row) {
        if (!Object.isFrozen(cell)) continue;
        shared++;
        expect(cell).toMatchObject({ width: 1, fgMode: 'default', bgMode: 'default', bold: false, dim: false, inverse: false, underline: false });
        const before = seen.get(cell.ch);
        if (before) expect(cell).toBe(before);
        else seen.set(cell.ch, cell);
      }
    }
    // The plain characters and the blanks never written are shared; none of the styled ones.
    expect(shared).toBeGreaterThan(60 * 8 - 200);
    expect(seen.get(' ')).toBeDefined();
  });
});

describe('readVisibleCells', () => {
  it('equals the field-by-field reading of the same terminal', async () => {
    const { term } = createTerminal(60, 8, 10);
    try {
      await new Promise<void>((resolve) => term.write(enc.encode(SCREEN), resolve));
      const buffer = term.buffer.active;
      const expected: Cell[][] = [];
      for (let y = 0; y < term.rows; y++) {
        const line = buffer.getLine(buffer.baseY + y);
        const row: Cell[] = [];
        for (let x = 0; x < term.cols; x++) {
          const c = line?.getCell(x);
          if (c) row.push(fieldByField(c));
        }
        expect(row).toHaveLength(term.cols);
        expected.push(row);
      }
      expect(readVisibleCells(term)).toEqual(expected);
      // And one cell at a time.
      const c = buffer.getLine(buffer.baseY)?.getCell(0);
      expect(c && readCell(c)).toEqual(c && fieldByField(c));
    } finally {
      term.dispose();
    }
  });
});
