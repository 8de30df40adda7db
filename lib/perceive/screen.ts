/**
 * The screen as perception reads it: the visible rows as text plus, when available, the cells with
 * their attributes. Everything structural (cursor row, box borders, a highlighted option, dim
 * suggestion cells) is read by column from a `ScreenGrid`, so a wide character never shifts a
 * column the way a JavaScript string index would.
 */

/**
 * The attributes perception reads, declared here so that perception compiles without the
 * emulator (docs/architecture.md). The emulator's `Cell` has these and more; the session passes
 * one as the other, and that is where the compiler checks the two agree.
 */
export interface ScreenCell {
  /** The grapheme in the cell; ' ' for a blank cell, '' for the second column of a wide char. */
  readonly ch: string;
  readonly width: 0 | 1 | 2;
  /** Palette index (0–255) or 0xRRGGBB per `fgMode`; -1 when default. */
  readonly fg: number;
  readonly bg: number;
  readonly fgMode: ScreenColorMode;
  readonly bgMode: ScreenColorMode;
  readonly bold: boolean;
  readonly dim: boolean;
  readonly inverse: boolean;
}

export type ScreenColorMode = 'default' | 'palette' | 'rgb';

export interface ScreenCursor {
  /** Column; equals `cols` in the pending-wrap state. */
  readonly x: number;
  readonly y: number;
  readonly visible: boolean;
}

/**
 * What `classifyScreen` reads. `Mirror.snapshot({ format: 'text' })` has every field but `cells`;
 * add `cells: mirror.cells().cells` for the attribute rules (ghost text, highlighted rows).
 * Without cells those rules see plain text and a few verdicts lose confidence.
 */
export interface ClassifierSnapshot {
  /** The visible rows, right-trimmed (`Mirror.snapshot().lines`). */
  readonly lines: readonly string[];
  readonly cursor: ScreenCursor;
  readonly alternate: boolean;
  readonly cols: number;
  readonly rows: number;
  /** `cells[y][x]`; when present, `rows` rows of `cols` cells. */
  readonly cells?: readonly (readonly ScreenCell[])[];
}

export const BLANK_CELL: ScreenCell = Object.freeze({ ch: ' ', width: 1, fg: -1, bg: -1, fgMode: 'default', bgMode: 'default', bold: false, dim: false, inverse: false });

/** Rows of cells, one per column, built from the snapshot's cells or (without them) its text. */
export class ScreenGrid {
  readonly cols: number;
  readonly rows: number;
  readonly cursor: ScreenCursor;
  readonly alternate: boolean;
  /** True when the cells came from the emulator (attributes are real, not assumed default). */
  readonly hasAttributes: boolean;
  readonly #cells: readonly (readonly ScreenCell[])[];
  readonly #text: string[] = [];

  constructor(snapshot: ClassifierSnapshot) {
    this.cols = snapshot.cols;
    this.rows = snapshot.rows;
    this.cursor = snapshot.cursor;
    this.alternate = snapshot.alternate;
    this.hasAttributes = snapshot.cells !== undefined && snapshot.cells.length === snapshot.rows;
    this.#cells = this.hasAttributes ? (snapshot.cells as readonly (readonly ScreenCell[])[]) : snapshot.lines.slice(0, snapshot.rows).map((line) => cellsFromText(line, snapshot.cols));
    for (let y = 0; y < this.rows; y++) this.#text.push(trimSpacesEnd(joinCells(this.row(y), 0, this.cols)));
  }

  row(y: number): readonly ScreenCell[] {
    return this.#cells[y] ?? [];
  }

  cell(x: number, y: number): ScreenCell {
    return this.#cells[y]?.[x] ?? BLANK_CELL;
  }

  /** The row's text, right-trimmed. Wide characters count once (their second column is ''). */
  text(y: number): string {
    return this.#text[y] ?? '';
  }

  /** Text of columns [from, to) of a row, not trimmed. */
  slice(y: number, from: number, to: number): string {
    return joinCells(this.row(y), from, to);
  }

  isBlank(y: number): boolean {
    return this.text(y).trim() === '';
  }

  /** The last row with a non-blank character, or -1 on an empty screen. */
  lastContentRow(): number {
    for (let y = this.rows - 1; y >= 0; y--) if (!this.isBlank(y)) return y;
    return -1;
  }

  /** The column where the character at `index` of `text(y)` (or `slice(y, from, …)`) sits. */
  columnAt(y: number, index: number, from = 0): number {
    const row = this.row(y);
    let seen = 0;
    for (let x = Math.max(0, from); x < row.length; x++) {
      const ch = row[x]?.ch ?? ' ';
      if (seen >= index && ch !== '') return x;
      seen += ch.length;
    }
    return row.length;
  }

  /** Column of the first non-space cell at or after `from`, or -1. */
  firstInk(y: number, from = 0): number {
    const row = this.row(y);
    for (let x = Math.max(0, from); x < row.length; x++) {
      const ch = row[x]?.ch ?? ' ';
      if (ch !== ' ' && ch !== '') return x;
    }
    return -1;
  }

  /** Column just after the last non-space cell, or 0. */
  inkEnd(y: number): number {
    const row = this.row(y);
    for (let x = row.length - 1; x >= 0; x--) {
      const ch = row[x]?.ch ?? ' ';
      if (ch !== ' ' && ch !== '') return x + (row[x]?.width === 2 ? 2 : 1);
    }
    return 0;
  }
}

const BORDERS = new Set('│┃║|');

/**
 * `text` without trailing spaces. Not `replace(/ +$/, '')`: an unanchored ` +$` restarts at every
 * space of a long inner run, quadratic (1.4 ms for one 1000-column row here), and a program can
 * print such rows on purpose.
 */
export function trimSpacesEnd(text: string): string {
  let end = text.length;
  while (end > 0 && text.charCodeAt(end - 1) === 0x20) end--;
  return end === text.length ? text : text.slice(0, end);
}

/**
 * `text` without trailing blanks and one trailing border character (a box's right edge). No
 * regex: `\s*[│]\s*$` backtracks quadratically over a long run of blanks.
 */
export function withoutTrailingBorder(text: string): string {
  const trimmed = text.trimEnd();
  return BORDERS.has(trimmed.slice(-1)) ? trimmed.slice(0, -1).trimEnd() : trimmed;
}

function joinCells(row: readonly ScreenCell[], from: number, to: number): string {
  let s = '';
  for (let x = Math.max(0, from); x < Math.min(to, row.length); x++) s += row[x]?.ch ?? ' ';
  return s;
}

/**
 * Cells for a line of text when the emulator's cells are not available: one column per code
 * point, East Asian wide and emoji code points taking two (an approximation of wcwidth).
 */
export function cellsFromText(line: string, cols: number): ScreenCell[] {
  const out: ScreenCell[] = [];
  for (const ch of line) {
    if (out.length >= cols) break;
    const wide = isWide(ch.codePointAt(0) ?? 0);
    out.push(wide ? { ...BLANK_CELL, ch, width: 2 } : ch === ' ' ? BLANK_CELL : { ...BLANK_CELL, ch });
    if (wide && out.length < cols) out.push({ ...BLANK_CELL, ch: '', width: 0 });
  }
  while (out.length < cols) out.push(BLANK_CELL);
  return out;
}

/** The wide ranges that matter on screens (CJK, Hangul, fullwidth forms, emoji). */
const WIDE_RANGES: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x20000, 0x3fffd],
];

function isWide(cp: number): boolean {
  if (cp < 0x1100) return false;
  return WIDE_RANGES.some(([lo, hi]) => cp >= lo && cp <= hi);
}
