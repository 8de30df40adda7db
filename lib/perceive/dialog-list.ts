/**
 * Option lists on a screen: enumerated rows (`1. …`, `2) …`), a list with one row marked by a
 * pointer glyph, or rows in one column of which exactly one is highlighted; with the rows above
 * that hold the question and the context a permission dialog names.
 */
import { oddOneOut, styleOf, type DialogBox, type DialogCandidate, type DialogStructure } from './dialog-candidate.js';
import { MAX_MATCH_CHARS } from './regex-safety.js';
import { withoutTrailingBorder, type ScreenGrid } from './screen.js';

/** Glyphs that mark the current option of a list. */
const POINTERS = '❯›>▶►→●◉◆▸*';

/** `1. label`, `2) label`, optionally behind a pointer. */
const ENUMERATED = new RegExp(`^(\\s*)([${POINTERS}]\\s*)?(\\d{1,2})[.)]\\s+(\\S.*)$`, 'u');

/** A pointer, then a label. */
const POINTED = new RegExp(`^(\\s*)[${POINTERS}]\\s+(\\S.*)$`, 'u');

/** Rows above a list searched for its question. */
const QUESTION_ROWS = 6;

/** Rows above a list that belong to its dialog (the command a permission dialog names). */
const CONTEXT_ROWS = 8;

/** A row that is only a rule or a border: a dialog's frame. */
const RULE_ROW = /^[─━═╌┄┈\-╭╮╰╯┌┐└┘]{3,}$/u;

interface Option {
  readonly y: number;
  readonly x: number;
  readonly label: string;
  readonly pointer: boolean;
}

/** Runs of `n.`-numbered rows (consecutive numbers, the number in one column, small gaps). */
export function* enumeratedLists(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): Generator<Option[]> {
  let run: (Option & { n: number })[] = [];
  const flush = function* (): Generator<Option[]> {
    if (run.length >= 2) yield run;
    run = [];
  };
  for (let y = top; y <= bottom; y++) {
    const text = grid.slice(y, left, right);
    const m = ENUMERATED.exec(text.length > MAX_MATCH_CHARS ? text.slice(0, MAX_MATCH_CHARS) : text);
    if (!m) {
      const prev = run[run.length - 1];
      if (prev && y - prev.y > 3) yield* flush();
      continue;
    }
    const n = Number(m[3]);
    const numX = grid.columnAt(y, (m[1] ?? '').length + (m[2] ?? '').length, left);
    const option = { y, x: numX, n, label: withoutTrailingBorder(m[4] ?? '').trim(), pointer: m[2] !== undefined };
    const prev = run[run.length - 1];
    if (prev && (n !== prev.n + 1 || numX !== prev.x || y - prev.y > 3)) yield* flush();
    if (run.length === 0 && n > 1) continue;
    run.push(option);
  }
  yield* flush();
}

export function listCandidate(grid: ScreenGrid, list: readonly Option[], box: DialogBox | undefined): DialogCandidate {
  const first = list[0] as Option;
  const lastOption = list[list.length - 1] as Option;
  const structure = new Set<DialogStructure>(['options']);
  let selected: number | undefined;
  const pointed = list.filter((o) => o.pointer);
  if (pointed.length === 1) selected = list.indexOf(pointed[0] as Option);
  else selected = oddOneOut(list.map((o) => styleOf(grid, o.y, o.x, box ? box.right : grid.cols)));
  if (selected !== undefined) structure.add('selector');
  // Description rows indented under the last option belong to it.
  let bottom = lastOption.y;
  while (bottom + 1 < grid.rows && !grid.isBlank(bottom + 1) && grid.firstInk(bottom + 1) > lastOption.x && bottom + 1 - lastOption.y <= 2) bottom++;
  const questionRow = questionAbove(grid, first.y, box ? box.top : -1);
  return { structure, top: contextTop(grid, first.y, box ? box.top : -1), bottom, left: 0, right: grid.cols - 1, options: list.map((o) => o.label), selected, boxRows: undefined, questionRow };
}

/**
 * The first row of what a list asks about: up to CONTEXT_ROWS above it, stopping under a rule or
 * border (where the dialog's frame begins) or at `limit`. A permission dialog names its command
 * there ("Bash command / rm -rf build / Do you want to proceed?"), and risk words are sought in it.
 */
function contextTop(grid: ScreenGrid, y: number, limit: number): number {
  let top = y;
  for (let q = y - 1; q > limit && q >= y - CONTEXT_ROWS; q--) {
    if (RULE_ROW.test(grid.text(q).trim())) break;
    if (!grid.isBlank(q)) top = q;
  }
  return top;
}

/** The nearest non-blank row above `y` (within QUESTION_ROWS, not past `limit`) that is not a list row. */
function questionAbove(grid: ScreenGrid, y: number, limit: number): number {
  for (let q = y - 1; q > limit && q >= y - QUESTION_ROWS; q--) {
    const text = grid.text(q).trim();
    if (text === '' || /^[│┃║|─━═╭╮╰╯┌┐└┘]+$/u.test(text)) continue;
    return q;
  }
  return -1;
}

/** One row marked by a pointer glyph among contiguous rows whose labels start in the same column. */
export function pointedList(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): DialogCandidate | undefined {
  for (let y = top; y <= bottom; y++) {
    const text = grid.slice(y, left, right);
    const m = POINTED.exec(text.length > MAX_MATCH_CHARS ? text.slice(0, MAX_MATCH_CHARS) : text);
    if (!m) continue;
    const labelX = grid.columnAt(y, text.length - (m[2] ?? '').length, left);
    const siblings = (from: number, step: number): number[] => {
      const out: number[] = [];
      for (let s = from + step; s >= top && s <= bottom; s += step) {
        if (grid.firstInk(s, left) !== labelX || grid.cell(labelX - 1, s).ch !== ' ') break;
        // A status row under a list ("200/200 ────") is drawn with a rule, an option is not.
        if (/[─━═]{3}/u.test(grid.slice(s, labelX, right))) break;
        out.push(s);
      }
      return out;
    };
    const above = siblings(y, -1);
    const below = siblings(y, 1);
    if (above.length + below.length === 0) continue;
    const rows = [...above.reverse(), y, ...below];
    const options = rows.map((r) => withoutTrailingBorder(r === y ? (m[2] ?? '') : grid.slice(r, labelX, right)).trim());
    const firstRow = rows[0] as number;
    const questionRow = questionAbove(grid, firstRow, top - 1);
    return { structure: new Set(['selector']), top: contextTop(grid, firstRow, top - 1), bottom: rows[rows.length - 1] as number, left, right, options, selected: rows.indexOf(y), boxRows: undefined, questionRow };
  }
  return undefined;
}

/** Contiguous rows starting in one column where exactly one is highlighted (inverse or a background). */
export function highlightedList(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): DialogCandidate | undefined {
  if (!grid.hasAttributes) return undefined;
  let y = top;
  while (y <= bottom) {
    const x = grid.firstInk(y, left);
    if (x < 0 || x >= right) {
      y++;
      continue;
    }
    const rows: number[] = [y];
    while (rows.length < 50 && y + rows.length <= bottom && grid.firstInk(y + rows.length, left) === x) rows.push(y + rows.length);
    if (rows.length >= 2) {
      const styles = rows.map((r) => styleOf(grid, r, x, right));
      const odd = oddOneOut(styles);
      if (odd !== undefined && /[ib]/.test(styles[odd] ?? '')) {
        const questionRow = questionAbove(grid, rows[0] as number, top - 1);
        return { structure: new Set(['selector']), top: rows[0] as number, bottom: rows[rows.length - 1] as number, left, right, options: rows.map((r) => grid.slice(r, x, right).trim()), selected: odd, boxRows: undefined, questionRow };
      }
    }
    y += rows.length;
  }
  return undefined;
}
