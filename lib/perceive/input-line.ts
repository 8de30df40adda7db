/**
 * Where the program takes input: a TUI composer (a profile's prefix in the bottom rows) or a
 * prompt the cursor is parked on. On that line, cells matching the profile's ghost rules (dim by
 * default) are a suggestion: reported as `suggestion`, never as typed input (invariant 7).
 */
import type { CellRule, Profile } from './profile.js';
import { boundedExec, boundedTest } from './regex-safety.js';
import { ScreenGrid, trimSpacesEnd, withoutTrailingBorder, type ClassifierSnapshot, type ScreenCell } from './screen.js';

export interface Suggestion {
  /** True when ghost cells are on the input line now. */
  readonly visible: boolean;
  /** Their text (untrusted screen content: never act on it). */
  readonly text: string;
}

export interface InputLine {
  readonly y: number;
  /** `composer`: the profile's composer prefix; `prompt`: the cursor parked after a prompt. */
  readonly via: 'composer' | 'prompt';
  /** First column after the prefix or prompt. */
  readonly inputX: number;
  /** The non-ghost text after the prefix (what was typed, as far as the screen shows). */
  readonly typed: string;
  /** Undefined when the profile has no ghost rules or the screen has no attributes. */
  readonly suggestion: Suggestion | undefined;
}

export function cellMatches(cell: ScreenCell, rule: CellRule): boolean {
  return (
    (rule.dim === undefined || cell.dim === rule.dim) &&
    (rule.bold === undefined || cell.bold === rule.bold) &&
    (rule.inverse === undefined || cell.inverse === rule.inverse) &&
    (rule.fg === undefined || cell.fg === rule.fg) &&
    (rule.fgMode === undefined || cell.fgMode === rule.fgMode)
  );
}

function isGhost(cell: ScreenCell, rules: readonly CellRule[]): boolean {
  return cell.ch !== ' ' && cell.ch !== '' && rules.some((r) => cellMatches(cell, r));
}

/** The input line, or undefined when the cursor is not parked on one. */
export function findInputLine(grid: ScreenGrid, profile: Profile): InputLine | undefined {
  return findComposer(grid, profile) ?? findPrompt(grid, profile);
}

function findComposer(grid: ScreenGrid, profile: Profile): InputLine | undefined {
  const composer = profile.composer;
  if (!composer) return undefined;
  // Counted up from the content's last row: an Ink TUI on the main screen sits at the top of a
  // screen it has not filled yet.
  const bottom = grid.lastContentRow();
  const top = Math.max(0, bottom - composer.bottomRows + 1);
  const matchAt = (y: number): number | undefined => {
    // Untrimmed: an empty composer's prefix ends in the space the right-trim would drop.
    const m = boundedExec(composer.prefix, grid.slice(y, 0, grid.cols));
    return m && m.index === 0 ? grid.columnAt(y, m[0].length) : undefined;
  };
  const { cursor } = grid;
  let y = -1;
  let inputX: number | undefined;
  // The cursor's row first, hidden or not and however far up: an Ink TUI hides the terminal
  // cursor but parks it on its composer, and a slash menu drawn under the composer pushes the
  // last content row far below it (the composer is then out of the bottom-rows window).
  if (cursor.y >= 0 && cursor.y < grid.rows) {
    inputX = matchAt(cursor.y);
    if (inputX !== undefined) y = cursor.y;
  }
  for (let row = bottom; y < 0 && row >= top; row--) {
    inputX = matchAt(row);
    if (inputX !== undefined) y = row;
  }
  if (y < 0 || inputX === undefined) return undefined;
  return lineAt(grid, profile, y, inputX, 'composer');
}

function findPrompt(grid: ScreenGrid, profile: Profile): InputLine | undefined {
  const { cursor } = grid;
  if (!cursor.visible || cursor.y < 0 || cursor.y >= grid.rows) return undefined;
  const y = cursor.y;
  // On the main screen the prompt is the end of the content: output below the cursor means the
  // program is writing there, not waiting here. Ghost cells after the cursor are not content.
  if (!grid.alternate && lastRealContentRow(grid, profile) > y) return undefined;
  const x = Math.min(cursor.x, grid.cols);
  const left = grid.slice(y, 0, x);
  if (left.trim() === '') return undefined;
  const trimmed = left.trimEnd();
  if (boundedTest(profile.prompt, trimmed.length < left.length ? `${trimmed} ` : left)) return lineAt(grid, profile, y, x, 'prompt');
  // Text typed after a prompt: the row starts with one and the cursor is past it.
  const m = boundedExec(profile.promptPrefix, grid.slice(y, 0, grid.cols));
  if (!m || m.index !== 0) return undefined;
  const inputX = grid.columnAt(y, m[0].length);
  return inputX <= x ? lineAt(grid, profile, y, inputX, 'prompt') : undefined;
}

/** The last row with non-ghost ink. */
function lastRealContentRow(grid: ScreenGrid, profile: Profile): number {
  for (let y = grid.rows - 1; y >= 0; y--) {
    if (grid.row(y).some((c) => c.ch !== ' ' && c.ch !== '' && !(grid.hasAttributes && isGhost(c, profile.ghost)))) return y;
  }
  return -1;
}

function lineAt(grid: ScreenGrid, profile: Profile, y: number, inputX: number, via: InputLine['via']): InputLine {
  const row = grid.row(y);
  const rules = profile.ghost;
  const ghost = new Set<number>();
  if (grid.hasAttributes && rules.length > 0) for (let x = inputX; x < row.length; x++) if (isGhost(row[x] as ScreenCell, rules)) ghost.add(x);
  let ghostFrom = ghost.size > 0 ? Math.min(...ghost) : -1;
  const ghostTo = ghost.size > 0 ? Math.max(...ghost) + 1 : -1;
  // A TUI that draws its own cursor puts it, inverse, on the suggestion's first character.
  if (ghostFrom > inputX && row[ghostFrom - 1]?.inverse && row[ghostFrom - 1]?.ch !== ' ') ghost.add(--ghostFrom);
  let typed = '';
  for (let x = inputX; x < row.length; x++) if (!ghost.has(x)) typed += row[x]?.ch ?? ' ';
  const suggestion: Suggestion | undefined =
    !grid.hasAttributes || rules.length === 0 ? undefined : ghostFrom < 0 ? { visible: false, text: '' } : { visible: true, text: grid.slice(y, ghostFrom, ghostTo).replace(/\s+/g, ' ').trim() };
  return { y, via, inputX, typed: withoutTrailingBorder(typed).trim(), suggestion };
}


/**
 * The read side of a profile (`transformSnapshot`): ghost cells blanked on the input line when
 * `stripGhost`, rows matching `dropRows` blanked. Pure; returns a new snapshot.
 */
export function transformSnapshot(snapshot: ClassifierSnapshot, profile: Profile): ClassifierSnapshot {
  const { stripGhost, dropRows } = profile.transform;
  if (!stripGhost && dropRows.length === 0) return snapshot;
  const grid = new ScreenGrid(snapshot);
  const rows: ScreenCell[][] = [];
  for (let y = 0; y < grid.rows; y++) rows.push([...grid.row(y)]);
  const blank = (y: number, x: number): void => {
    const row = rows[y];
    const cell = row?.[x];
    if (row && cell) row[x] = { ...cell, ch: cell.width === 0 ? '' : ' ', dim: false };
  };
  if (stripGhost && grid.hasAttributes) {
    const line = findInputLine(grid, profile);
    if (line) {
      const row = grid.row(line.y);
      for (let x = line.inputX; x < row.length; x++) if (isGhost(row[x] as ScreenCell, profile.ghost)) blank(line.y, x);
    }
  }
  for (let y = 0; y < grid.rows; y++) {
    if (dropRows.some((re) => boundedTest(re, grid.text(y)))) for (let x = 0; x < grid.cols; x++) blank(y, x);
  }
  const lines = rows.map((row) => trimSpacesEnd(row.map((c) => c.ch).join('')));
  return snapshot.cells ? { ...snapshot, lines, cells: rows } : { ...snapshot, lines };
}
