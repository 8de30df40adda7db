/**
 * The mirror's own parse of queued output (the path with xterm's private core and a scheduler):
 * the queue (pending-output.ts), the rate window that tells a stream, the gathering batch and its
 * timer, and the slices the scheduler runs, fast-forwarding plain text that would scroll out of
 * the buffer unseen. The Mirror owns one and is reached back only through `QueuedParseHost`.
 */
import type { TimerHandle } from '../common/clock.js';
import type { CreatedTerminal, HeadlessTerminal, XtermInternals } from './headless.js';
import { PendingOutput, type FastForwardStats } from './pending-output.js';
import type { ParseJob, ParseScheduler } from './parse-scheduler.js';

const MiB = 1024 * 1024;
/** Larger chunks are handed to xterm in slices so the cap holds for any chunk size. */
export const SLICE_BYTES = 1 * MiB;
/**
 * Output is streaming when more than this arrives within a STREAM_WINDOW_MS window (or did in the
 * one before): 320 KB/s. It was 64 KB (1.3 MB/s), which one drive's `cat` passes, but twenty
 * drives sharing two cores each get 0.5–1 MB/s: every chunk of theirs took the sync path and
 * every byte was parsed (2.7 s of a 20-drive profile's held-loop stretches), none fast-forwarded.
 */
const STREAM_BYTES = 16 * 1024;
const STREAM_WINDOW_MS = 50;
/**
 * While plain text streams, queued bytes gather until this much is queued, BATCH_DELAY_MS have
 * passed, someone waits for the parse (whenParsed) or reads the grid: the grid lags that much
 * behind a flood nobody reads at that speed. A fast-forward skips all of a batch but the last `rows + scrollback` lines
 * and the screen (~83 KB of 76-character lines at 120x40, 1000 lines of scrollback): the larger
 * the batch, the more of it is skipped. 250 ms: a stream of 0.5 MB/s gathers ~125 KB (100 ms
 * gathered 50 KB, less than what is always kept, so nothing was skipped).
 */
const BATCH_BYTES = 1 * MiB;
const BATCH_DELAY_MS = 250;

/** The mirror's side, as the parse needs it. */
export interface QueuedParseHost {
  /** The mirror's terminal now (a rebuild or reset replaces it). */
  terminal(): CreatedTerminal;
  isDisposed(): boolean;
  /** Queued bytes reached the grid: the mirror's bookkeeping and listeners. */
  parsed(): void;
}

export interface QueuedParseOptions {
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  readonly scheduler: ParseScheduler | undefined;
  readonly fastForward: boolean;
}

export class QueuedParse {
  readonly #host: QueuedParseHost;
  readonly #scrollback: number;
  readonly #fastForward: boolean;
  readonly #scheduler: ParseScheduler | undefined;
  readonly #pending: PendingOutput;
  readonly #job: ParseJob = { runSlice: (max) => this.#runSlice(max) };
  #recentBytes = 0;
  #recentSince = 0;
  /** The previous window streamed. */
  #wasStreaming = false;
  #batchTimer: TimerHandle | undefined;
  /** The gathering batch's time is up (or it is big enough): parse it. */
  #batchDue = false;
  /** In #parsePending (its listeners included): a read there sees the grid as parsed so far. */
  #parsing = false;
  /** Bumped by clear: a slice whose queue was dropped under it stops there. */
  #generation = 0;

  constructor(host: QueuedParseHost, options: QueuedParseOptions) {
    this.#host = host;
    this.#scrollback = options.scrollback;
    this.#fastForward = options.fastForward;
    this.#scheduler = options.scheduler;
    this.#pending = new PendingOutput(options.cols, options.rows, options.scrollback);
  }

  /** A scheduler was given: queued bytes are parsed here (else xterm's own write queue does it). */
  get scheduled(): boolean {
    return this.#scheduler !== undefined;
  }

  get idle(): boolean {
    return this.#pending.idle;
  }

  /** Bytes queued and not yet parsed (or skipped). */
  get length(): number {
    return this.#pending.length;
  }

  get writtenOffset(): number {
    return this.#pending.writtenOffset;
  }

  get stats(): Readonly<FastForwardStats> {
    return this.#pending.stats;
  }

  doneUpTo(offset: number): boolean {
    return this.#pending.doneUpTo(offset);
  }

  /** Bytes are about to be parsed past the queue (the sync path): a plain run in it ends. */
  interrupt(): void {
    this.#pending.interrupt();
  }

  /** Counts bytes in a sliding window: true while output streams. */
  noteRate(bytes: number): boolean {
    if (!this.#scheduler) return false;
    const now = this.#scheduler.now();
    if (now - this.#recentSince > STREAM_WINDOW_MS) {
      this.#wasStreaming = now - this.#recentSince <= 2 * STREAM_WINDOW_MS && this.#recentBytes > STREAM_BYTES;
      this.#recentSince = now;
      this.#recentBytes = 0;
    }
    this.#recentBytes += bytes;
    return this.#wasStreaming || this.#recentBytes > STREAM_BYTES;
  }

  /** Queues bytes; `schedule` then decides when they are parsed. */
  append(data: Uint8Array): void {
    this.#pending.append(data);
  }

  /** After an append: parse soon, or let a plain-text stream gather into a batch. */
  schedule(streaming: boolean): void {
    const scheduler = this.#scheduler;
    if (!scheduler) return;
    // Only a plain-text flood is worth gathering: anything else (a TUI's repaints, coloured output)
    // cannot be fast-forwarded and is parsed at once, as before.
    if (!streaming || !this.#pending.inPlainRun || this.#pending.length >= BATCH_BYTES || !this.#fastForward) this.#batchDue = true;
    if (this.#batchDue) scheduler.request(this.#job);
    else this.#armBatchTimer(scheduler);
  }

  /** Someone needs the grid now: the gathering batch is parsed at once. */
  hurry(): void {
    if (!this.#pending.idle && this.#scheduler && !this.#batchDue) {
      this.#batchDue = true;
      this.#scheduler.request(this.#job);
    }
  }

  /** A resize in stream order: `applied` when the terminal is resized now, else queued after the bytes. */
  resize(cols: number, rows: number, applied: boolean): void {
    this.#pending.resize(cols, rows, applied);
  }

  /** Parses up to `max` queued bytes now (fast-forwarding where allowed), then tells the mirror. */
  parse(max: number): void {
    const { term, internals } = this.#host.terminal();
    if (!internals || this.#pending.idle || this.#parsing) return;
    this.#parsing = true;
    try {
      this.#parseSome(term, internals, max);
    } finally {
      this.#parsing = false;
    }
  }

  /** In a parse (its listeners included). */
  get parsing(): boolean {
    return this.#parsing;
  }

  /** Drops everything queued (superseded) for a terminal of `cols × rows`. */
  clear(cols: number, rows: number): void {
    this.#generation++;
    this.#pending.clear(cols, rows);
    this.#scheduler?.cancel(this.#job);
    this.#batchTimer?.cancel();
    this.#batchTimer = undefined;
    this.#batchDue = false;
  }

  #armBatchTimer(scheduler: ParseScheduler): void {
    if (this.#batchTimer !== undefined) return;
    this.#batchTimer = scheduler.after(BATCH_DELAY_MS, () => {
      this.#batchTimer = undefined;
      this.#batchDue = true;
      scheduler.request(this.#job);
    });
  }

  /** A scheduler turn: parse a slice of the queued bytes if they are due; true when more is due now. */
  #runSlice(max: number): boolean {
    if (this.#host.isDisposed()) return false;
    if (this.#pending.idle) {
      this.#batchDue = false;
      return false;
    }
    if (!this.#batchDue) {
      if (this.#scheduler) this.#armBatchTimer(this.#scheduler);
      return false;
    }
    const generation = this.#generation;
    this.parse(max);
    if (generation !== this.#generation || this.#host.isDisposed()) return false;
    return !this.#pending.idle;
  }

  #parseSome(term: HeadlessTerminal, internals: XtermInternals, max: number): void {
    const bufferLines = (rows: number): number => rows + this.#scrollback;
    const safe = (cols: number, rows: number): boolean => this.#fastForward && internals.fastForwardSafe(cols, rows, bufferLines(rows));
    let budget = max;
    while (budget > 0 && !this.#pending.idle) {
      const size = this.#pending.takeResize();
      if (size) {
        term.resize(size.cols, size.rows);
        continue;
      }
      this.#pending.fastForward(safe);
      const chunk = this.#pending.peek(Math.min(budget, SLICE_BYTES));
      if (chunk.length === 0) continue;
      internals.writeSync(chunk);
      this.#pending.consume(chunk.length);
      budget -= chunk.length;
    }
    if (this.#pending.idle) this.#batchDue = false;
    this.#host.parsed();
  }
}
