/**
 * Which screen rows may have changed since they were last read, so a reader that keeps the rows'
 * text (the input baseline after every keystroke) re-reads those alone instead of the whole screen.
 *
 * Marked from three sources, each conservative (a row marked that did not change costs a re-read,
 * never a wrong row): every row tmux's screen port fetches through `TmuxScreen.line` (its print
 * and every handler reach a line only there; reads count too), the rows xterm's own handlers ask to
 * be redrawn after each parse (its dirty-row range), and anything that moves rows or swaps the
 * buffer: a scroll, a resize, the alternate screen, a reset (all rows). A terminal without the port
 * has no tracker (headless.ts): its rows are read whole. The reader is ../kept-rows.ts.
 */
const ALL = Number.MAX_SAFE_INTEGER;

export class ChangedRows {
  // Everything is due until the first take.
  #top = 0;
  #bottom = ALL;

  mark(y: number): void {
    if (y < this.#top) this.#top = y;
    if (y > this.#bottom) this.#bottom = y;
  }

  markRange(from: number, to: number): void {
    this.mark(Math.min(from, to));
    this.mark(Math.max(from, to));
  }

  markAll(): void {
    this.#top = 0;
    this.#bottom = ALL;
  }

  /** The rows marked since the last take, `[from, to)` (to may pass the screen), or null; then none. */
  take(): { readonly from: number; readonly to: number } | null {
    const due = this.#top <= this.#bottom ? { from: Math.max(0, this.#top), to: this.#bottom === ALL ? ALL : this.#bottom + 1 } : null;
    this.#top = ALL;
    this.#bottom = -1;
    return due;
  }
}
