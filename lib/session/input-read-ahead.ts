/**
 * The next input's mark and baseline, read after an echo's event (WaitEngine.afterOutput): what
 * markInput and takeBaseline would read, as long as the grid is the one they were read from (the
 * mirror's seq unchanged, nothing written but unparsed; every grid change, bytes, resize, rebuild or
 * reset, bumps seq). Typing's next key then reads nothing of the grid in its write's turn, nor on
 * its echo's way before the parse (docs/benchmarks.md, 2026-12-02 15:32).
 */
import type { Mirror, RowMark } from '../emulator/mirror.js';

export interface ReadAhead {
  /** The cursor's column. */
  readonly x: number;
  /** `marked` (the last input's row mark) when the cursor is on its row, else undefined. */
  readonly markedRow: RowMark | undefined;
  /** The baseline's rows, the cursor's row padded to the cursor. */
  readonly rows: readonly string[];
}

export class InputReadAhead {
  #ahead: (ReadAhead & { readonly seq: number }) | undefined;

  /** What was read ahead, while the grid is still the one it was read from. */
  current(mirror: Mirror): ReadAhead | undefined {
    const ahead = this.#ahead;
    if (ahead === undefined) return undefined;
    if (ahead.seq === mirror.seq && mirror.backlogBytes === 0) return ahead;
    this.#ahead = undefined;
    return undefined;
  }

  /**
   * Reads ahead once the kept rows are current (`Mirror.keepRowsCurrent`; else nothing is kept):
   * one cursor read serves the mark's column, the mark's row and the baseline's rows.
   */
  read(mirror: Mirror, marked: RowMark | undefined): void {
    this.#ahead = undefined;
    if (!mirror.keepRowsCurrent()) return;
    const cursor = mirror.cursor;
    this.#ahead = {
      seq: mirror.seq,
      x: cursor.x,
      markedRow: marked !== undefined && marked.visibleRow() === cursor.y ? marked : undefined,
      rows: padCursorRow([...mirror.screenRows()], cursor),
    };
  }
}

/** The cursor's row kept up to the cursor, so that a prompt's trailing space ('$ ') is there to match. */
export function padCursorRow(rows: string[], cursor: { readonly x: number; readonly y: number }): string[] {
  const row = rows[cursor.y];
  if (row !== undefined && row.length < cursor.x) rows[cursor.y] = row.padEnd(cursor.x, ' ');
  return rows;
}
