/**
 * A snapshot of the mirror's screen in one of the read formats: the text, ANSI or HTML content
 * (with history rows above the screen on request), the visible rows as text, the cursor, and how
 * each row follows the one above (for redaction that sees a wrapped secret as one word).
 */
import type { IBufferCell, IBufferLine } from '@xterm/headless';
import type { CursorState } from './cell-grid.js';
import type { CreatedTerminal } from './headless.js';

export type SnapshotFormat = 'text' | 'ansi' | 'html';

export interface SnapshotOptions {
  readonly format: SnapshotFormat;
  /** History rows to include above the screen; default 0. */
  readonly scrollback?: number | 'all';
}

export interface ScreenSnapshot {
  readonly content: string;
  readonly format: SnapshotFormat;
  readonly cols: number;
  readonly rows: number;
  readonly cursor: CursorState;
  readonly alternate: boolean;
  /** Text of the visible rows, right-trimmed. */
  readonly lines: readonly string[];
  /** History rows included in `content` above the screen. */
  readonly scrollbackLines: number;
  /**
   * text and html: how each row of `content` follows the row above it: a new line, a soft wrap at
   * the right margin (the same line goes on), or a soft wrap after blank cells (which a text row,
   * right-trimmed, leaves out). ansi: empty (the serialized stream carries its wraps itself).
   */
  readonly rowBreaks: readonly RowBreak[];
}

export type RowBreak = 'line' | 'wrap' | 'wrap-after-blank';

/** The screen of `term` now; `cursor` and `alternate` are the mirror's (xterm's public API lacks the cursor's visibility). */
export function takeSnapshot({ term, serializer }: Pick<CreatedTerminal, 'term' | 'serializer'>, options: SnapshotOptions, cursor: CursorState, alternate: boolean): ScreenSnapshot {
  const active = term.buffer.active;
  const lines: string[] = [];
  for (let y = 0; y < term.rows; y++) lines.push(rowText(active, active.baseY + y));
  const wanted = (available: number): number => (options.scrollback === 'all' ? available : Math.max(0, Math.min(options.scrollback ?? 0, available)));
  let content: string;
  let scrollbackLines: number;
  let rowBreaks: RowBreak[] = [];
  const breaksOf = (from: number, count: number): RowBreak[] => Array.from({ length: count }, (_, i): RowBreak => breakAt(active, term.cols, from + i));
  switch (options.format) {
    case 'text': {
      scrollbackLines = wanted(active.baseY);
      const history: string[] = [];
      for (let y = active.baseY - scrollbackLines; y < active.baseY; y++) history.push(rowText(active, y));
      content = [...history, ...lines].join('\n');
      rowBreaks = breaksOf(active.baseY - scrollbackLines, scrollbackLines + term.rows);
      break;
    }
    case 'ansi':
      // serialize() takes its history from the normal buffer, also while the alternate is active.
      scrollbackLines = wanted(term.buffer.normal.length - term.rows);
      content = serializer.serialize({ scrollback: scrollbackLines });
      break;
    case 'html': {
      scrollbackLines = wanted(active.baseY);
      content = serializer.serializeAsHTML({ scrollback: scrollbackLines });
      // The rows serializeAsHTML writes: the last `scrollback + rows` lines of the buffer.
      const count = Math.min(scrollbackLines + term.rows, active.length);
      rowBreaks = breaksOf(active.length - count, count);
      break;
    }
  }
  return { content, format: options.format, cols: term.cols, rows: term.rows, cursor, alternate, lines, scrollbackLines, rowBreaks };
}

/** Visible rows as text with their breaks: a few rows without a whole snapshot (the input baseline, a cursor line). */
export interface VisibleRows {
  /** The first row read: 0 = the top of the screen, negative = a history row above it. */
  readonly from: number;
  /** Text of each row, right-trimmed. */
  readonly lines: readonly string[];
  /** How each row follows the one above it (the first row's break says whether it continues the row above it). */
  readonly rowBreaks: readonly RowBreak[];
}

/** Rows `from`..`to - 1` (clamped to the history and the screen), with their breaks when `breaks` is asked for. */
export function visibleRows({ term }: Pick<CreatedTerminal, 'term'>, from: number, to: number, breaks: boolean): VisibleRows {
  const active = term.buffer.active;
  const first = Math.max(-active.baseY, Math.min(from, term.rows));
  const end = Math.max(first, Math.min(to, term.rows));
  const lines: string[] = [];
  const rowBreaks: RowBreak[] = [];
  for (let y = first; y < end; y++) {
    lines.push(rowText(active, active.baseY + y));
    if (breaks) rowBreaks.push(breakAt(active, term.cols, active.baseY + y));
  }
  return { from: first, lines, rowBreaks };
}

/** How buffer row `y` follows the row above it. */
function breakAt(active: CreatedTerminal['term']['buffer']['active'], cols: number, y: number): RowBreak {
  if (!(active.getLine(y)?.isWrapped ?? false)) return 'line';
  const last = active.getLine(y - 1)?.getCell(cols - 1);
  const ch = last?.getChars() ?? '';
  return (ch === '' || ch === ' ') && last?.getWidth() !== 0 ? 'wrap-after-blank' : 'wrap';
}

/**
 * A row's text without trailing blanks, cell by cell: xterm's translateToString steps over the
 * column after a wide character, which tmux can leave holding a character of its own (a wide
 * character at column 0 whose second half was overwritten keeps its first half).
 */
function rowText(buffer: CreatedTerminal['term']['buffer']['active'], y: number): string {
  const line = buffer.getLine(y);
  if (!line) return '';
  // Only the cells up to the last one with content can show anything (the rest read as blanks,
  // trimmed). xterm's own trimmed translation finds that end without a call per cell: empty, the
  // row is blank. Otherwise every cell is looked at.
  const translated = line.translateToString(true);
  if (translated === '') return '';
  // All ASCII: no wide character, so no column was stepped over and each cell gave one character
  // (an empty one a space): the translation is the row (the input baseline after every keystroke
  // reads the prompt row this way, with no string per cell). One exception: a delete-character
  // that removes a wide character's first half leaves its second (width 0, as tmux does), which
  // the translation reads as a space and tmux's capture leaves out; only a space can be one.
  const cell = buffer.getNullCell();
  if (isAscii(translated) && !hasOrphanedHalf(line, translated, cell)) return translated.replace(/ +$/, '');
  const end = line.length;
  let text = '';
  for (let x = 0; x < end; x++) {
    line.getCell(x, cell);
    if (cell.getWidth() === 0) continue;
    text += cell.getChars() || ' ';
  }
  return text.replace(/ +$/, '');
}

/** True when a space of an all-ASCII translation (column = index) is a wide character's second half. */
function hasOrphanedHalf(line: IBufferLine, translated: string, cell: IBufferCell): boolean {
  for (let x = translated.indexOf(' '); x !== -1; x = translated.indexOf(' ', x + 1)) if (line.getCell(x, cell)?.getWidth() === 0) return true;
  return false;
}

function isAscii(text: string): boolean {
  for (let i = 0; i < text.length; i++) if (text.charCodeAt(i) > 0x7e) return false;
  return true;
}
