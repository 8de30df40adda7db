/**
 * The visible grid as plain data: what perception reads (a dim suggestion is a run of `dim`
 * cells) and what the fidelity check compares cell by cell.
 */
import type { BufferCell, HeadlessTerminal } from './headless.js';

export type ColorMode = 'default' | 'palette' | 'rgb';

export interface Cell {
  /** The grapheme in the cell; ' ' for a blank cell, '' for the second column of a wide char. */
  readonly ch: string;
  readonly width: 0 | 1 | 2;
  /** Palette index (0–255) or 0xRRGGBB per `fgMode`; -1 when default. */
  readonly fg: number;
  readonly bg: number;
  readonly fgMode: ColorMode;
  readonly bgMode: ColorMode;
  readonly bold: boolean;
  readonly dim: boolean;
  readonly italic: boolean;
  readonly underline: boolean;
  readonly inverse: boolean;
  readonly invisible: boolean;
  readonly strikethrough: boolean;
  readonly blink: boolean;
  readonly overline: boolean;
}

export interface CursorState {
  /** Column; equals `cols` in the pending-wrap state, as tmux's cursor_x does. */
  readonly x: number;
  readonly y: number;
  readonly visible: boolean;
}

export interface CellGrid {
  readonly cols: number;
  readonly rows: number;
  /** `cells[y][x]`, exactly `rows` rows of `cols` cells. */
  readonly cells: readonly (readonly Cell[])[];
  readonly cursor: CursorState;
  readonly alternate: boolean;
}

/** The boolean attributes in a fixed order: the digest and the comparison walk this table. */
export const CELL_FLAGS = ['bold', 'dim', 'italic', 'underline', 'inverse', 'invisible', 'strikethrough', 'blink', 'overline'] as const;
export type CellFlag = (typeof CELL_FLAGS)[number];

function colorOf(isDefault: boolean, isRgb: boolean, value: number): [ColorMode, number] {
  if (isDefault) return ['default', -1];
  return [isRgb ? 'rgb' : 'palette', value];
}

export function readCell(c: BufferCell): Cell {
  const width = c.getWidth() as 0 | 1 | 2;
  const chars = c.getChars();
  // Most of a screen: default pen, one column, ASCII or nothing. (Attribute default: xterm's fg and
  // bg words are 0, colours and every flag with them.)
  if (width === 1 && chars.length <= 1 && c.isAttributeDefault()) {
    const shared = PLAIN_ASCII[chars === '' ? 0 : chars.charCodeAt(0)];
    if (shared) return shared;
  }
  const [fgMode, fg] = colorOf(c.isFgDefault(), c.isFgRGB(), c.getFgColor());
  const [bgMode, bg] = colorOf(c.isBgDefault(), c.isBgRGB(), c.getBgColor());
  return {
    ch: width === 0 ? '' : chars === '' ? ' ' : chars,
    width,
    fg,
    bg,
    fgMode,
    bgMode,
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

/** The visible rows of the active buffer. */
export function readVisibleCells(term: HeadlessTerminal): Cell[][] {
  const buffer = term.buffer.active;
  const scratch = buffer.getNullCell();
  const rows: Cell[][] = [];
  for (let y = 0; y < term.rows; y++) {
    const line = buffer.getLine(buffer.baseY + y);
    const row: Cell[] = [];
    for (let x = 0; x < term.cols; x++) {
      const c = line?.getCell(x, scratch);
      row.push(c ? readCell(c) : BLANK);
    }
    rows.push(row);
  }
  return rows;
}

const BLANK: Cell = {
  ch: ' ',
  width: 1,
  fg: -1,
  bg: -1,
  fgMode: 'default',
  bgMode: 'default',
  bold: false,
  dim: false,
  italic: false,
  underline: false,
  inverse: false,
  invisible: false,
  strikethrough: false,
  blink: false,
  overline: false,
};

/**
 * The cells `readCell` would make for a default-pen, one-column cell holding nothing (index 0, the
 * same cell as a space) or a printable ASCII character, made once and shared (frozen): a verdict read every visible cell, an
 * object and two arrays each, 4,800 of them at 120×40 (a many-streams profile, 2026-12-02).
 */
const PLAIN_ASCII: readonly (Cell | undefined)[] = Array.from({ length: 0x7f }, (_, code) => (code >= 0x20 ? Object.freeze({ ...BLANK, ch: String.fromCharCode(code) }) : undefined));
(PLAIN_ASCII as (Cell | undefined)[])[0] = PLAIN_ASCII[0x20];

const SGR_FLAG_CODES: Readonly<Record<CellFlag, number>> = {
  bold: 1,
  dim: 2,
  italic: 3,
  underline: 4,
  blink: 5,
  inverse: 7,
  invisible: 8,
  strikethrough: 9,
  overline: 53,
};

function colorSgr(mode: ColorMode, value: number, base: 30 | 40): string {
  if (mode === 'default') return '';
  if (mode === 'rgb') return `;${base + 8};2;${(value >> 16) & 0xff};${(value >> 8) & 0xff};${value & 0xff}`;
  if (value < 8) return `;${base + value}`;
  if (value < 16) return `;${base + 60 + value - 8}`;
  return `;${base + 8};5;${value}`;
}

/** An SGR sequence that sets exactly this cell's attributes (from a reset). */
export function sgrOf(cell: Cell): string {
  let s = '\x1b[0';
  for (const flag of CELL_FLAGS) if (cell[flag]) s += `;${SGR_FLAG_CODES[flag]}`;
  return `${s}${colorSgr(cell.fgMode, cell.fg, 30)}${colorSgr(cell.bgMode, cell.bg, 40)}m`;
}
