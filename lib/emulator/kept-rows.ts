/**
 * The input baseline's rows kept between reads: only the rows the terminal's tracker
 * (screen/changed-rows.ts) marked since the last read are read again.
 */
import { visibleRows } from './screen-snapshot.js';
import type { CreatedTerminal } from './headless.js';

/** The visible rows' text kept between reads, re-read where the terminal's tracker says they may differ. */
export class KeptRows {
  #terminal: CreatedTerminal | undefined;
  #lines: string[] = [];

  /** Equals `visibleRows(created, 0, rows).lines`; the array is this reader's (copy it to keep it). */
  read(created: CreatedTerminal): readonly string[] {
    const { term, internals } = created;
    const changed = internals?.changedRows;
    // A row index means the same row only on the terminal the rows were read from, at its size,
    // with the viewport at the bottom (xterm's redraw ranges are viewport rows). Read through the
    // core (internals is there whenever changed is): the public views cost µs after every key.
    if (!changed || !internals || created !== this.#terminal || this.#lines.length !== term.rows || internals.viewportY() !== internals.baseY()) {
      this.#lines = [...visibleRows(created, 0, term.rows, false).lines];
      this.#terminal = changed ? created : undefined;
      changed?.take();
      return this.#lines;
    }
    const due = changed.take();
    if (due !== null && due.from < term.rows) {
      const fresh = visibleRows(created, due.from, Math.min(due.to, term.rows), false).lines;
      for (let i = 0; i < fresh.length; i++) this.#lines[due.from + i] = fresh[i] as string;
    }
    return this.#lines;
  }
}
