/**
 * The read side of a mirror: what its grid shows, as the cursor, the screen's modes, snapshots,
 * rows, cells and a digest. Every read goes through `open()`, the mirror's (mirror.ts), which
 * parses the bytes still queued first, so a read sees everything written; the write side (the
 * sync path, the queue, backpressure, rebuilds) stays in mirror.ts. A base class, not a member
 * the mirror calls: a read (the cursor per keystroke, the baseline's rows) costs no extra call.
 */
import { readVisibleCells, type CellGrid, type CursorState } from './cell-grid.js';
import { gridDigest } from './grid-digest.js';
import type { CreatedTerminal } from './headless.js';
import { KeptRows } from './kept-rows.js';
import { takeSnapshot, visibleRows, type ScreenSnapshot, type SnapshotOptions, type VisibleRows } from './screen-snapshot.js';

export function cursorOf({ term, internals }: CreatedTerminal): CursorState {
  if (internals) return { x: internals.cursorX(), y: internals.cursorY(), visible: !internals.cursorHidden() };
  const buffer = term.buffer.active;
  return { x: buffer.cursorX, y: buffer.cursorY, visible: true };
}

export function alternateOf({ term, internals }: CreatedTerminal): boolean {
  return internals ? internals.alternate() : term.buffer.active.type === 'alternate';
}

export abstract class MirrorView {
  /** The input baseline's rows between reads (one reader: the session's wait engine). */
  readonly #keptRows = new KeptRows();
  /**
   * The last digest and the seq it was taken at. Every grid change (bytes, resize, rebuild, reset)
   * goes through the mirror's #parsed, which bumps seq: a digest asked again with no parse since is the same.
   */
  #digestMemo: { readonly seq: number; readonly value: string } | undefined;

  /** Parse counter: increases every time bytes reach the grid (or the grid is resized or replaced). */
  abstract get seq(): number;

  /** The terminal for a read: bytes still gathering in the queue are parsed first (throws once disposed). */
  protected abstract open(): CreatedTerminal;

  get cursor(): CursorState {
    return cursorOf(this.open());
  }

  get cursorVisible(): boolean {
    return !(this.open().internals?.cursorHidden() ?? false);
  }

  get alternate(): boolean {
    return alternateOf(this.open());
  }

  /** Input modes the program turned on (decides the bytes of a key or a paste on a raw pty). */
  get inputModes(): { readonly applicationCursorKeys: boolean; readonly applicationKeypad: boolean; readonly bracketedPaste: boolean } {
    const m = this.open().term.modes;
    return { applicationCursorKeys: m.applicationCursorKeysMode, applicationKeypad: m.applicationKeypadMode, bracketedPaste: m.bracketedPasteMode };
  }

  snapshot(options: SnapshotOptions): ScreenSnapshot {
    return takeSnapshot(this.open(), options, this.cursor, this.alternate);
  }

  /**
   * Rows `from`..`to - 1` as text (0 = the top of the screen, negative = history), with their breaks
   * when asked: a few rows without a whole snapshot (the input baseline, a cursor line).
   */
  visibleRows(from: number, to: number, breaks = false): VisibleRows {
    return visibleRows(this.open(), from, to, breaks);
  }

  /** The visible rows' text, as `visibleRows(0, rows)` reads it, re-reading only rows changed since the last call (kept-rows.ts). */
  screenRows(): readonly string[] {
    return this.#keptRows.read(this.open());
  }

  cells(): CellGrid {
    const { term } = this.open();
    return { cols: term.cols, rows: term.rows, cells: readVisibleCells(term), cursor: this.cursor, alternate: this.alternate };
  }

  /**
   * A stable hash of the visible grid (chars, widths, colours, attributes), cursor and alternate flag.
   * Taken again only after a parse: settle checks ask for it on every activity event.
   */
  digest(): string {
    // open() parses what is queued first (bumping seq), so the memo is checked against the grid as read.
    const { term } = this.open();
    if (this.#digestMemo?.seq === this.seq) return this.#digestMemo.value;
    const value = gridDigest(term, this.cursor, this.alternate);
    this.#digestMemo = { seq: this.seq, value };
    return value;
  }

  /** Re-reads the rows changed since the last `screenRows()` of `terminal` (the mirror's keepRowsCurrent). */
  protected keepRows(terminal: CreatedTerminal): void {
    this.#keptRows.read(terminal);
  }
}
