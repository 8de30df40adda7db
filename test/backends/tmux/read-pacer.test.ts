/**
 * The read pacer's rules on a hand-driven loop (a test clock, deferred turns and timers run when the
 * test says): nothing held while no echo is awaited; the other drives' chunks held while one is, the
 * awaiting drive's own handled at once; let go at the echo, at the echo's deadline, or after
 * MAX_HOLD_MS however many echoes follow one another; each drive's order kept; a long queue stops
 * its pipe until handled; a close hands over what was held. The real drives' side is
 * concurrent-floods.test.ts and the bench (many-streams).
 */
import { describe, expect, it } from 'vitest';
import { ECHO_WAIT_MS, HIGH_BYTES, MAX_HOLD_MS, ReadPacer, type PacedReader } from '../../../backends/tmux/read-pacer.js';

class Loop {
  now = 0;
  readonly deferred: (() => void)[] = [];
  timers: { at: number; fn: () => void; live: boolean }[] = [];
  readonly port = {
    now: () => this.now,
    defer: (fn: () => void) => void this.deferred.push(fn),
    after: (ms: number, fn: () => void) => {
      const t = { at: this.now + ms, fn, live: true };
      this.timers.push(t);
      return { cancel: () => void (t.live = false) };
    },
  };
  /** Runs the deferred turns. */
  turn(): void {
    for (const fn of this.deferred.splice(0)) fn();
  }
  /** Moves the clock, firing the timers due, then runs the deferred turns. */
  advance(ms: number): void {
    this.now += ms;
    for (const t of this.timers.filter((x) => x.live && x.at <= this.now)) {
      t.live = false;
      t.fn();
    }
    this.timers = this.timers.filter((x) => x.live);
    this.turn();
  }
}

function reader(seen: string[], name: string): PacedReader & { paused: boolean[] } {
  const paused: boolean[] = [];
  return {
    paused,
    handle: (chunk) => void seen.push(`${name}${chunk[0]}`),
    setPaused: (p) => void paused.push(p),
  };
}
const chunk = (tag: number, bytes = 16 * 1024): Uint8Array => new Uint8Array(bytes).fill(tag);

function setup(): { loop: Loop; pacer: ReadPacer; seen: string[]; typed: ReturnType<typeof reader>; a: ReturnType<typeof reader>; b: ReturnType<typeof reader> } {
  const loop = new Loop();
  const pacer = new ReadPacer(loop.port);
  const seen: string[] = [];
  return { loop, pacer, seen, typed: reader(seen, 't'), a: reader(seen, 'a'), b: reader(seen, 'b') };
}

describe('the read pacer', () => {
  it('holds nothing while no echo is awaited', () => {
    const { loop, pacer, seen, a, b } = setup();
    for (let i = 0; i < 50; i++) {
      pacer.deliver(a, chunk(i));
      pacer.deliver(b, chunk(i));
    }
    expect(seen).toHaveLength(100);
    expect(loop.deferred).toHaveLength(0);
    expect(loop.timers).toHaveLength(0);
    expect(pacer.counts.queued).toBe(0);
  });

  it("holds the other drives' chunks while an echo is awaited, and hands them over after the echo's", () => {
    const { loop, pacer, seen, typed, a, b } = setup();
    pacer.expectEcho(typed);
    pacer.deliver(a, chunk(1));
    pacer.deliver(b, chunk(1));
    pacer.deliver(a, chunk(2));
    pacer.deliver(typed, chunk(7, 20));
    expect(seen).toEqual(['t7']);
    pacer.echoed(typed);
    // Not inside the echo's turn: its listeners run first.
    expect(seen).toEqual(['t7']);
    loop.turn();
    expect(seen).toEqual(['t7', 'a1', 'b1', 'a2']);
    expect(pacer.waitingChunks).toBe(0);
    // No echo awaited any more: handled as read.
    pacer.deliver(b, chunk(3));
    expect(seen.at(-1)).toBe('b3');
  });

  it("lets go at the echo's deadline when no echo comes (keys a program does not echo)", () => {
    const { loop, pacer, seen, typed, a } = setup();
    pacer.expectEcho(typed);
    pacer.deliver(a, chunk(1));
    loop.advance(ECHO_WAIT_MS - 1);
    expect(seen).toEqual([]);
    loop.advance(1);
    expect(seen).toEqual(['a1']);
    pacer.deliver(a, chunk(2));
    expect(seen).toEqual(['a1', 'a2']);
  });

  it('holds no chunk past MAX_HOLD_MS, however many echoes are awaited one after another', () => {
    const { loop, pacer, seen, typed, a } = setup();
    pacer.expectEcho(typed);
    pacer.deliver(a, chunk(0));
    for (let t = 1; t <= 20; t++) {
      // Keys that are never echoed, every 10 ms: each expectation renews the hold.
      loop.advance(10);
      pacer.expectEcho(typed);
      pacer.deliver(a, chunk(t));
      if (loop.now - 0 >= MAX_HOLD_MS) break;
    }
    expect(seen.length).toBeGreaterThan(0);
    expect(pacer.counts.longestWaitMs).toBeLessThanOrEqual(MAX_HOLD_MS + 10);
    const numbers = seen.map((s) => Number(s.slice(1)));
    expect(numbers).toEqual(numbers.map((_, i) => i));
  });

  it("keeps each drive's order, a small chunk behind its drive's held ones too", () => {
    const { loop, pacer, seen, typed, a, b } = setup();
    pacer.expectEcho(typed);
    for (let i = 0; i < 5; i++) {
      pacer.deliver(a, chunk(i));
      pacer.deliver(b, chunk(i, 10));
    }
    pacer.echoed(typed);
    // Read after the echo, before the held chunks were handled: behind them.
    pacer.deliver(a, chunk(9, 3));
    loop.turn();
    expect(seen.filter((s) => s.startsWith('a'))).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a9']);
    expect(seen.filter((s) => s.startsWith('b'))).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
  });

  it('lets a drive typed into have what was held of it, so its echo does not wait behind its own held chunks', () => {
    const { loop, pacer, seen, typed, a, b } = setup();
    pacer.expectEcho(typed);
    pacer.deliver(a, chunk(1));
    pacer.deliver(b, chunk(1));
    // Keys to a while its chunks are held for the other echo: they go in the next turn...
    pacer.expectEcho(a);
    pacer.deliver(a, chunk(2, 20));
    loop.turn();
    expect(seen).toEqual(['a1', 'b1', 'a2']);
    pacer.echoed(a);
    // ...and with both echoes awaited no more, nothing is held.
    pacer.echoed(typed);
    pacer.deliver(b, chunk(3));
    expect(seen.at(-1)).toBe('b3');
  });

  it("stops a drive's pipe past HIGH_BYTES held, and lets it read on once handled", () => {
    const { loop, pacer, typed, a } = setup();
    pacer.expectEcho(typed);
    for (let i = 0; i < HIGH_BYTES / (64 * 1024) + 2; i++) pacer.deliver(a, chunk(i, 64 * 1024));
    expect(a.paused).toEqual([true]);
    expect(pacer.counts.pauses).toBe(1);
    pacer.echoed(typed);
    loop.turn();
    expect(a.paused).toEqual([true, false]);
  });

  it('hands a closed drive what it held at once, in order, and a closed awaiting drive stops the hold', () => {
    const { loop, pacer, seen, typed, a, b } = setup();
    pacer.expectEcho(typed);
    pacer.deliver(a, chunk(1));
    pacer.deliver(a, chunk(2));
    pacer.deliver(b, chunk(1));
    pacer.flush(a);
    expect(seen).toEqual(['a1', 'a2']);
    // The drive waited on closes (its echo will never come): the others go on.
    pacer.flush(typed);
    loop.turn();
    expect(seen).toEqual(['a1', 'a2', 'b1']);
  });

  it("goes on with the others when one drive's handler throws while held chunks are handed over", async () => {
    const { loop, pacer, seen, typed, a } = setup();
    const bad: PacedReader = {
      handle: (c) => {
        if (c[0] === 1) throw new Error('boom');
      },
      setPaused: () => undefined,
    };
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown): void => void rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    try {
      pacer.expectEcho(typed);
      for (let i = 0; i < 3; i++) {
        pacer.deliver(bad, chunk(i));
        pacer.deliver(a, chunk(i));
      }
      pacer.echoed(typed);
      loop.turn();
      await new Promise((resolve) => setTimeout(resolve, 10));
    } finally {
      process.off('unhandledRejection', onRejection);
    }
    expect(seen).toEqual(['a0', 'a1', 'a2']);
    expect(rejections.map((r) => (r as Error).message)).toEqual(['boom']);
  });
});
