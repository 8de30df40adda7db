/**
 * Watches output text for a waited-for pattern, incrementally: each chunk is examined once, with a
 * one-line overlap, so a wait costs O(output) however long the command runs. Lines that are the
 * echo of what we typed are left out; the line still being written is examined as it grows.
 */
import { isEcho, newRows, type TextPattern, toMatcher } from './text-match.js';

export class TextWatch {
  private readonly matches: (hay: string) => boolean;
  /** The last complete line kept (not an echo): patterns may span it and the next one. */
  private previous = '';
  private partial = '';

  constructor(
    pattern: TextPattern,
    private readonly needles: readonly string[],
  ) {
    this.matches = toMatcher(pattern);
  }

  private kept(line: string): boolean {
    return !this.needles.some((n) => isEcho(line, n));
  }

  /** Adds output text (control sequences already stripped); true once the pattern has appeared. */
  push(text: string): boolean {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    const fresh = parts.filter((l) => this.kept(l));
    const tail = this.kept(this.partial) ? this.partial : '';
    const hay = [this.previous, ...fresh, tail].join('\n');
    if (fresh.length > 0) this.previous = fresh[fresh.length - 1] ?? '';
    return this.matches(hay);
  }

  /** True when the pattern is on the screen rows that are new since `baseline` (not echoes). */
  onScreen(baseline: readonly string[], rows: readonly string[]): boolean {
    return this.matches(newRows(baseline, rows).filter((l) => this.kept(l)).join('\n'));
  }
}
