/**
 * The size of a drive's terminal, in cells, checked in one place: create() (the driver), resize()
 * (the session) and the spawn backend's pty all hold a caller to the same bounds.
 */
import { UsageError } from './errors.js';

/** The smallest pane side a drive accepts: a one-cell line cannot hold a prompt and its cursor. */
export const MIN_TERMINAL_DIMENSION = 2;
/** 1000×1000 cells already costs a CPU core to redraw (tmux itself refuses beyond 10 000). */
export const MAX_TERMINAL_DIMENSION = 1000;

/** Throws BAD_SIZE naming the side unless both are integers within the bounds. */
export function checkTerminalSize(cols: unknown, rows: unknown): void {
  for (const [label, n] of [['cols', cols], ['rows', rows]] as const) {
    if (typeof n !== 'number' || !Number.isInteger(n) || n < MIN_TERMINAL_DIMENSION || n > MAX_TERMINAL_DIMENSION) {
      throw new UsageError('BAD_SIZE', `${label} must be an integer from ${MIN_TERMINAL_DIMENSION} to ${MAX_TERMINAL_DIMENSION} (got ${String(n)})`);
    }
  }
}
