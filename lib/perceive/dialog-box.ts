/**
 * Boxes drawn with border characters, and what a box holds that makes it a dialog: an option list,
 * a selector, or a row of buttons (`<Yes>` `<No>`). One walk per row, so a screen full of corner
 * characters costs linear time (screens are untrusted).
 */
import { cellStyle, oddOneOut, styleOf, type DialogBox, type DialogCandidate } from './dialog-candidate.js';
import { enumeratedLists, highlightedList, listCandidate, pointedList } from './dialog-list.js';
import { MAX_MATCH_CHARS } from './regex-safety.js';
import type { ScreenCell, ScreenGrid } from './screen.js';

const TOP_LEFT = new Set('┌╭╔┏╒╓+');
const TOP_RIGHT = new Set('┐╮╗┓╕╖+');
const BOTTOM_LEFT = new Set('└╰╚┗╘╙+');
const BOTTOM_RIGHT = new Set('┘╯╝┛╛╜+');
const HORIZONTAL = new Set('─━═╌┄┈-');
const VERTICAL = new Set('│┃║╎┆┊|├┤╟╢╞╡');
/** `<Yes>`, `< OK >`, `[ Cancel ]`. */
const BUTTON = /<\s?[A-Za-z][A-Za-z' ]{0,14}?\s?>|\[\s?[A-Za-z][A-Za-z' ]{0,14}?\s?\]/g;

/** Boxes considered per screen: a real screen has a few; a hostile one must not cost more. */
const MAX_BOXES = 32;

/** Characters of a title in a top border. */
const MAX_TITLE = 48;

/** Boxes drawn with border characters, at least 3 rows and 6 columns, top-most first. */
export function findBoxes(grid: ScreenGrid): DialogBox[] {
  const boxes: DialogBox[] = [];
  for (let y = 0; y + 2 < grid.rows && boxes.length < MAX_BOXES; y++) {
    const row = grid.row(y);
    for (let left = 0; left < row.length; left++) {
      if (!TOP_LEFT.has(row[left]?.ch ?? '')) continue;
      const right = topBorderEnd(row, left);
      if (right === undefined) continue;
      const bottom = boxBottom(grid, y, left, right);
      if (bottom !== undefined) boxes.push({ top: y, bottom, left, right });
      left = right - 1;
    }
  }
  return boxes;
}

/**
 * The column of the top-right corner of a top border starting at `left`, or undefined. One walk
 * to the right, so a screen full of corner characters costs linear time (screens are untrusted):
 * horizontal rules with at most one title segment ("┤ Theme ├", "╭API key───╮").
 */
function topBorderEnd(row: readonly ScreenCell[], left: number): number | undefined {
  let horizontal = 0;
  let title = 0;
  let titles = 0;
  for (let x = left + 1; x < row.length; x++) {
    const ch = row[x]?.ch ?? ' ';
    if (TOP_RIGHT.has(ch) && x - left >= 5 && horizontal * 2 >= x - left - 1) return x;
    if (HORIZONTAL.has(ch)) {
      horizontal++;
      title = 0;
    } else {
      if (title === 0 && ++titles > 1) return undefined;
      if (++title > MAX_TITLE) return undefined;
    }
  }
  return undefined;
}

function mostlyHorizontal(row: readonly ScreenCell[], from: number, to: number): boolean {
  let h = 0;
  for (let x = from; x < to; x++) if (HORIZONTAL.has(row[x]?.ch ?? '')) h++;
  return h * 2 >= to - from;
}

function boxBottom(grid: ScreenGrid, top: number, left: number, right: number): number | undefined {
  for (let y = top + 1; y < grid.rows; y++) {
    const l = grid.cell(left, y).ch;
    const r = grid.cell(right, y).ch;
    if (BOTTOM_LEFT.has(l) && BOTTOM_RIGHT.has(r)) return y >= top + 2 && mostlyHorizontal(grid.row(y), left + 1, right) ? y : undefined;
    if (!VERTICAL.has(l) || !VERTICAL.has(r)) return undefined;
  }
  return undefined;
}

export function boxCandidate(grid: ScreenGrid, box: DialogBox): DialogCandidate | undefined {
  const left = box.left + 1;
  const right = box.right;
  const top = box.top + 1;
  const bottom = box.bottom - 1;
  const base = { top: box.top, bottom: box.bottom, left: box.left, right: box.right, boxRows: box.bottom - box.top + 1, questionRow: firstTextRow(grid, top, bottom, left, right) };
  for (const list of enumeratedLists(grid, left, right, top, bottom)) {
    const c = listCandidate(grid, list, box);
    return { ...c, ...base, structure: new Set(['box', ...c.structure]) };
  }
  const pointed = pointedList(grid, left, right, top, bottom);
  const highlighted = pointed ?? highlightedList(grid, left, right, top, bottom);
  const buttons = buttonRow(grid, left, right, top, bottom);
  if (highlighted) {
    return { ...highlighted, ...base, structure: new Set(['box', ...highlighted.structure, ...(buttons ? (['buttons'] as const) : [])]) };
  }
  if (buttons) return { ...base, structure: new Set(['box', 'buttons']), options: buttons.labels, selected: buttons.selected };
  return undefined;
}

/**
 * A text entry: a one-row box (`╭API key──╮ │sk-…│ ╰──╯`), as the region of the box around it
 * when there is one (the question and its risk words are there, not in the field).
 */
export function fieldCandidate(grid: ScreenGrid, field: DialogBox, boxes: readonly DialogBox[]): DialogCandidate | undefined {
  if (field.bottom - field.top !== 2) return undefined;
  const around = boxes.find((b) => b !== field && b.top < field.top && b.bottom > field.bottom && b.left <= field.left && b.right >= field.right) ?? field;
  const questionRow = firstTextRow(grid, around.top + 1, around.bottom - 1, around.left + 1, around.right);
  return { structure: new Set(['box', 'field']), top: around.top, bottom: around.bottom, left: around.left, right: around.right, options: [], selected: undefined, boxRows: around.bottom - around.top + 1, questionRow };
}

function firstTextRow(grid: ScreenGrid, top: number, bottom: number, left: number, right: number): number {
  for (let y = top; y <= bottom; y++) if (grid.slice(y, left, right).trim() !== '') return y;
  return -1;
}

function buttonRow(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): { labels: string[]; selected: number | undefined } | undefined {
  for (let y = bottom; y >= top; y--) {
    const text = grid.slice(y, left, right);
    const found = [...text.slice(0, MAX_MATCH_CHARS).matchAll(BUTTON)];
    if (found.length < 2) continue;
    const labels = found.map((m) => m[0].slice(1, -1).trim());
    const styles = found.map((m) => {
      const start = grid.columnAt(y, m.index ?? 0, left);
      const style = styleOf(grid, y, start + 1, grid.columnAt(y, (m.index ?? 0) + m[0].length - 1, left));
      // A button drawn like the dialog around it is plain; the focused one stands out (whiptail
      // paints it on another background).
      return start > 0 && style === cellStyle(grid.cell(start - 1, y)) ? '' : style;
    });
    return { labels, selected: oddOneOut(styles) };
  }
  return undefined;
}
