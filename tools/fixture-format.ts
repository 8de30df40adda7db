/**
 * The screen fixture corpus (test/fixtures/screens/*.json): one labelled frame per file, with
 * the cells stored compactly (the text lines plus runs of non-default attributes), so a file is
 * a few KB and still replays every rule that reads cells (ghost text, highlighted options).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
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
export function fixtureSnapshot(f: FixtureFile): ClassifierSnapshot {
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
