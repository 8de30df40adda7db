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
 * Output is streaming when more than this arrives within a STREAM_WINDOW_MS window (320 KB/s), and
 * stays so for STREAM_HOLD_MS after such a window. It was 64 KB (1.3 MB/s), which one drive's
 * `cat` passes, but twenty drives sharing two cores each get 0.5–1 MB/s: every chunk of theirs
 * took the sync path and every byte was parsed (2.7 s of a 20-drive profile's held-loop
 * stretches), none fast-forwarded. The hold: on a loaded loop (held 60–90 ms on average, up to
 * 200+, with 20 drives) a drive's chunks come in bursts with gaps; when only the window just
 * before counted, each gap ended the stream and the next batch, and its first chunks took the
 * sync path (2026-12-02: ~20 batches of ~270 KB per 5 MB drive instead of ~1 MB ones).
 */
const STREAM_BYTES = 16 * 1024;
const STREAM_WINDOW_MS = 50;
const STREAM_HOLD_MS = 250;
/**
 * While plain text streams, queued bytes gather into a batch until this much is queued, the
 * stream stops feeding it (a check every BATCH_CHECK_MS finds nothing appended since the last
 * one), BATCH_MAX_MS have passed, someone waits for the parse (whenParsed) or reads the grid: the
 * grid lags that much behind a flood nobody reads at that speed. A fast-forward skips all of a
 * batch but the last `rows + scrollback` lines and the screen (~83 KB of 76-character lines at
 * 120x40, 1000 lines of scrollback): the larger the batch, the more of it is skipped. Twenty
 * drives on two cores each get ~0.5 MB/s: a batch of a fixed 250 ms held little more than what
 * is always kept, and 1.1–1.5 MB of each 5 MB file was still parsed (2026-12-02 profile). A
 * batch whose stream stopped is parsed within 2 × BATCH_CHECK_MS of its last byte, before the
 * drive's quiet watch (250 ms) reads the screen; a check that found nothing new (the flood ended,
 * or the loop was held and the bytes are still unread) parses: it never waits on bytes it cannot see.
 */
const BATCH_BYTES = 1 * MiB;
const BATCH_CHECK_MS = 100;
const BATCH_MAX_MS = 1000;

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
  /** Until when output counts as streaming (STREAM_HOLD_MS after a window that streamed). */
  #streamingUntil = Number.NEGATIVE_INFINITY;
  #batchTimer: TimerHandle | undefined;
  /** When the gathering batch's timer was first armed. */
  #batchSince = 0;
  /** Bytes appended since the batch's last check: the stream still feeds it. */
  #fedSinceCheck = false;
  /** The gathering batch's time is up (or it is big enough): parse it, up to #dueUpTo. */
  #batchDue = false;
  /**
   * The writtenOffset when the batch fell due: bytes appended after it gather into the next batch
   * (while they stream), not parsed as they come. Otherwise a batch due on a loaded loop, parsed in
   * slices while its drive's output kept coming, stayed due until the queue ran dry, and every
   * ~83 KB beyond the last skip was parsed: 20 skips of a ~270 KB queue per 5 MB drive.
   */
  #dueUpTo = 0;
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
      this.#recentSince = now;
      this.#recentBytes = 0;
    }
    this.#recentBytes += bytes;
    if (this.#recentBytes > STREAM_BYTES) this.#streamingUntil = now + STREAM_HOLD_MS;
    return now < this.#streamingUntil;
  }

  /** Queues bytes (`plain`: the input filter passed them whole as plain text); `schedule` then decides when they are parsed. */
  append(data: Uint8Array, plain: boolean): void {
    this.#pending.append(data, plain);
    this.#fedSinceCheck = true;
  }

  /** After an append: parse soon, or let a plain-text stream gather into a batch. */
  schedule(streaming: boolean): void {
    const scheduler = this.#scheduler;
    if (!scheduler) return;
    // Only a plain-text flood is worth gathering: anything else (a TUI's repaints, coloured output)
    // cannot be fast-forwarded and is parsed at once, as before.
    if (!streaming || !this.#pending.inPlainRun || this.#pending.length >= BATCH_BYTES || !this.#fastForward) this.#due(scheduler);
    // Due or not, later bytes of a stream gather (#runSlice re-arms the timer when the due part is done).
    else this.#armBatchTimer(scheduler);
  }

  /** Someone needs the grid now: everything queued is parsed at once. */
  hurry(): void {
    if (!this.#pending.idle && this.#scheduler) this.#due(this.#scheduler);
  }

  /** Everything queued so far is due for parsing. */
  #due(scheduler: ParseScheduler): void {
    this.#batchDue = true;
    this.#dueUpTo = this.#pending.writtenOffset;
    scheduler.request(this.#job);
  }

  /** A resize in stream order: `applied` when the terminal is resized now, else queued after the bytes. */
  resize(cols: number, rows: number, applied: boolean): void {
    this.#pending.resize(cols, rows, applied);
  }

  /** Parses up to `max` queued bytes now (fast-forwarding where allowed), then tells the mirror. */
  parse(max: number): void {
    this.#parseUpTo(max, Number.POSITIVE_INFINITY);
  }

  #parseUpTo(max: number, until: number): void {
    const { term, internals } = this.#host.terminal();
    if (!internals || this.#pending.idle || this.#parsing) return;
    this.#parsing = true;
    try {
      this.#parseSome(term, internals, max, until);
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
    this.#batchSince = scheduler.now();
    this.#fedSinceCheck = false;
    this.#checkBatchAfter(scheduler, BATCH_CHECK_MS);
  }

  /** The batch is parsed when this timer finds its stream stopped, or at BATCH_MAX_MS (see BATCH_BYTES). */
  #checkBatchAfter(scheduler: ParseScheduler, ms: number): void {
    this.#batchTimer = scheduler.after(ms, () => {
      this.#batchTimer = undefined;
      if (this.#batchDue) return;
      const fed = this.#fedSinceCheck;
      this.#fedSinceCheck = false;
      const age = scheduler.now() - this.#batchSince;
      if (fed && this.#pending.inPlainRun && age + BATCH_CHECK_MS <= BATCH_MAX_MS && this.#pending.length < BATCH_BYTES) {
        this.#checkBatchAfter(scheduler, BATCH_CHECK_MS);
        return;
      }
      this.#due(scheduler);
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
    this.#parseUpTo(max, this.#dueUpTo);
    if (generation !== this.#generation || this.#host.isDisposed()) return false;
    if (this.#pending.idle) return false;
    if (this.#pending.parsedOffset < this.#dueUpTo) return true;
    // The due part is parsed; what streamed in meanwhile is the next batch.
    this.#batchDue = false;
    if (this.#scheduler) this.#armBatchTimer(this.#scheduler);
    return false;
  }

  /** Parses up to `max` bytes, and not past `until` (an absolute offset) but for a fast-forward's skip. */
  #parseSome(term: HeadlessTerminal, internals: XtermInternals, max: number, until: number): void {
    const bufferLines = (rows: number): number => rows + this.#scrollback;
    const safe = (cols: number, rows: number): boolean => this.#fastForward && internals.fastForwardSafe(cols, rows, bufferLines(rows));
    let budget = max;
    while (budget > 0 && !this.#pending.idle) {
      const size = this.#pending.takeResize();
      if (size) {
        term.resize(size.cols, size.rows);
        continue;
      }
      if (this.#pending.parsedOffset >= until) break;
      this.#pending.fastForward(safe);
      const chunk = this.#pending.peek(Math.min(budget, SLICE_BYTES, until - this.#pending.parsedOffset));
      if (chunk.length === 0) continue;
      internals.writeSync(chunk);
      this.#pending.consume(chunk.length);
      budget -= chunk.length;
    }
    if (this.#pending.idle) this.#batchDue = false;
    this.#host.parsed();
  }
}
