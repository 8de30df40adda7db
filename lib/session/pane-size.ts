/**
 * The pane sizes a drive accepts, at create (driver), at resize (session) and in a backend that
 * sizes its own pty (spawn): one definition, one message.
 */
import { UsageError } from '../common/errors.js';
import { CONFIG_BOUNDS } from '../policy/config-schema.js';

/** One column cannot hold a wide character; the config's `defaults.cols/rows` start here too. */
export const MIN_PANE_DIMENSION = 2;
/** The config's bound (1000×1000 cells already costs a CPU core to redraw). */
export const MAX_PANE_DIMENSION = CONFIG_BOUNDS.cells;

/** Throws BAD_SIZE naming the first of `cols`, `rows` that is not an integer in the bounds. */
export function checkPaneSize(cols: number, rows: number): void {
  for (const [label, n] of [['cols', cols], ['rows', rows]] as const) {
    if (!Number.isInteger(n) || n < MIN_PANE_DIMENSION || n > MAX_PANE_DIMENSION) {
      throw new UsageError('BAD_SIZE', `${label} must be an integer from ${MIN_PANE_DIMENSION} to ${MAX_PANE_DIMENSION} (got ${String(n)})`);
    }
  }
}
