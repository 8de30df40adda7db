/** Screens for the perception tests: ANSI text parsed by the real mirror, so cells are the emulator's. */
import { Mirror } from '../../lib/emulator/mirror.js';
import type { ClassifierSnapshot } from '../../lib/perceive/screen.js';
import type { ScreenSignals } from '../../lib/perceive/classify-screen.js';
import { perceivedCells } from '../../tools/fixture-format.js';

/** `\n` is a new line (CR LF); cursor and modes follow whatever escapes the text holds. */
export function screen(ansi: string, size: { cols?: number; rows?: number } = {}): ClassifierSnapshot {
  const mirror = new Mirror({ cols: size.cols ?? 60, rows: size.rows ?? 12, scrollback: 0, syncWriteMaxBytes: 1 << 20 });
  if (!mirror.hasSyncPath) throw new Error('the mirror has no synchronous parse path: these helpers need it');
  mirror.write(new TextEncoder().encode(ansi.replace(/\r?\n/g, '\r\n')));
  const snap = mirror.snapshot({ format: 'text' });
  const cells = mirror.cells();
  mirror.dispose();
  return { lines: snap.lines, cursor: snap.cursor, alternate: snap.alternate, cols: snap.cols, rows: snap.rows, cells: perceivedCells(cells.cells) };
}

/** Settled: the last output was 5 s ago. */
export function quiet(extra: Partial<ScreenSignals> = {}): ScreenSignals {
  return { now: 10_000, lastOutputAt: 5_000, lastChangeAt: 5_000, interactions: 1, ...extra };
}

/** Output arrived 20 ms ago. */
export function flowing(extra: Partial<ScreenSignals> = {}): ScreenSignals {
  return { now: 10_000, lastOutputAt: 9_980, lastChangeAt: 9_980, interactions: 1, ...extra };
}

export const DIM = '\x1b[2m';
export const INV = '\x1b[7m';
export const RESET = '\x1b[0m';
export const ALT = '\x1b[?1049h\x1b[H';
export const HIDE = '\x1b[?25l';
export const at = (row: number, col: number): string => `\x1b[${row + 1};${col + 1}H`;
