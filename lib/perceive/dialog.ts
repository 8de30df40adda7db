/**
 * Dialogs from geometry and cells: a box drawn with border characters, an enumerated option list,
 * a selector (one option marked by a pointer glyph or highlighted apart from its siblings),
 * buttons (`<Yes>` `<No>`), or a `(y/n)`-style choice the cursor is parked after. Text only
 * reinforces: a profile's known dialogs and the risk words name what a structural dialog is,
 * and can make it more dangerous, never create one. A program that prints "(y/n)" in flowing
 * output, or away from the cursor, shows no dialog.
 */
import { Fnv1a64 } from '../common/fnv1a64.js';
import { boxCandidate, fieldCandidate, findBoxes } from './dialog-box.js';
import type { DialogCandidate, DialogStructure } from './dialog-candidate.js';
import { enumeratedLists, listCandidate, pointedList } from './dialog-list.js';
import type { InputLine } from './input-line.js';
import { ESCALATING_KINDS, type DialogKind, type KnownDialog, type Profile } from './profile.js';
import { boundedTest, MAX_MATCH_CHARS } from './regex-safety.js';
import type { ScreenGrid } from './screen.js';

export type { DialogStructure } from './dialog-candidate.js';

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

export function detectDialog(grid: ScreenGrid, profile: Profile, input: InputLine | undefined): Dialog | undefined {
  const candidate = findCandidate(grid, profile, input);
  if (!candidate) return undefined;
  const text = regionText(grid, candidate);
  const known = profile.dialogs.find((d) => boundedTest(d.re, text));
  let kind: DialogKind = known?.kind ?? baseKind(candidate);
  for (const risk of ['destructive', 'auth', 'approval'] as const) {
    // A dialog the profile names keeps its kind against the engine's approval words ("allow",
    // "permission" are everywhere in a trust prompt's small print); the profile's own approval
    // words, and every destructive or sign-in word, still raise it.
    const generic = risk === 'approval' && known !== undefined ? [] : GENERIC_RISK[risk];
    const hit = [...generic, ...profile.risk[risk]].some((re) => boundedTest(re, text));
    if (hit && SEVERITY[risk] > SEVERITY[kind]) kind = risk;
  }
  // Enter answers the highlighted option: a safe answer holds only while the option the profile
  // names is the highlighted one (a program that moves its default to "No, exit" is not answered).
  const selectedLabel = candidate.selected === undefined ? undefined : candidate.options[candidate.selected];
  const selectedOk = known?.selected === undefined || (selectedLabel !== undefined && boundedTest(known.selected, selectedLabel));
  const safe = known?.safe === true && selectedOk && !ESCALATING_KINDS.has(kind);
  const structure = (['box', 'options', 'selector', 'buttons', 'field', 'choice', 'prompt'] as const).filter((s) => candidate.structure.has(s));
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

function baseKind(c: DialogCandidate): DialogKind {
  if (c.structure.has('choice')) return 'confirm';
  if (c.structure.has('buttons') && !c.structure.has('options') && !c.structure.has('selector')) return 'confirm';
  if (c.structure.has('options')) return 'menu';
  if (c.structure.has('selector')) return 'select';
  return 'prompt';
}

function findCandidate(grid: ScreenGrid, profile: Profile, input: InputLine | undefined): DialogCandidate | undefined {
  const last = grid.lastContentRow();
  if (last < 0) return undefined;
  const live = (c: DialogCandidate): boolean => {
    if (grid.alternate) return true;
    if (c.bottom < last - LIVE_WINDOW_ROWS) return false;
    if (answeredAbove(grid, c)) return false;
    // An input line below the list means the list is old output (or text a program printed
    // above its composer): the input line is what waits now. Real dialogs replace the composer.
    return !(input && input.y > c.bottom);
  };
  const boxes = findBoxes(grid);
  for (const box of boxes) {
    const c = boxCandidate(grid, box);
    if (c && live(c)) return c;
  }
  for (const box of boxes) {
    if (input && input.y > box.top && input.y < box.bottom) continue; // a boxed composer is no entry dialog
    const c = fieldCandidate(grid, box, boxes);
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

/**
 * On the main screen, a dialog with output printed after it (the visible cursor at the start of a
 * fresh line below it, text in between) was answered: the program moved on ("restarting to apply
 * the trust changes…") and only its drawing is left. A live dialog is the last thing drawn.
 */
function answeredAbove(grid: ScreenGrid, c: DialogCandidate): boolean {
  const { cursor } = grid;
  if (!cursor.visible || cursor.x !== 0 || cursor.y <= c.bottom + 1 || !grid.isBlank(cursor.y)) return false;
  for (let y = c.bottom + 1; y < cursor.y; y++) if (!grid.isBlank(y)) return true;
  return false;
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

function digestOf(grid: ScreenGrid, c: DialogCandidate, structure: readonly DialogStructure[], known: KnownDialog | undefined): string {
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
