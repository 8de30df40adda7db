/**
 * How a plain-text flood gathers into batches on the parse scheduler (lib/emulator/queued-parse.ts):
 * a stream keeps gathering through the gaps of a loaded loop and while it still feeds the batch
 * (up to 1 s), and bytes that arrive after a batch fell due wait for the next one. Each case ends
 * with the grid, history and cursor equal to a mirror that parses every byte.
 *
 * The real Mirror and xterm, but the scheduler's port (time, timers, the deferred turn) is driven
 * by hand: which chunk lands in which batch depends on when timers fire relative to writes, which
 * a loaded machine cannot make repeatable.
 */
import { describe, expect, it } from 'vitest';
import type { TimerHandle } from '../../lib/common/clock.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { createParseScheduler, type ParseScheduler } from '../../lib/emulator/parse-scheduler.js';

const COLS = 40;
const ROWS = 10;
const HISTORY = 200;

class ManualPort {
  now = 0;
  readonly #turns: (() => void)[] = [];
  readonly #timers = new Set<{ readonly at: number; readonly fn: () => void }>();
  readonly scheduler: ParseScheduler = createParseScheduler({
    defer: (fn) => void this.#turns.push(fn),
    now: () => this.now,
    after: (ms, fn): TimerHandle => {
      const timer = { at: this.now + ms, fn };
      this.#timers.add(timer);
      return { cancel: () => void this.#timers.delete(timer) };
    },
  });

  /** The deferred parse turns, as the loop runs them after polling I/O. */
  runTurns(): void {
    while (this.#turns.length > 0) this.#turns.shift()?.();
  }

  /** Time passes to `t`: due timers fire in order; with `turns`, each is followed by the turns it asked for. */
  until(t: number, turns = true): void {
    for (;;) {
      const next = [...this.#timers].filter((x) => x.at <= t).sort((a, b) => a.at - b.at)[0];
      if (!next) break;
      this.now = next.at;
      this.#timers.delete(next);
      next.fn();
      if (turns) this.runTurns();
    }
    this.now = t;
  }
}

let lineNo = 0;
/** `n` lines of plain text, each `\r` text `\n` (~32 bytes). */
function lines(n: number): Uint8Array {
  let out = '';
  for (let i = 0; i < n; i++, lineNo++) out += `\r${lineNo} ${'x'.repeat(24)}\n`;
  return new TextEncoder().encode(out);
}

function grid(m: Mirror): string {
  return `${m.cursor.x},${m.cursor.y}\n${m.snapshot({ format: 'ansi', scrollback: 'all' }).content}`;
}

function mirrors(port: ManualPort): { fast: Mirror; full: Mirror; write: (b: Uint8Array) => void } {
  const options = { cols: COLS, rows: ROWS, scrollback: HISTORY, scheduler: port.scheduler };
  const fast = new Mirror(options);
  const full = new Mirror({ ...options, fastForward: false });
  return {
    fast,
    full,
    write: (b) => {
      fast.write(b);
      full.write(b);
      port.runTurns();
    },
  };
}

describe('stream batches on the parse scheduler', () => {
  it('bytes that stream in after a batch fell due gather into the next batch, not parsed as they come', () => {
    const port = new ManualPort();
    const { fast, full, write } = mirrors(port);
    for (let k = 0; k < 10; k++) write(lines(100));
    // The batch's checks: fed at 100 ms, nothing new at 200 ms: due, its turn not run yet.
    port.until(200, false);
    const late = lines(100);
    write(late);
    expect(fast.backlogBytes).toBe(late.length);
    port.until(500);
    expect(fast.backlogBytes).toBe(0);
    expect(fast.fastForwardStats.skips).toBeGreaterThan(0);
    expect(grid(fast)).toBe(grid(full));
  });

  it('a stream that pauses as on a held loop (150 ms) still gathers: its next chunk is not parsed at once', () => {
    const port = new ManualPort();
    const { fast, full, write } = mirrors(port);
    for (let k = 0; k < 10; k++) write(lines(100));
    port.until(150, false);
    write(lines(60));
    expect(fast.backlogBytes).toBeGreaterThan(0);
    port.until(600);
    expect(fast.backlogBytes).toBe(0);
    expect(grid(fast)).toBe(grid(full));
  });

  it('a batch the stream keeps feeding waits up to 1 s, and is parsed within 200 ms of the last byte', () => {
    const port = new ManualPort();
    const { fast, full, write } = mirrors(port);
    write(lines(600));
    const parsedAt: number[] = [];
    fast.onChange(() => parsedAt.push(port.now));
    for (let t = 50; t <= 1500; t += 50) {
      port.until(t);
      write(lines(600));
    }
    const firstBatch = parsedAt[0] ?? Number.POSITIVE_INFINITY;
    expect(firstBatch).toBeGreaterThanOrEqual(900);
    expect(firstBatch).toBeLessThanOrEqual(1000);
    port.until(1700);
    expect(fast.backlogBytes).toBe(0);
    expect(parsedAt.at(-1)).toBeLessThanOrEqual(1700);
    expect(fast.fastForwardStats.skippedBytes).toBeGreaterThan(0);
    expect(grid(fast)).toBe(grid(full));
  });
});
