/**
 * A mark on the row the cursor is on (Mirror.markCursorRow): an xterm marker, which follows that
 * row as the screen scrolls (moved when history is trimmed, gone when the row leaves the history).
 * It belongs to one terminal and one screen (main or alternate): lost when the mirror replaces its
 * terminal (rebuild, reset), is disposed, or shows the other screen.
 */
import type { Disposable } from '../common/disposable.js';
import type { CreatedTerminal } from './headless.js';

export interface RowMark extends Disposable {
  /** The marked row's index on the visible screen now (negative: scrolled into the history); undefined once lost. */
  visibleRow(): number | undefined;
}

/** `current`: whether `terminal` is still the mirror's live terminal. */
export function markCursorRow(terminal: CreatedTerminal, current: () => boolean): RowMark {
  const { term, internals } = terminal;
  // Through the core when it is there: read after every keystroke, where the public views cost µs.
  const alternate = internals ? (): boolean => internals.alternate() : (): boolean => term.buffer.active.type === 'alternate';
  const baseY = internals ? (): number => internals.baseY() : (): number => term.buffer.active.baseY;
  const markedOnAlternate = alternate();
  const marker = term.registerMarker(0);
  return {
    visibleRow: () => {
      if (!marker || marker.isDisposed || !current() || alternate() !== markedOnAlternate) return undefined;
      return marker.line - baseY();
    },
    dispose: () => marker?.dispose(),
  };
}
