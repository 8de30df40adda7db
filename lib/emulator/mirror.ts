/**
 * A pane's mirror: the pane's raw bytes parsed by @xterm/headless into a grid that equals tmux's
 * own (invariant 6). Bytes in (Uint8Array only: UTF-8 is split across %output lines), snapshots,
 * cells and digests out, with a bounded write queue the owner uses to pause the tmux pipe.
 * This file is the write side (bytes, resize, reset, rebuild, backpressure, waiters); the reads
 * (snapshots, rows, cells, digest, cursor, modes) are mirror-view.ts, the base class.
 *
 * Latency: xterm's `write` parses on a setTimeout (≈1.1 ms p50 after the call), more than tmux's
 * whole echo round trip. When nothing is queued, a small chunk is parsed synchronously through
 * the core instead (≈µs); everything else is queued, and the order of bytes is never changed:
 * the sync path is only taken while the queue and xterm's own write buffer are empty. A run of
 * printable ASCII on that path (a keystroke's echo) skips even the parse: it goes straight into
 * the tmux screen port's print when the parser is in its ground state (XtermInternals.printDirect).
 * docs/emulator.md has the measurements.
 *
 * Throughput: queued bytes are parsed by the mirror itself (the core's sync parse, queued-parse.ts),
 * in bounded slices shared fairly between mirrors (parse-scheduler.ts). While output streams, they
 * are let to gather for a moment, and a long plain-text run in them is fast-forwarded: the part that
 * would scroll out of the buffer anyway is never parsed (plain-runs.ts says why that is exact).
 * Without xterm's private core, xterm's own write queue is used, without either.
 */
import type { Disposable } from '../common/disposable.js';
import { ClosedError } from '../common/errors.js';
import { readCell, readVisibleCells, type CellGrid } from './cell-grid.js';
import { createTerminal, type CreatedTerminal, type EmulatorLog, type ParserState } from './headless.js';
import type { PaneCapture } from '../control/pane-capture.js';
import { rebuildInto } from './rebuild.js';
import { TmuxInputFilter } from './input/tmux-input-filter.js';
import { rateLimitedLog, type IncidentSink } from './rate-limited-log.js';
import { takeSnapshot, type ScreenSnapshot } from './screen-snapshot.js';
import type { FastForwardStats } from './pending-output.js';
import type { ParseScheduler } from './parse-scheduler.js';
import { QueuedParse, SLICE_BYTES } from './queued-parse.js';
import { XtermWriteQueue } from './xterm-write-queue.js';
import { emit } from './emit.js';
import { markCursorRow, type RowMark } from './row-mark.js';
import { alternateOf, cursorOf, MirrorView } from './mirror-view.js';

export type { RowBreak, ScreenSnapshot, SnapshotFormat, SnapshotOptions, VisibleRows } from './screen-snapshot.js';
export type { RowMark } from './row-mark.js';

export interface MirrorOptions {
  readonly cols: number;
  readonly rows: number;
  /** Lines kept above the screen (tmux's history-limit of the pane). */
  readonly scrollback: number;
  /** Largest chunk parsed synchronously while idle; 0 disables the sync path. */
  readonly syncWriteMaxBytes?: number;
  /**
   * Something the owner should record: the emulator's own log lines (`emulator_log`, counted and
   * reported at the 1st, 10th, 100th… occurrence of each message, so a flood costs a handful).
   */
  readonly onIncident?: IncidentSink;
  /**
   * Where queued bytes are parsed (the process's shared scheduler: fair slices across mirrors,
   * batches while output streams, fast-forward). Without it, xterm's own write queue parses them.
   */
  readonly scheduler?: ParseScheduler;
  /** Skip plain text that would scroll out of the buffer anyway (default true; false: parse every byte). */
  readonly fastForward?: boolean;
}

const MiB = 1024 * 1024;
/** Above this backlog the owner should stop reading the pane (needsDrain turns true). */
const HIGH_WATER_BYTES = 8 * MiB;
/** needsDrain turns false, and onDrain fires, once the backlog is back under this. */
const LOW_WATER_BYTES = 2 * MiB;
/**
 * A keystroke echo, a prompt or a status-line redraw fits; a full-screen TUI repaint (5–20 KB)
 * usually does not and takes the queued path, where xterm parses it in ≤12 ms slices.
 * 4 KB parse in ~0.1 ms here, 16 KB in ~0.4 ms (docs/emulator.md).
 */
const DEFAULT_SYNC_WRITE_MAX_BYTES = 4096;

export class Mirror extends MirrorView {
  readonly #scrollback: number;
  readonly #syncMax: number;
  /** tmux's own parser in front of the emulator: only what tmux acts on reaches xterm. */
  readonly #filter = new TmuxInputFilter();
  readonly #log: EmulatorLog;
  #terminal: CreatedTerminal;
  /**
   * The terminal is still as createTerminal made it (nothing written, resized or marked): a rebuild
   * of its size writes into it instead of making another (a takeover rebuilds every drive's fresh
   * mirror at once, and a terminal costs ≈ 4 ms and its garbage).
   */
  #pristine = true;
  #seq = 0;
  /** xterm's own write queue (without a scheduler or the private core), in tickets. */
  readonly #xterm: XtermWriteQueue = new XtermWriteQueue({ terminal: () => this.#terminal, parsed: () => this.#parsed() });
  #waiters: { ticket: number; offset: number; resolve: () => void }[] = [];
  #draining = false;
  #disposed = false;
  readonly #changeListeners = new Set<(seq: number) => void>();
  readonly #drainListeners = new Set<() => void>();
  /** Bytes queued for the mirror's own parse (the path with xterm's private core). */
  readonly #queue: QueuedParse;

  constructor(options: MirrorOptions) {
    super();
    this.#scrollback = options.scrollback;
    this.#syncMax = options.syncWriteMaxBytes ?? DEFAULT_SYNC_WRITE_MAX_BYTES;
    this.#log = rateLimitedLog(options.onIncident);
    this.#terminal = createTerminal(options.cols, options.rows, options.scrollback, this.#log);
    const host = { terminal: () => this.#terminal, isDisposed: () => this.#disposed, parsed: () => this.#parsed() };
    const { cols, rows, scrollback, scheduler } = options;
    this.#queue = new QueuedParse(host, { cols, rows, scrollback, scheduler, fastForward: options.fastForward ?? true });
  }

  get cols(): number {
    return this.#terminal.term.cols;
  }

  get rows(): number {
    return this.#terminal.term.rows;
  }

  /** Parse counter: increases every time bytes reach the grid (or the grid is resized or replaced). */
  get seq(): number {
    return this.#seq;
  }

  /** True when a pane's bytes can be parsed synchronously (xterm's private core was found). */
  get hasSyncPath(): boolean {
    return this.#terminal.internals !== null && this.#syncMax > 0;
  }

  /** Bytes written but not yet in the grid. */
  get backlogBytes(): number {
    return this.#xterm.bytes + this.#queue.length;
  }

  /** What fast-forwarding skipped so far (bytes never parsed because they scrolled out unseen). */
  get fastForwardStats(): Readonly<FastForwardStats> {
    return this.#queue.stats;
  }

  /** From the backlog passing the high-water mark until it falls under the low-water mark. */
  get needsDrain(): boolean {
    return this.#draining;
  }

  /**
   * The pane's parser is inside a string sequence (OSC, DCS, APC, PM, SOS, `ESC k`). tmux 3.3a gives
   * up on one after 5 s (input_timer_callback: back to the ground state, pen reset), a time the
   * mirror cannot see: an owner that sees this stay true that long resyncs from tmux.
   */
  get parserInString(): boolean {
    return this.#filter.inString;
  }

  /**
   * Pane bytes, in pane order. A queued chunk is referenced (not copied) until parsed: do not
   * reuse its memory. Ignored after dispose (a late %output during shutdown is not an error).
   */
  write(pane: Uint8Array): void {
    if (this.#disposed || pane.length === 0) return;
    this.#pristine = false;
    // Valid until the next push (it may be `pane` itself): parsed now, or copied into the queue.
    const data = this.#filter.push(pane);
    if (data.length === 0) return;
    const { internals } = this.#terminal;
    if (!internals || !this.#queue.scheduled) return this.#writeToXterm(data, internals !== null);
    const streaming = this.#queue.noteRate(data.length);
    if (!streaming && data.length <= this.#syncMax && this.#queue.idle && this.#xterm.settled && internals.writeBufferEmpty()) {
      this.#queue.interrupt();
      // A keystroke's echo is printed without the parse when that is exactly the same (headless.ts).
      if (!internals.printDirect(data)) internals.writeSync(data);
      this.#parsed();
      return;
    }
    // The filter returns the chunk itself only when it is all plain text (its scan is not repeated).
    this.#queue.append(data, data === pane);
    if (!this.#draining && this.backlogBytes > HIGH_WATER_BYTES) this.#draining = true;
    this.#queue.schedule(streaming);
  }

  /** xterm's own write queue (no scheduler or no private core: no fast-forward), after the sync path. */
  #writeToXterm(data: Uint8Array, canSync: boolean): void {
    const { internals } = this.#terminal;
    if (canSync && internals && data.length <= this.#syncMax && this.#xterm.settled && internals.writeBufferEmpty()) {
      if (!internals.printDirect(data)) internals.writeSync(data);
      this.#parsed();
      return;
    }
    const owned = data.slice();
    for (let at = 0; at < owned.length; at += SLICE_BYTES) {
      this.#xterm.write(owned.subarray(at, at + SLICE_BYTES));
    }
    if (!this.#draining && this.backlogBytes > HIGH_WATER_BYTES) this.#draining = true;
  }

  /** Fires after bytes reached the grid, with the new seq (settle detection listens here). */
  onChange(listener: (seq: number) => void): Disposable {
    this.#changeListeners.add(listener);
    return { dispose: () => void this.#changeListeners.delete(listener) };
  }

  /** Fires when the backlog falls under the low-water mark after needsDrain was true. */
  onDrain(listener: () => void): Disposable {
    this.#drainListeners.add(listener);
    return { dispose: () => void this.#drainListeners.delete(listener) };
  }

  /** Resolves once everything written so far is in the grid (or superseded by a rebuild/reset). */
  whenParsed(): Promise<void> {
    if (this.#disposed || (this.#xterm.settled && this.#queue.idle)) return Promise.resolve();
    this.#queue.hurry();
    return new Promise((resolve) => this.#waiters.push({ ticket: this.#xterm.lastTicket, offset: this.#queue.writtenOffset, resolve }));
  }

  /** Applies in stream order: after the bytes written before it, before those written after. */
  resize(cols: number, rows: number): void {
    if (this.#disposed) return;
    this.#pristine = false;
    const { internals } = this.#terminal;
    if (internals && this.#queue.scheduled && !this.#queue.idle) {
      this.#queue.resize(cols, rows, false);
      return;
    }
    if (this.#xterm.settled && (internals?.writeBufferEmpty() ?? true)) {
      this.#queue.resize(cols, rows, true);
      this.#terminal.term.resize(cols, rows);
      this.#parsed();
      return;
    }
    this.#xterm.resize(cols, rows);
  }

  /** A blank terminal of the current size; bytes still queued are dropped. */
  reset(): void {
    if (this.#disposed) return;
    this.#filter.reset();
    this.#replaceTerminal(this.cols, this.rows);
    this.#parsed();
  }

  /**
   * Replaces the grid with a tmux snapshot (reference §5). Bytes written before this call are
   * superseded (tmux's capture already contains them); bytes written after it continue the
   * snapshot. Atomic: parsed before it returns.
   *
   * With `capture.continuous` the bytes still queued are parsed first (into the retiring
   * terminal), and the parser state the snapshot cannot hold (SGR pen, charsets, DECSC: see
   * `ParserState`) carries over into the new one. Otherwise queued bytes are dropped unparsed and
   * the new terminal starts with a default pen.
   */
  rebuild(capture: PaneCapture): void {
    if (this.#disposed) return;
    const carried = capture.continuous === true ? this.#settledParserState() : null;
    this.#replaceTerminal(capture.cols, capture.rows);
    const { term, internals } = this.#terminal;
    // The pending bytes are tmux's parser input since its last ground state: through a fresh
    // filter they leave it in tmux's parser state, so the next %output continues them.
    this.#filter.reset();
    const pending = this.#filter.push(capture.pending).slice();
    this.#pristine = false;
    rebuildInto(
      {
        beforePending: () => {
          if (carried) internals?.parserState?.load(carried);
        },
        write: (bytes) => {
          if (internals) internals.writeSync(bytes);
          else this.#xterm.write(bytes);
        },
        cellAt: (x, y) => {
          if (!internals) return null;
          const cell = term.buffer.active.getLine(term.buffer.active.baseY + y)?.getCell(x);
          return cell ? readCell(cell) : null;
        },
      },
      { ...capture, pending },
    );
    this.#parsed();
  }

  /**
   * The screen as parsed so far, bytes still queued left queued: the text snapshot and the cells a
   * verdict reads, for a verdict those bytes cannot change (output is flowing, whatever the screen
   * shows). Every other read parses them first: forcing that parse while a stream gathers into a
   * batch parsed the lines a fast-forward keeps once more per drive and stream (docs/emulator.md).
   */
  screenAsParsed(): { readonly snapshot: ScreenSnapshot; readonly cells: CellGrid['cells'] } {
    if (this.#disposed) throw new ClosedError('SESSION_CLOSED', 'the mirror is disposed');
    const terminal = this.#terminal;
    const snapshot = takeSnapshot(terminal, { format: 'text' }, cursorOf(terminal), alternateOf(terminal));
    return { snapshot, cells: readVisibleCells(terminal.term) };
  }

  /**
   * Re-reads now the rows changed since the last `screenRows()`, so that the next call finds them
   * read: the input baseline's rows, read after an echo's event instead of before the next echo's
   * parse (that read is on the next echo's way to the grid). Only when the bytes written are parsed
   * and the terminal tracks changed rows (then true, and `screenRows()` reads nothing until the grid
   * changes); otherwise nothing (the next call reads what is due).
   */
  keepRowsCurrent(): boolean {
    if (this.#disposed || !this.#terminal.internals?.changedRows || !this.#queue.idle || !this.#xterm.settled) return false;
    this.keepRows(this.#terminal);
    return true;
  }

  /**
   * A mark on the row the cursor is on now, which follows that row as the screen scrolls
   * (row-mark.ts): where input was typed, so a wait can tell its echo by position.
   */
  markCursorRow(): RowMark {
    const terminal = this.open();
    this.#pristine = false;
    // open() parses what is queued first, so the row is read where the bytes written so far left it.
    return markCursorRow(terminal, () => !this.#disposed && this.open() === terminal);
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#retire(this.cols, this.rows);
    this.#terminal.term.dispose();
    this.#changeListeners.clear();
    this.#drainListeners.clear();
  }

  /** Parses everything queued, then reads the parser state; null when that cannot be done now. */
  #settledParserState(): ParserState | null {
    const { internals } = this.#terminal;
    if (!internals?.parserState || this.#xterm.inCallback) return null;
    internals.flush();
    this.#queue.parse(Number.POSITIVE_INFINITY);
    if (!this.#xterm.settled || !internals.writeBufferEmpty() || !this.#queue.idle) return null;
    return internals.parserState.save();
  }

  /** The terminal for a read: bytes still gathering in the queue are parsed first, so a read sees everything written. */
  protected open(): CreatedTerminal {
    if (this.#disposed) throw new ClosedError('SESSION_CLOSED', 'the mirror is disposed');
    if (!this.#queue.idle && !this.#queue.parsing) this.#queue.parse(Number.POSITIVE_INFINITY);
    return this.#terminal;
  }

  /** Bookkeeping after the grid changed; listeners run last, on a consistent state. */
  #parsed(): void {
    this.#seq++;
    const seq = this.#seq;
    if (this.#waiters.length > 0) {
      const done = (w: { ticket: number; offset: number }): boolean => this.#xterm.doneUpTo(w.ticket) && this.#queue.doneUpTo(w.offset);
      const ready = this.#waiters.filter(done);
      this.#waiters = this.#waiters.filter((w) => !done(w));
      for (const w of ready) w.resolve();
    }
    if (this.#draining && this.backlogBytes < LOW_WATER_BYTES) {
      this.#draining = false;
      emit(this.#drainListeners, undefined);
    }
    emit(this.#changeListeners, seq);
  }

  /** Drops everything queued: it is superseded. Resolves the waiters, whose bytes are moot. */
  #retire(cols: number, rows: number): void {
    this.#xterm.clear();
    this.#queue.clear(cols, rows);
    this.#terminal.internals?.discardQueued();
    for (const w of this.#waiters.splice(0)) w.resolve();
    if (this.#draining) {
      this.#draining = false;
      emit(this.#drainListeners, undefined);
    }
  }

  #replaceTerminal(cols: number, rows: number): void {
    this.#retire(cols, rows);
    if (this.#pristine && cols === this.#terminal.term.cols && rows === this.#terminal.term.rows) return;
    this.#pristine = true;
    const old = this.#terminal;
    this.#terminal = createTerminal(cols, rows, this.#scrollback, this.#log);
    old.term.dispose();
  }
}
