/**
 * Watches output text for a waited-for pattern, incrementally: each chunk is examined once, with
 * the previous line and the line in progress as overlap, so a wait costs O(output) however long
 * the command runs. The echo of what we typed is known by position: it is what the stream prints
 * right after the input was sent, as long as that is the typed text (line by line, up to each line
 * end); the first character that differs ends it (a program that does not echo prints its answer
 * there). On the screen, the rows the caller names (where the cursor was).
 */
import { newRowIndexes, type TextPattern, toMatcher } from './text-match.js';

/**
 * Of the previous line and the line in progress, the tail kept as overlap: a line that never ends
 * (a progress bar redrawn with CR) would otherwise be re-scanned on every chunk. A match that needs
 * more of one line than this is found on the screen instead.
 */
const OVERLAP_CHARS = 1024;

function tail(line: string): string {
  return line.length > OVERLAP_CHARS ? line.slice(-OVERLAP_CHARS) : line;
}

export class TextWatch {
  private readonly matches: (hay: string) => boolean;
  /** The last complete line that was not an echo (its tail): a pattern may span it and the next one. */
  private previous: string | undefined;
  /** The line in progress (its tail), when it is not an echo. */
  private partial = '';
  /** The typed lines whose echo is still expected; the first is under way. */
  private echo: string[];

  constructor(pattern: TextPattern, echo: readonly string[]) {
    this.matches = toMatcher(pattern);
    this.echo = [...echo];
  }

  /** Input of these lines was just sent: their echo comes next (the line in progress is its start). */
  markInput(typedLines: readonly string[]): void {
    this.echo = [...typedLines];
    this.partial = '';
  }

  /** Adds output text (control sequences already stripped); true once the pattern has appeared. */
  push(text: string): boolean {
    let at = 0;
    while (this.echo.length > 0 && at < text.length) {
      const ch = text[at] as string;
      const want = this.echo[0] as string;
      if (ch === '\r') at++;
      else if (ch === '\n') {
        // The echo of this line ends with the line.
        this.echo.shift();
        this.partial = '';
        at++;
      } else if (ch === want[0]) {
        this.echo[0] = want.slice(1);
        at++;
      } else this.echo = [];
    }
    if (at >= text.length) return false;
    const body = at === 0 ? text : text.slice(at);
    const line = this.partial + body;
    const hay = this.previous === undefined ? line : `${this.previous}\n${line}`;
    const last = body.lastIndexOf('\n');
    if (last < 0) this.partial = tail(line);
    else {
      const before = body.lastIndexOf('\n', last - 1);
      this.previous = tail(before < 0 ? this.partial + body.slice(0, last) : body.slice(before + 1, last));
      this.partial = tail(body.slice(last + 1));
    }
    return this.matches(hay);
  }

  /** True when the pattern is on the screen rows that are new since `baseline`, leaving out `echoRows`. */
  onScreen(baseline: readonly string[], rows: readonly string[], echoRows: ReadonlySet<number>): boolean {
    const fresh = newRowIndexes(baseline, rows).filter((y) => !echoRows.has(y));
    return fresh.length > 0 && this.matches(fresh.map((y) => rows[y] ?? '').join('\n'));
  }
}
