/**
 * Dialogs from geometry and cells: a box drawn with border characters, an enumerated option list,
 * a selector (one option marked by a pointer glyph or highlighted apart from its siblings),
 * buttons (`<Yes>` `<No>`), or a `(y/n)`-style choice the cursor is parked after. Text only
 * reinforces: a profile's known dialogs and the risk words name what a structural dialog is,
 * and can make it more dangerous, never create one. A program that prints "(y/n)" in flowing
 * output, or away from the cursor, shows no dialog.
 */
import { Fnv1a64 } from '../common/fnv1a64.js';
import type { InputLine } from './input-line.js';
import { ESCALATING_KINDS, type DialogKind, type KnownDialog, type Profile } from './profile.js';
import { boundedTest, MAX_MATCH_CHARS } from './regex-safety.js';
import { withoutTrailingBorder, type ScreenCell, type ScreenGrid } from './screen.js';

export type DialogStructure = 'box' | 'options' | 'selector' | 'buttons' | 'choice' | 'prompt';

export interface Dialog {
  readonly kind: DialogKind;
  /** True only for a profile's known dialog marked safe (and not destructive/approval/auth). */
  readonly safe: boolean;
  /** Keys (sendKeys names) that answer it, from the profile's known dialog. */
  readonly answer?: readonly string[];
  /** Structural: geometry and option labels, stable across redraws (journal it, not the text). */
  readonly digest: string;
  /** The profile's known-dialog id, when one matched. */
  readonly id?: string;
  /** The structural evidence, in a fixed order. */
  readonly structure: readonly DialogStructure[];
  /** Option or button labels (untrusted screen text). */
  readonly options: readonly string[];
  /** Index into `options` of the highlighted one, when one is. */
  readonly selected?: number;
  /** Rows the dialog covers (inclusive). */
  readonly top: number;
  readonly bottom: number;
}

// ---- the engine's tables ------------------------------------------------------------------------

const TOP_LEFT = new Set('┌╭╔┏╒╓+');
const TOP_RIGHT = new Set('┐╮╗┓╕╖+');
const BOTTOM_LEFT = new Set('└╰╚┗╘╙+');
const BOTTOM_RIGHT = new Set('┘╯╝┛╛╜+');
const HORIZONTAL = new Set('─━═╌┄┈-');
const VERTICAL = new Set('│┃║╎┆┊|├┤╟╢╞╡');
/** Glyphs that mark the current option of a list. */
const POINTERS = '❯›>▶►→●◉◆▸*';

/** `1. label`, `2) label`, optionally behind a pointer. */
const ENUMERATED = new RegExp(`^(\\s*)([${POINTERS}]\\s*)?(\\d{1,2})[.)]\\s+(\\S.*)$`, 'u');
/** A pointer, then a label. */
const POINTED = new RegExp(`^(\\s*)[${POINTERS}]\\s+(\\S.*)$`, 'u');
/** `<Yes>`, `< OK >`, `[ Cancel ]`. */
const BUTTON = /<\s?[A-Za-z][A-Za-z' ]{0,14}?\s?>|\[\s?[A-Za-z][A-Za-z' ]{0,14}?\s?\]/g;
/** `(y/n)`, `[y/N]`, `(yes/no)`, `[Y/n/q]` near the end of the text before the cursor. */
const CHOICE = /[([]\s?(?:y|yes|n|no)\s?\/\s?(?:y|yes|n|no)(?:\s?\/\s?\w{1,12}){0,3}\s?[)\]]\s?[:?]?\s?$/i;

/**
 * Words that make a dialog dangerous, on top of a profile's own. They can only raise a dialog to
 * destructive / auth / approval (which always go to a human), never lower it.
 */
const GENERIC_RISK: Readonly<Record<'destructive' | 'auth' | 'approval', readonly RegExp[]>> = {
  destructive: [
    /\b(?:delete|remove|erase|wipe|destroy|overwrite|purge|truncate|discard|uninstall|obliterate)s?\b/i,
    /\bdrop\s(?:table|database|schema)\b/i,
    /\brm\s-[a-z]*[rf]/i,
    /\bforce[- ]push\b|\bpush\s--force\b|\breset\s--hard\b/i,
    /\bformat\s(?:disk|drive|partition|volume)\b/i,
  ],
  auth: [
    /\b(?:sign|log)[ -]?in\b|\blogin\b/i,
    /\bpass(?:word|phrase|code)\b/i,
    /\b(?:authori[sz]ation|verification|one-time|device)\scode\b/i,
    /\b(?:api\skey|access\stoken|credentials?|2fa|otp)\b/i,
  ],
  approval: [/\b(?:allow|approve|permit|permission|grant)\b/i],
};

const SEVERITY: Readonly<Record<DialogKind, number>> = { confirm: 0, menu: 0, select: 0, trust: 1, prompt: 0, approval: 2, auth: 3, destructive: 4 };

/** On the main screen a live dialog ends this close to the content's last row (hints below it). */
const LIVE_WINDOW_ROWS = 4;
/** Rows above a list searched for its question. */
const QUESTION_ROWS = 6;
/** Rows above a list that belong to its dialog (the command a permission dialog names). */
const CONTEXT_ROWS = 8;
/** Boxes considered per screen: a real screen has a few; a hostile one must not cost more. */
const MAX_BOXES = 32;
/** Characters of a title in a top border. */
const MAX_TITLE = 48;
/** A row that is only a rule or a border: a dialog's frame. */
const RULE_ROW = /^[─━═╌┄┈\-╭╮╰╯┌┐└┘]{3,}$/u;

// ---- detection ----------------------------------------------------------------------------------

interface Box {
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
}

interface Option {
  readonly y: number;
  readonly x: number;
  readonly label: string;
  readonly pointer: boolean;
}

interface Candidate {
  readonly structure: Set<DialogStructure>;
  readonly top: number;
  readonly bottom: number;
  readonly left: number;
  readonly right: number;
  readonly options: readonly string[];
  readonly selected: number | undefined;
  readonly boxRows: number | undefined;
  /** Row of the question the dialog asks (for the digest), or -1. */
  readonly questionRow: number;
}

export function detectDialog(grid: ScreenGrid, profile: Profile, input: InputLine | undefined): Dialog | undefined {
  const candidate = findCandidate(grid, profile, input);
  if (!candidate) return undefined;
  const text = regionText(grid, candidate);
  const known = profile.dialogs.find((d) => boundedTest(d.re, text));
  let kind: DialogKind = known?.kind ?? baseKind(candidate);
  for (const risk of ['destructive', 'auth', 'approval'] as const) {
    const hit = [...GENERIC_RISK[risk], ...profile.risk[risk]].some((re) => boundedTest(re, text));
    if (hit && SEVERITY[risk] > SEVERITY[kind]) kind = risk;
  }
  const safe = known?.safe === true && !ESCALATING_KINDS.has(kind);
  const structure = (['box', 'options', 'selector', 'buttons', 'choice', 'prompt'] as const).filter((s) => candidate.structure.has(s));
  return {
    kind,
    safe,
    ...(known?.answer ? { answer: known.answer } : {}),
    digest: digestOf(grid, candidate, structure, known),
    ...(known ? { id: known.id } : {}),
    structure,
    options: candidate.options,
    ...(candidate.selected !== undefined ? { selected: candidate.selected } : {}),
    top: candidate.top,
    bottom: candidate.bottom,
  };
}

function baseKind(c: Candidate): DialogKind {
  if (c.structure.has('choice')) return 'confirm';
  if (c.structure.has('buttons') && !c.structure.has('options') && !c.structure.has('selector')) return 'confirm';
  if (c.structure.has('options')) return 'menu';
  if (c.structure.has('selector')) return 'select';
  return 'prompt';
}

function findCandidate(grid: ScreenGrid, profile: Profile, input: InputLine | undefined): Candidate | undefined {
  const last = grid.lastContentRow();
  if (last < 0) return undefined;
  const live = (c: Candidate): boolean => {
    if (grid.alternate) return true;
    if (c.bottom < last - LIVE_WINDOW_ROWS) return false;
    // An input line below the list means the list is old output (or text a program printed
    // above its composer): the input line is what waits now. Real dialogs replace the composer.
    return !(input && input.y > c.bottom);
  };
  for (const box of findBoxes(grid)) {
    const c = inBox(grid, box);
    if (c && live(c)) return c;
  }
  const lists = [...enumeratedLists(grid, 0, grid.cols, 0, grid.rows - 1)];
  for (const list of lists) {
    const c = listCandidate(grid, list, undefined);
    if (c.structure.has('selector') && live(c)) return c;
  }
  const pointed = pointedList(grid, 0, grid.cols, 0, grid.rows - 1);
  if (pointed && live(pointed)) return pointed;
  // An enumerated list with the prompt right under it (bash `select`, "Enter choice: ").
  if (input && input.via === 'prompt') {
    for (const list of lists) {
      const c = listCandidate(grid, list, undefined);
      const between = Array.from({ length: Math.max(0, input.y - c.bottom - 1) }, (_, k) => c.bottom + 1 + k);
      if (input.y > c.bottom && input.y <= c.bottom + 2 && between.every((y) => grid.isBlank(y))) return { ...c, bottom: input.y, structure: new Set([...c.structure, 'prompt']) };
    }
  }
  if (input && input.via === 'prompt') {
    const left = grid.slice(input.y, 0, grid.cursor.x);
    if (CHOICE.test(left.length > MAX_MATCH_CHARS ? left.slice(-MAX_MATCH_CHARS) : left)) {
      const m = /[([]([^)\]]*)[)\]][^([]*$/.exec(left);
      const options = (m?.[1] ?? 'y/n').split('/').map((s) => s.trim());
      const upper = options.findIndex((o) => o.length > 0 && o === o.toUpperCase() && o !== o.toLowerCase());
      return { structure: new Set(['choice']), top: input.y, bottom: input.y, left: 0, right: grid.cols - 1, options, selected: upper >= 0 ? upper : undefined, boxRows: undefined, questionRow: input.y };
    }
    // A prompt line is a dialog when it asks for a secret or is one of the profile's known dialogs.
    const top = Math.max(0, input.y - 2);
    const region = { top, bottom: input.y, left: 0, right: grid.cols - 1 };
    const text = regionText(grid, region);
    if (GENERIC_RISK.auth.some((re) => boundedTest(re, grid.slice(input.y, 0, grid.cursor.x))) || profile.dialogs.some((d) => boundedTest(d.re, text))) {
      return { structure: new Set(['prompt']), ...region, options: [], selected: undefined, boxRows: undefined, questionRow: input.y };
    }
  }
  return undefined;
}

/** Boxes drawn with border characters, at least 3 rows and 6 columns, top-most first. */
function findBoxes(grid: ScreenGrid): Box[] {
  const boxes: Box[] = [];
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

function inBox(grid: ScreenGrid, box: Box): Candidate | undefined {
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

function firstTextRow(grid: ScreenGrid, top: number, bottom: number, left: number, right: number): number {
  for (let y = top; y <= bottom; y++) if (grid.slice(y, left, right).trim() !== '') return y;
  return -1;
}

/** Runs of `n.`-numbered rows (consecutive numbers, the number in one column, small gaps). */
function* enumeratedLists(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): Generator<Option[]> {
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

function listCandidate(grid: ScreenGrid, list: readonly Option[], box: Box | undefined): Candidate {
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
function pointedList(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): Candidate | undefined {
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
function highlightedList(grid: ScreenGrid, left: number, right: number, top: number, bottom: number): Candidate | undefined {
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

/**
 * A cell style signature for the label starting at `x`: inverse (i), background (b…), foreground
 * (f…), bold (B). Only the first few ink cells count (a label's colour, not its row's).
 */
function styleOf(grid: ScreenGrid, y: number, x: number, right: number): string {
  if (!grid.hasAttributes) return '';
  const row = grid.row(y);
  for (let c = x; c < Math.min(right, row.length); c++) {
    const cell = row[c] as ScreenCell;
    if (cell.ch === ' ' || cell.ch === '') continue;
    return cellStyle(cell);
  }
  return '';
}

function cellStyle(cell: ScreenCell): string {
  return `${cell.inverse ? 'i' : ''}${cell.bgMode !== 'default' ? `b${cell.bg}` : ''}${cell.fgMode !== 'default' ? `f${cell.fg}` : ''}${cell.bold ? 'B' : ''}`;
}

/**
 * The index of the one style unlike all the others (which agree), or undefined. With two
 * entries, the odd one is the one that is styled while the other is plain.
 */
function oddOneOut(styles: readonly string[]): number | undefined {
  if (styles.length < 2) return undefined;
  if (styles.length === 2) {
    const [a, b] = styles as [string, string];
    if (a === b) return undefined;
    if (a === '' || b === '') return a === '' ? 1 : 0;
    return undefined;
  }
  const counts = new Map<string, number>();
  for (const s of styles) counts.set(s, (counts.get(s) ?? 0) + 1);
  if (counts.size !== 2) return undefined;
  const odd = [...counts].find(([, n]) => n === 1)?.[0];
  return odd === undefined ? undefined : styles.indexOf(odd);
}

function regionText(grid: ScreenGrid, r: { top: number; bottom: number; left: number; right: number }): string {
  const rows: string[] = [];
  for (let y = r.top; y <= r.bottom; y++) rows.push(grid.slice(y, r.left, r.right + 1).replace(/[│┃║|]/gu, ' ').replace(/\s+/g, ' ').trim());
  const text = rows.filter((t) => t !== '').join('\n');
  return text.length > MAX_MATCH_CHARS ? text.slice(0, MAX_MATCH_CHARS) : text;
}

/** Lowercase words, digits folded (counters and timers are noise), spacing and punctuation dropped. */
function normalize(text: string): string {
  return text
    .toLowerCase()
    .replace(/\d+/g, '#')
    .replace(/[^\p{L}\p{N}#]+/gu, ' ')
    .trim()
    .slice(0, 80);
}

function digestOf(grid: ScreenGrid, c: Candidate, structure: readonly DialogStructure[], known: KnownDialog | undefined): string {
  const h = new Fnv1a64();
  h.str('dialog/1');
  h.str(structure.join(','));
  h.u32(c.boxRows ?? 0);
  h.u32(c.options.length);
  for (const o of c.options) h.str(normalize(o));
  h.str(c.questionRow >= 0 ? normalize(grid.slice(c.questionRow, c.left, c.right + 1).replace(/[│┃║|]/gu, ' ')) : '');
  h.str(known?.id ?? '');
  return h.hex();
}
