/**
 * Rebuilds a mirror from a tmux snapshot (reference §5, "How to rebuild the mirror"): content with
 * default modes first, then the alternate screen, scroll region, modes, cursor and the pending
 * bytes of an unfinished escape sequence. The snapshot arrives parsed (`PaneCapture`, read by
 * lib/control/pane-capture.ts); the mirror calls this, never the other way round.
 */
import { ByteBuilder } from './byte-builder.js';
import { captureReplay, replayable, splitCaptureRows } from './capture-replay.js';
import { sgrOf, type Cell } from './cell-grid.js';
import { createTerminal } from './headless.js';
import type { PaneCapture } from '../control/pane-capture.js';

/** What a rebuild needs from the mirror: a fresh terminal of the capture's size. */
export interface RebuildTarget {
  /** Parses before returning when the terminal can (then `cellAt` sees the result). */
  write(bytes: Uint8Array): void;
  /** A visible cell as parsed so far; null when writes are not synchronous. */
  cellAt(x: number, y: number): Cell | null;
  /**
   * Called once the grid, modes and cursor are in place, just before the pending bytes: the
   * place to restore parser state carried over from the stream (the pending bytes may be an SGR
   * sequence that continues that pen).
   */
  beforePending?(): void;
}

/** xterm's and tmux's tab stops after a reset: every 8 columns. */
function defaultTabs(tabs: readonly number[], cols: number): boolean {
  const expected = Math.ceil(cols / 8) - 1;
  return tabs.length === expected && tabs.every((t, i) => t === (i + 1) * 8);
}

export function rebuildInto(target: RebuildTarget, capture: PaneCapture): void {
  const { state, cols, rows } = capture;
  const main = splitCaptureRows(capture.main);
  const out = new ByteBuilder();
  if (!state.alternateOn) {
    captureReplay(main, out);
  } else {
    // The current grid is the primary's history followed by the alternate rows; the primary's
    // visible rows come from the -a capture.
    const altCount = trailingLinesCovering(main, cols, rows);
    const history = main.slice(0, main.length - altCount);
    const saved = capture.alternateSaved ? splitCaptureRows(capture.alternateSaved) : new Array<Uint8Array>(rows).fill(new Uint8Array(0));
    captureReplay([...history, ...saved], out);
    // ?1049h saves this cursor, so leaving the alternate screen later restores tmux's saved one.
    out.ascii(`\x1b[${state.alternateSavedY + 1};${Math.min(state.alternateSavedX, cols - 1) + 1}H\x1b[?1049h\x1b[H`);
    captureReplay(main.slice(main.length - altCount), out);
  }
  if (state.tabs.length > 0 && !defaultTabs(state.tabs, cols)) {
    out.ascii('\x1b[3g');
    for (const t of state.tabs) if (t < cols) out.ascii(`\x1b[1;${t + 1}H\x1bH`);
  }
  // DECSTBM and DECOM both home the cursor: before the CUP.
  out.ascii(`\x1b[${state.scrollRegionUpper + 1};${state.scrollRegionLower + 1}r`);
  if (state.origin) out.ascii('\x1b[?6h');
  const row = (state.origin ? state.cursorY - state.scrollRegionUpper : state.cursorY) + 1;
  const pendingWrap = state.cursorX >= cols;
  out.ascii(`\x1b[${row};${Math.min(state.cursorX, cols - 1) + 1}H`);
  target.write(out.build());

  if (pendingWrap) {
    // tmux reports cursor_x == pane_width after the last column was written; xterm reaches that
    // state only by printing there, so the cell's own character is printed again (before IRM is on).
    const last = target.cellAt(cols - 1, state.cursorY);
    const cell = last?.width === 0 ? target.cellAt(cols - 2, state.cursorY) : last;
    if (cell) {
      const x = cell === last ? cols - 1 : cols - 2;
      target.write(new ByteBuilder().ascii(`\x1b[${row};${x + 1}H${sgrOf(cell)}`).bytes(replayable(utf8(cell.ch))).ascii('\x1b[0m').build());
    }
  }

  const modes = new ByteBuilder();
  if (state.keypadCursor) modes.ascii('\x1b[?1h');
  if (state.keypad) modes.ascii('\x1b=');
  if (state.insert) modes.ascii('\x1b[4h');
  if (!state.wrap) modes.ascii('\x1b[?7l');
  if (state.mouseStandard) modes.ascii('\x1b[?1000h');
  if (state.mouseButton) modes.ascii('\x1b[?1002h');
  if (state.mouseAll) modes.ascii('\x1b[?1003h');
  if (state.mouseSgr) modes.ascii('\x1b[?1006h');
  if (!state.cursorVisible) modes.ascii('\x1b[?25l');
  target.write(modes.build());
  target.beforePending?.();
  if (capture.pending.length > 0) target.write(capture.pending);
}

/**
 * How many trailing capture lines make up the last `rows` screen rows. With -J a line that wrapped
 * is one capture line but several rows, so the lines are measured by writing them into a scratch
 * terminal of the same width. If a line straddles the boundary (a history line whose wrap flag
 * joined it to the first alternate row), it is counted with the alternate rows: the alternate
 * screen then scrolls its head away and ends exact.
 */
function trailingLinesCovering(lines: readonly Uint8Array[], cols: number, rows: number): number {
  const tail = lines.slice(Math.max(0, lines.length - rows));
  // Upper bound of the rows `tail` can occupy (every column holds at least one byte), as scrollback.
  const bound = tail.reduce((n, l) => n + Math.ceil(l.length / cols) + 1, 0);
  const { term, internals } = createTerminal(cols, rows, bound);
  try {
    // Without the sync path the scratch grid cannot be read now: assume one row per line.
    if (!internals) return tail.length;
    internals.writeSync(captureReplay(tail).build());
    return countFromEnd(term, tail.length, rows);
  } finally {
    term.dispose();
  }
}

function countFromEnd(term: ReturnType<typeof createTerminal>['term'], lineCount: number, rows: number): number {
  const buffer = term.buffer.active;
  const heights: number[] = [];
  for (let y = 0; y < buffer.length && heights.length <= lineCount; y++) {
    const line = buffer.getLine(y);
    if (line && line.isWrapped && heights.length > 0) heights[heights.length - 1]! += 1;
    else heights.push(1);
  }
  let covered = 0;
  let count = 0;
  for (let i = Math.min(lineCount, heights.length) - 1; i >= 0 && covered < rows; i--) {
    covered += heights[i] ?? 1;
    count++;
  }
  return count;
}

function utf8(s: string): Uint8Array {
  const out: number[] = [];
  for (const ch of s) {
    const c = ch.codePointAt(0) ?? 0x20;
    if (c < 0x80) out.push(c);
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 0x3f));
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 0x3f), 0x80 | ((c >> 6) & 0x3f), 0x80 | (c & 0x3f));
  }
  return Uint8Array.from(out);
}
