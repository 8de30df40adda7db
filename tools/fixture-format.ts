/**
 * The screen fixture corpus (test/fixtures/screens/*.json): one labelled frame per file, with
 * the cells stored compactly (the text lines plus runs of non-default attributes), so a file is
 * a few KB and still replays every rule that reads cells (ghost text, highlighted options).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Busy } from '../lib/perceive/activity.js';
import { decideAutoAnswer, type AutoAnswerDecision, type AutoAnswerPolicy } from '../lib/perceive/auto-answer.js';
import { classifyScreen, type ClassifierReason, type ScreenSignals, type ScreenVerdict, type SessionState } from '../lib/perceive/classify-screen.js';
import type { DialogKind, ProfileSet } from '../lib/perceive/profile.js';
import { BLANK_CELL, type ClassifierSnapshot, type ScreenCell } from '../lib/perceive/screen.js';

export interface FixtureLabel {
  readonly state: SessionState;
  readonly reason: ClassifierReason;
  /** Expected dialog kind when the frame shows one. */
  readonly dialogKind?: DialogKind;
  /** Expected ghost text (suggestion) when the frame shows one: its beginning (placeholders rotate). */
  readonly suggestion?: string;
}

export interface CompactCells {
  /** Style strings; runs refer to them by index. Tokens: b bold, d dim, i inverse, f:<mode>:<v> fg, g:<mode>:<v> bg. */
  readonly styles: string[];
  /** [row, column, length, style index]: consecutive cells of one row with one non-default style. */
  readonly runs: [number, number, number, number][];
  /** [row, column] of every width-2 cell (the next column is its empty second half). */
  readonly wide: [number, number][];
  /** [row, column, text] of cells holding more than one code point (combining marks). */
  readonly clusters: [number, number, string][];
}

export interface FixtureFile {
  readonly label: FixtureLabel;
  readonly synthetic: boolean;
  /** What produced it: program, version, how it was driven. */
  readonly source: string;
  /** The profile the frame is classified with. */
  readonly profile: string;
  readonly snapshot: Omit<ClassifierSnapshot, 'cells'>;
  readonly cells: CompactCells;
  readonly signals: ScreenSignals;
  readonly notes?: string;
}

function styleKey(c: ScreenCell): string {
  const t: string[] = [];
  if (c.bold) t.push('b');
  if (c.dim) t.push('d');
  if (c.inverse) t.push('i');
  if (c.fgMode !== 'default') t.push(`f:${c.fgMode === 'rgb' ? 'r' : 'p'}:${c.fg}`);
  if (c.bgMode !== 'default') t.push(`g:${c.bgMode === 'rgb' ? 'r' : 'p'}:${c.bg}`);
  return t.join(' ');
}

function applyStyle(c: ScreenCell, key: string): ScreenCell {
  let out: ScreenCell = { ...c };
  for (const tok of key.split(' ')) {
    if (tok === 'b') out = { ...out, bold: true };
    else if (tok === 'd') out = { ...out, dim: true };
    else if (tok === 'i') out = { ...out, inverse: true };
    else if (tok.startsWith('f:') || tok.startsWith('g:')) {
      const [which, mode, value] = tok.split(':') as [string, string, string];
      const m = mode === 'r' ? 'rgb' : 'palette';
      out = which === 'f' ? { ...out, fgMode: m, fg: Number(value) } : { ...out, bgMode: m, bg: Number(value) };
    }
  }
  return out;
}

export function encodeCells(cells: readonly (readonly ScreenCell[])[]): CompactCells {
  const styles: string[] = [];
  const index = new Map<string, number>();
  const runs: [number, number, number, number][] = [];
  const wide: [number, number][] = [];
  const clusters: [number, number, string][] = [];
  cells.forEach((row, y) => {
    let x = 0;
    while (x < row.length) {
      const cell = row[x] as ScreenCell;
      if (cell.width === 2) wide.push([y, x]);
      if ([...cell.ch].length > 1) clusters.push([y, x, cell.ch]);
      const key = styleKey(cell);
      if (key === '') {
        x++;
        continue;
      }
      let len = 1;
      while (x + len < row.length && styleKey(row[x + len] as ScreenCell) === key) {
        const next = row[x + len] as ScreenCell;
        if (next.width === 2) wide.push([y, x + len]);
        if ([...next.ch].length > 1) clusters.push([y, x + len, next.ch]);
        len++;
      }
      let s = index.get(key);
      if (s === undefined) {
        s = styles.length;
        styles.push(key);
        index.set(key, s);
      }
      runs.push([y, x, len, s]);
      x += len;
    }
  });
  return { styles, runs, wide, clusters };
}

/** The cells back from the text lines and the compact attributes. */
export function decodeCells(lines: readonly string[], compact: CompactCells, cols: number, rows: number): ScreenCell[][] {
  const wide = new Set(compact.wide.map(([y, x]) => `${y},${x}`));
  const clusters = new Map(compact.clusters.map(([y, x, t]) => [`${y},${x}`, t]));
  const out: ScreenCell[][] = [];
  for (let y = 0; y < rows; y++) {
    const line = lines[y] ?? '';
    const row: ScreenCell[] = [];
    let i = 0;
    const points = [...line];
    while (row.length < cols) {
      const x = row.length;
      const cluster = clusters.get(`${y},${x}`);
      let ch: string;
      if (cluster !== undefined) {
        ch = cluster;
        i += [...cluster].length;
      } else ch = points[i++] ?? ' ';
      if (wide.has(`${y},${x}`)) {
        row.push({ ...BLANK_CELL, ch, width: 2 });
        if (row.length < cols) row.push({ ...BLANK_CELL, ch: '', width: 0 });
      } else row.push(ch === ' ' ? BLANK_CELL : { ...BLANK_CELL, ch });
    }
    out.push(row);
  }
  for (const [y, x, len, s] of compact.runs) {
    const row = out[y];
    if (!row) continue;
    for (let k = x; k < x + len && k < row.length; k++) row[k] = applyStyle(row[k] as ScreenCell, compact.styles[s] ?? '');
  }
  return out;
}

/** The frame as classifyScreen takes it. */
export function fixtureSnapshot(f: Pick<FixtureFile, 'snapshot' | 'cells'>): ClassifierSnapshot {
  return { ...f.snapshot, cells: decodeCells(f.snapshot.lines, f.cells, f.snapshot.cols, f.snapshot.rows) };
}

/** Cells reduced to what perception reads (the emulator's cells carry more). */
export function perceivedCells(cells: readonly (readonly ScreenCell[])[]): ScreenCell[][] {
  return cells.map((row) => row.map((c) => ({ ch: c.ch, width: c.width, fg: c.fg, bg: c.bg, fgMode: c.fgMode, bgMode: c.bgMode, bold: c.bold, dim: c.dim, inverse: c.inverse })));
}

// ---- the corpus, replayed -----------------------------------------------------------------------

export interface CorpusFrame {
  readonly name: string;
  readonly fixture: FixtureFile;
}

export interface CorpusResult extends CorpusFrame {
  readonly verdict: ScreenVerdict;
  /** State and reason as labelled (and the dialog kind and suggestion, when labelled). */
  readonly ok: boolean;
}

/** Every *.json frame of `dir`, by name. */
export function loadCorpus(dir: string): CorpusFrame[] {
  return readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .sort()
    .map((n) => ({ name: n.slice(0, -'.json'.length), fixture: JSON.parse(readFileSync(join(dir, n), 'utf8')) as FixtureFile }));
}

export function replayCorpus(frames: readonly CorpusFrame[], profiles: ProfileSet): CorpusResult[] {
  return frames.map((frame) => {
    const f = frame.fixture;
    const profile = profiles.get(f.profile);
    if (!profile) throw new Error(`${frame.name}: unknown profile "${f.profile}"`);
    const verdict = classifyScreen(fixtureSnapshot(f), f.signals, profile);
    const ok =
      verdict.state === f.label.state &&
      verdict.reason === f.label.reason &&
      (f.label.dialogKind === undefined || verdict.dialog?.kind === f.label.dialogKind) &&
      (f.label.suggestion === undefined || (verdict.suggestion?.visible === true && verdict.suggestion.text.startsWith(f.label.suggestion)));
    return { ...frame, verdict, ok };
  });
}

export const STATES: readonly SessionState[] = ['working', 'awaiting-input', 'stuck', 'exited'];

/** counts[labelled][classified]. */
export function confusionMatrix(results: readonly CorpusResult[]): Record<SessionState, Record<SessionState, number>> {
  const m = Object.fromEntries(STATES.map((a) => [a, Object.fromEntries(STATES.map((b) => [b, 0]))])) as Record<SessionState, Record<SessionState, number>>;
  for (const r of results) m[r.fixture.label.state][r.verdict.state] += 1;
  return m;
}

/** The matrix as a text table, labelled states down, classified states across. */
export function formatMatrix(m: Record<SessionState, Record<SessionState, number>>): string {
  const w = 16;
  const head = `${'label \\ got'.padEnd(w)}${STATES.map((s) => s.padStart(w)).join('')}`;
  const rows = STATES.map((a) => `${a.padEnd(w)}${STATES.map((b) => String(m[a][b]).padStart(w)).join('')}`);
  return [head, ...rows].join('\n');
}

// ---- frames recorded from the real AI CLIs (test/fixtures/cli-frames/<program>/*.json) ------------

/**
 * What a person sees on a frame, named so that misreadings group by class: part 2 of issue 12
 * fixes classes, not frames.
 */
export const SITUATIONS = [
  // AI CLIs
  'loading', 'first-run', 'trust', 'auth', 'theme', 'bypass-warning', 'dialog-after-auto-answer',
  'composer', 'typed', 'queued', 'working', 'retrying', 'error', 'stale-dialog', 'slash-menu', 'menu', 'exit',
  // ordinary programs
  'prompt', 'tui', 'pager', 'picker', 'dialog', 'tty-read', 'yn-no-reader', 'echo', 'busy',
] as const;
export type Situation = (typeof SITUATIONS)[number];

export interface RecordedLabel {
  readonly state: SessionState;
  /** The reasons a person accepts, where today's vocabulary names one (absent: any reason). */
  readonly reasons?: readonly ClassifierReason[];
  /** A dialog on the screen: `live` when the program waits on it now, `stale` when it was answered and only its drawing is left. */
  readonly dialog?: 'live' | 'stale';
  readonly dialogKind?: DialogKind;
  /** What autoAnswer safe-only should do with the live dialog. */
  readonly safeOnly?: 'answer' | 'escalate';
  readonly situation: Situation;
  /** What the person saw, in words. */
  readonly why: string;
}

/** The process facts beside a frame (host /proc of the pane's tree, taken at capture). */
export interface ProcessFacts {
  readonly readingTerminal: boolean;
  readonly runnable: boolean;
  /** compareActivity over the second before the capture (whatever the output did). */
  readonly busy: Busy;
  readonly cpuMs: number;
  readonly ioBytes: number;
  readonly windowMs: number;
}

export interface RecordedFrame extends Omit<FixtureFile, 'label'> {
  readonly label: RecordedLabel;
  readonly program: { readonly name: string; readonly version: string };
  /** How the frame was reached: the seeded HOME, then every step up to the capture. */
  readonly reached: readonly string[];
  readonly process: ProcessFacts;
  /** How the capture was timed: `settled` (after output stopped), `flowing` (right after a chunk), `now`. */
  readonly capture: 'settled' | 'flowing' | 'now';
  /** The recording the frame was captured in, and when (seconds into it). */
  readonly recording?: { readonly name: string; readonly t: number };
}

export interface JudgedFrame {
  readonly name: string;
  readonly program: string;
  readonly synthetic: boolean;
  readonly label: { readonly state: SessionState; readonly situation?: Situation; readonly dialog?: 'live' | 'stale'; readonly dialogKind?: DialogKind };
  readonly verdict: ScreenVerdict;
  readonly stateOk: boolean;
  /** State, reason, dialog (live or not, kind) and the safe-only decision as labelled. */
  readonly ok: boolean;
  /** Why not ok, in a few words each. */
  readonly wrong: readonly string[];
  /** A live dialog safe-only should escalate, which the verdict would neither escalate nor answer. */
  readonly unescalated: boolean;
  /** A dialog labelled dangerous (auth, approval, destructive) that some policy would answer. */
  readonly dangerousAnswered: boolean;
}

const NEVER_ANSWERED = (): number => 0;

/** The decision a policy would make on the verdict's dialog, or undefined when the verdict shows none. */
export function policyDecision(v: ScreenVerdict, policy: AutoAnswerPolicy): AutoAnswerDecision['action'] | undefined {
  if (v.state !== 'awaiting-input' || !v.dialog) return undefined;
  return decideAutoAnswer(v.dialog, policy, NEVER_ANSWERED).action;
}

const DANGEROUS: ReadonlySet<DialogKind> = new Set(['auth', 'approval', 'destructive']);

/** A recorded frame's verdict against its label. */
export function judgeFrame(name: string, f: RecordedFrame, verdict: ScreenVerdict): JudgedFrame {
  const l = f.label;
  const wrong: string[] = [];
  if (verdict.state !== l.state) wrong.push(`state ${verdict.state}`);
  // Output in flight is a timing fact, right whenever the program works: any working label takes it.
  const flowingOk = l.state === 'working' && verdict.reason === 'output_flowing';
  if (l.reasons && !l.reasons.includes(verdict.reason) && !flowingOk) wrong.push(`reason ${verdict.reason}`);
  const liveDialog = verdict.state === 'awaiting-input' && verdict.dialog !== undefined;
  if (l.dialog === 'live' && !liveDialog) wrong.push('no dialog');
  if (l.dialog === 'live' && l.dialogKind && liveDialog && verdict.dialog?.kind !== l.dialogKind) wrong.push(`dialog kind ${verdict.dialog?.kind}`);
  if (l.dialog === 'stale' && liveDialog) wrong.push('stale dialog read as live');
  const safeOnly = policyDecision(verdict, 'safe-only');
  if (l.safeOnly && liveDialog && safeOnly !== l.safeOnly) wrong.push(`safe-only would ${safeOnly}`);
  const unescalated = l.dialog === 'live' && l.safeOnly === 'escalate' && safeOnly !== 'escalate';
  const dangerousAnswered = l.dialogKind !== undefined && DANGEROUS.has(l.dialogKind) && (['safe-only', 'all'] as const).some((p) => policyDecision(verdict, p) === 'answer');
  if (dangerousAnswered) wrong.push('dangerous dialog answered');
  return {
    name,
    program: f.program.name,
    synthetic: f.synthetic,
    label: { state: l.state, situation: l.situation, ...(l.dialog ? { dialog: l.dialog } : {}), ...(l.dialogKind ? { dialogKind: l.dialogKind } : {}) },
    verdict,
    stateOk: verdict.state === l.state,
    ok: wrong.length === 0,
    wrong,
    unescalated,
    dangerousAnswered,
  };
}

export interface RecordedCorpusFrame {
  /** `<program>/<file name without .json>` */
  readonly name: string;
  readonly frame: RecordedFrame;
}

/** Every frame under `dir/<program>/*.json`, by name. */
export function loadRecordedFrames(dir: string): RecordedCorpusFrame[] {
  if (!existsSync(dir)) return [];
  const out: RecordedCorpusFrame[] = [];
  for (const program of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory()).map((d) => d.name).sort()) {
    for (const file of readdirSync(join(dir, program)).filter((n) => n.endsWith('.json')).sort()) {
      out.push({ name: `${program}/${file.slice(0, -'.json'.length)}`, frame: JSON.parse(readFileSync(join(dir, program, file), 'utf8')) as RecordedFrame });
    }
  }
  return out;
}

export function judgeRecordedFrames(frames: readonly RecordedCorpusFrame[], profiles: ProfileSet): JudgedFrame[] {
  return frames.map(({ name, frame }) => {
    const profile = profiles.get(frame.profile);
    if (!profile) throw new Error(`${name}: unknown profile "${frame.profile}"`);
    // The program is the frame's folder (codex, gemini, claude-code, opencode, programs).
    return { ...judgeFrame(name, frame, classifyScreen(fixtureSnapshot(frame), frame.signals, profile)), program: name.split('/')[0] ?? frame.program.name };
  });
}

/** The screens corpus (test/fixtures/screens) in the same terms: programs by profile, state and reason as labelled. */
export function judgeScreens(results: readonly CorpusResult[]): JudgedFrame[] {
  return results.map((r) => {
    const f = r.fixture;
    const wrong = r.ok ? [] : [`${r.verdict.state}/${r.verdict.reason}`];
    return {
      name: `screens/${r.name}`,
      program: f.profile === 'shell' ? 'programs' : f.profile,
      synthetic: f.synthetic,
      label: { state: f.label.state, ...(f.label.dialogKind ? { dialogKind: f.label.dialogKind } : {}) },
      verdict: r.verdict,
      stateOk: r.verdict.state === f.label.state,
      ok: r.ok,
      wrong,
      unescalated: false,
      dangerousAnswered: false,
    };
  });
}

/** counts[labelled][classified] over judged frames. */
export function judgedMatrix(frames: readonly JudgedFrame[]): Record<SessionState, Record<SessionState, number>> {
  const m = Object.fromEntries(STATES.map((a) => [a, Object.fromEntries(STATES.map((b) => [b, 0]))])) as Record<SessionState, Record<SessionState, number>>;
  for (const f of frames) m[f.label.state][f.verdict.state] += 1;
  return m;
}

/** The frames the classifier is known to get wrong today (part 2 of issue 12 empties it): name → class. */
export function loadKnownWrong(dir: string): Record<string, string> {
  const file = join(dir, 'known-wrong.json');
  if (!existsSync(file)) return {};
  const parsed = JSON.parse(readFileSync(file, 'utf8')) as { frames?: Record<string, string> };
  return parsed.frames ?? {};
}
