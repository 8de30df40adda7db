/**
 * The control clients' pipes share the host's one event loop, and a chunk read from a pipe is
 * handled in the turn that read it (the control parser, then the session's output path). With 20
 * drives streaming on two cores the loop is full (ELU 0.98), and a keystroke's echo in a 21st drive
 * waited behind the other drives' reads: 50–70 ms p50, 60–80x its idle echo (docs/benchmarks.md,
 * run of 2026-12-04 04:06).
 *
 * The pacer gives keys their echo first. While a drive waits for the echo of keys just written to it
 * (`expectEcho`, until its next `%output`, at most ECHO_WAIT_MS), the other drives' chunks wait in
 * their drive's queue instead of being handled as they are read; when no echo is awaited any more
 * (or a chunk has been held MAX_HOLD_MS, as keys that are never echoed come one after another),
 * everything queued is handled at once, drive by drive in turn, each drive's chunks in their order.
 * Holding streams only for the few milliseconds an echo takes keeps them far from tmux's
 * pause-after (5 s): a pacer that held them whenever they had taken 2 ms of the loop made tmux pause
 * 1–5 panes per phase and lose their output (the same run), and was not kept. A drive whose queue
 * passes HIGH_BYTES stops reading its pipe until its queue is handled. With no echo awaited (no
 * keys, or one drive alone) nothing is held and nothing runs.
 */

import type { TimerHandle } from '../../lib/common/clock.js';
import { systemClock } from '../process/system-clock.js';

/** One control client's side: handle a chunk read from its pipe, in order; stop or go on reading. */
export interface PacedReader {
  handle(chunk: Uint8Array): void;
  setPaused(paused: boolean): void;
}

export interface PacerPort {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Runs `fn` after pending I/O has been polled (setImmediate). */
  defer(fn: () => void): void;
  /** A real timer. */
  after(ms: number, fn: () => void): TimerHandle;
}

/** The longest the other drives' chunks are held for one echo. */
export const ECHO_WAIT_MS = 20;
/** The longest a chunk is held, however many echoes are awaited one after another. */
export const MAX_HOLD_MS = 100;
/** A held drive stops reading its pipe past this much queued. */
export const HIGH_BYTES = 256 * 1024;

interface Waiting {
  readonly chunks: Uint8Array[];
  bytes: number;
  paused: boolean;
}

export interface PacerCounts {
  /** Chunks that waited in a queue. */
  queued: number;
  /** Times a drive stopped reading its pipe because its queue was long. */
  pauses: number;
  /** The longest any chunk waited, ms. */
  longestWaitMs: number;
}

export class ReadPacer {
  readonly #port: PacerPort;
  /** Drives waiting for an echo, and until when. */
  readonly #expecting = new Map<PacedReader, number>();
  readonly #waiting = new Map<PacedReader, Waiting>();
  /** When the oldest held chunk was queued. */
  #heldSince = 0;
  #timer: TimerHandle | undefined;
  #drainDeferred = false;
  readonly counts: PacerCounts = { queued: 0, pauses: 0, longestWaitMs: 0 };

  constructor(port: PacerPort) {
    this.#port = port;
  }

  /** Chunks held, all drives. */
  get waitingChunks(): number {
    let n = 0;
    for (const w of this.#waiting.values()) n += w.chunks.length;
    return n;
  }

  /**
   * Keys were just written to `reader`'s drive: hold the others' chunks until its next output. Its
   * own chunks held for another drive's echo go now (its echo comes behind them, and would wait
   * out its own deadline otherwise).
   */
  expectEcho(reader: PacedReader): void {
    this.#expecting.set(reader, this.#port.now() + ECHO_WAIT_MS);
    if (this.#waiting.has(reader)) this.#release();
  }

  /** `reader`'s drive printed: its echo (or whatever it printed) is in. */
  echoed(reader: PacedReader): void {
    if (this.#expecting.delete(reader) && this.#expecting.size === 0) this.#release();
  }

  /** A chunk read from `reader`'s pipe: handled now, or held behind an awaited echo. */
  deliver(reader: PacedReader, chunk: Uint8Array): void {
    const waiting = this.#waiting.get(reader);
    if (waiting) return this.#enqueue(reader, waiting, chunk);
    if (this.#expecting.size === 0 || this.#expecting.has(reader) || !this.#stillExpecting()) return reader.handle(chunk);
    if (this.#waiting.size === 0) {
      this.#heldSince = this.#port.now();
      this.#armTimer();
    }
    const fresh: Waiting = { chunks: [], bytes: 0, paused: false };
    this.#waiting.set(reader, fresh);
    this.#enqueue(reader, fresh, chunk);
  }

  /** `reader`'s pipe closed: what it had held is handled now, in order (nothing comes after it). */
  flush(reader: PacedReader): void {
    this.#expecting.delete(reader);
    const waiting = this.#waiting.get(reader);
    if (waiting) {
      this.#waiting.delete(reader);
      for (const chunk of waiting.chunks.splice(0)) reader.handle(chunk);
    }
    if (this.#expecting.size === 0) this.#release();
  }

  /** Drops the expectations whose time is up; false when none is left. */
  #stillExpecting(): boolean {
    const now = this.#port.now();
    for (const [reader, until] of this.#expecting) if (until <= now) this.#expecting.delete(reader);
    if (this.#expecting.size > 0) return true;
    this.#release();
    return false;
  }

  #enqueue(reader: PacedReader, waiting: Waiting, chunk: Uint8Array): void {
    waiting.chunks.push(chunk);
    waiting.bytes += chunk.length;
    this.counts.queued += 1;
    if (!waiting.paused && waiting.bytes > HIGH_BYTES) {
      waiting.paused = true;
      this.counts.pauses += 1;
      reader.setPaused(true);
    }
    // Held chunks are let go as soon as no echo is awaited (a drive may have printed meanwhile).
    if (this.#expecting.size === 0) this.#release();
  }

  /** At the first awaited echo's deadline, or MAX_HOLD_MS after the oldest held chunk: let go then. */
  #armTimer(): void {
    this.#timer?.cancel();
    let until = this.#heldSince + MAX_HOLD_MS;
    for (const at of this.#expecting.values()) until = Math.min(until, at);
    this.#timer = this.#port.after(Math.max(0, until - this.#port.now()), () => {
      this.#timer = undefined;
      if (this.#port.now() - this.#heldSince >= MAX_HOLD_MS) this.#release();
      else if (this.#stillExpecting()) this.#armTimer();
    });
  }

  /** No echo is awaited: the held chunks are handled after this turn (the echo's own event first). */
  #release(): void {
    if (this.#waiting.size === 0 || this.#drainDeferred) return;
    this.#drainDeferred = true;
    this.#port.defer(this.#drain);
  }

  readonly #drain = (): void => {
    this.#drainDeferred = false;
    this.#timer?.cancel();
    this.#timer = undefined;
    this.counts.longestWaitMs = Math.max(this.counts.longestWaitMs, this.#port.now() - this.#heldSince);
    // Round-robin, one chunk a drive a round, each drive's in order; a handler's throw must not
    // stop the others (surfaced as an unhandled rejection).
    while (this.#waiting.size > 0) {
      for (const [reader, waiting] of this.#waiting) {
        const chunk = waiting.chunks.shift() as Uint8Array;
        waiting.bytes -= chunk.length;
        if (waiting.chunks.length === 0) {
          this.#waiting.delete(reader);
          if (waiting.paused) reader.setPaused(false);
        }
        try {
          reader.handle(chunk);
        } catch (err) {
          void Promise.reject(err);
        }
      }
    }
  };
}

/** The one pacer every drive's control client in this process shares, on the real loop. */
export const systemReadPacer = new ReadPacer({ now: systemClock.now, defer: (fn) => void setImmediate(fn), after: systemClock.after });
