/**
 * The wait engine: a wait resolves on the first of idle (no output and no screen change for
 * `forIdleMs`, on a screen that does not show the program busy: status()'s notion of settled), text (in output that arrived after the wait began, in the last send's
 * output handled before it began while that is all the output since the send (its call settles
 * after the keys' first output: InputGate.outputOfSend), or on the screen — never in the
 * echo of what we typed, unless the wait is submit's own echo wait), exit, or timeout. Everything
 * is armed by events (output, screen changes, phase changes) and by one-shot timers: no polling.
 * It also remembers where input was last sent (the screen rows then, the cursor's place followed
 * through scrolling, and the lines typed), which is how a wait tells new text from our own echo:
 * by position: the echo is what shows where it was typed, while it is what was typed.
 * The engine plans each wait (its deadline, idle window, text watch and echo rows); one wait's
 * life in flight (timers, listeners, screen looks) is pending-wait.ts.
 */
import { UsageError } from '../common/errors.js';
import type { SessionStatus } from '../perceive/status.js';
import type { RowBreak, RowMark } from '../emulator/mirror.js';
import { echoedAt, type TextPattern } from '../perceive/text-match.js';
import { TextWatch } from '../perceive/text-watch.js';
import { InputReadAhead, padCursorRow } from './input-read-ahead.js';
import type { DriveContext } from './drive-signals.js';
import { PendingWait, type MatchRows, type WaitOutcome, type WaitPlan } from './pending-wait.js';

export interface WaitOptions {
  /** Resolve once there has been no output and no screen change for this long. */
  readonly forIdleMs?: number;
  /** Resolve once this appears in new output or on the changed screen (never in our own echo). */
  readonly forText?: TextPattern;
  /** Resolve when the program exits. An exit ends every wait. */
  readonly forExit?: boolean;
  /** Default 15 s, at most 600 s. */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

export interface WaitResult {
  readonly outcome: WaitOutcome;
  /**
   * On timeout: is the program still producing — output in the last second that the classifier
   * (`status`) reads as work? A screen that redraws while the program waits for input is not.
   */
  readonly producing: boolean;
  readonly hint: string;
  readonly elapsedMs: number;
  readonly status: SessionStatus;
}

export const DEFAULT_WAIT_TIMEOUT_MS = 15_000;
export const MAX_WAIT_TIMEOUT_MS = 600_000;
/** Without a condition, a wait is for the screen to settle this long. */
const DEFAULT_IDLE_MS = 500;
/** Output this recent means "still producing" when a wait times out. */
const PRODUCING_WINDOW_MS = 1000;

/** Where input was last sent: its echo is there. */
interface InputPlace {
  /** The cursor's row then, followed through scrolling. */
  readonly row: RowMark;
  /** The cursor's column then. */
  readonly x: number;
  /** The typed lines: each echoed on a row (and its wrapped continuation) from `row` on. */
  readonly typed: readonly string[];
}

export class WaitEngine {
  /** The screen rows as they were when we last sent input: rows beyond these are new. */
  private screenAtInput: readonly string[] = [];
  /** Input was marked and its screen rows are not read yet (see takeBaseline). */
  private baselineDue = false;
  /** A baseline was read since the last afterOutput: the screen changed after it (see afterOutput). */
  private rowsReadBeforeChange = false;
  private inputPlace: InputPlace | undefined;
  private readonly ahead = new InputReadAhead();
  /** Text watches of the waits in flight: input sent while they wait has an echo of its own. */
  private readonly watches = new Set<TextWatch>();

  constructor(
    private readonly ctx: DriveContext,
    private readonly status: () => SessionStatus,
    /** The output of the last send while it is all the output since (InputGate.outputOfSend). */
    private readonly outputOfSend: () => readonly Uint8Array[] | undefined = () => undefined,
  ) {}

  /**
   * Input of these typed lines (none for keys) is about to be sent: the screen as it is now is the
   * baseline of later waits, and its echo is where the cursor is (on the screen and in the stream).
   */
  markInput(typed: readonly string[] = []): void {
    this.baselineDue = true;
    const { mirror, signals } = this.ctx;
    const previous = this.inputPlace?.row;
    const ahead = this.ahead.current(mirror);
    if (ahead !== undefined && previous !== undefined && ahead.markedRow === previous) {
      this.inputPlace = { row: previous, x: ahead.x, typed };
    } else {
      const cursor = mirror.cursor;
      // Typing along one row (a key at a time) keeps its mark: a new xterm marker per key costs more
      // than the rest of the input's bookkeeping.
      const row = previous !== undefined && previous.visibleRow() === cursor.y ? previous : mirror.markCursorRow();
      if (previous !== undefined && previous !== row) previous.dispose();
      this.inputPlace = { row, x: cursor.x, typed };
    }
    signals.echoLines = typed.length;
    for (const watch of this.watches) watch.markInput(typed);
  }

  /**
   * Reads the screen rows of the last markInput if that is still due. Reading them (a text
   * snapshot, 0.1–0.5 ms) is kept off the keystroke's way: the sender calls this once the keys are
   * written, while tmux handles them; anything that changes the screen first (output, a resync, a
   * resize) calls it before the change, so the rows are always the screen as it was at input.
   */
  takeBaseline(): void {
    if (!this.baselineDue) return;
    this.baselineDue = false;
    this.rowsReadBeforeChange = true;
    const ahead = this.ahead.current(this.ctx.mirror);
    if (ahead !== undefined) {
      this.screenAtInput = ahead.rows;
      return;
    }
    // The rows alone (no snapshot content, no breaks), and only those changed since the last
    // baseline (typing changes one): this runs on the echo's way to the screen.
    const { mirror } = this.ctx;
    this.screenAtInput = padCursorRow([...mirror.screenRows()], mirror.cursor);
  }

  /**
   * After an output's event: when that output's change came right after a baseline (typing: the
   * echo), the rows it changed are read now, for the next input's baseline, which then reads
   * nothing but the rows changed after this. Now the echo has reached the caller and tmux and the
   * program are done with it; before the next echo's parse, the same read delays that echo.
   */
  afterOutput(): void {
    if (!this.rowsReadBeforeChange) return;
    this.rowsReadBeforeChange = false;
    // The next key's mark and baseline are read now too: typing's next keystroke then reads
    // nothing of the grid, in its write's turn or on its echo's way.
    this.ahead.read(this.ctx.mirror, this.inputPlace?.row);
  }

  /**
   * A wait; `echoAllowed` lets our own typed text match (submit's wait for its echo). Counts no
   * request. `quietOnly`: idle is the screen's quiet alone (the session's own settle and answer
   * confirmation ask whether the screen stopped changing, not whether the program is ready).
   */
  wait(opts: WaitOptions, echoAllowed = false, quietOnly = false): Promise<WaitResult> {
    return this.pending(opts, echoAllowed, quietOnly, (outcome, plan, start) => {
      const now = this.ctx.clock.now();
      const recent = now - this.ctx.signals.lastOutputAt < Math.min(PRODUCING_WINDOW_MS, plan.idleMs ?? PRODUCING_WINDOW_MS);
      const status = this.status();
      // One notion of settled, status()'s: output from a program the classifier reads as waiting for
      // input (htop's refresh, a clock) is a redraw, not work, and the result does not call it working.
      const producing = recent && status.state === 'working';
      return { outcome, producing, hint: hintFor(outcome, producing, recent), elapsedMs: Math.round(now - start), status };
    });
  }

  /**
   * wait() for a caller that reads only how it ended (submit's echo wait, a send's settle): the
   * end-of-wait status, a classification of the whole screen, is not taken.
   */
  waitOutcome(opts: WaitOptions, echoAllowed = false, quietOnly = false): Promise<WaitResult['outcome']> {
    return this.pending(opts, echoAllowed, quietOnly, (outcome) => outcome);
  }

  private pending<R>(opts: WaitOptions, echoAllowed: boolean, quietOnly: boolean, result: (outcome: WaitResult['outcome'], plan: WaitPlan, start: number) => R): Promise<R> {
    const requested = opts.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS;
    if (!Number.isFinite(requested) || requested <= 0) throw new UsageError('BAD_ARGUMENT', 'timeoutMs must be a positive number of milliseconds');
    if (opts.forIdleMs !== undefined && (!Number.isFinite(opts.forIdleMs) || opts.forIdleMs < 0)) throw new UsageError('BAD_ARGUMENT', 'forIdleMs must be a non-negative number');
    if (opts.forText !== undefined && typeof opts.forText !== 'string' && !(opts.forText instanceof RegExp)) throw new UsageError('BAD_ARGUMENT', 'forText must be a string or a RegExp');
    this.takeBaseline();
    // Output of the last send that was handled before this wait began (with its call's settling):
    // read first, from the send on, its echo where it was typed.
    const replay = opts.forText === undefined ? undefined : this.outputOfSend();
    const echo = echoAllowed ? [] : replay !== undefined ? (this.inputPlace?.typed ?? []) : this.echoStillDue();
    const plan: WaitPlan = {
      timeoutMs: Math.min(requested, MAX_WAIT_TIMEOUT_MS),
      idleMs: opts.forIdleMs ?? (opts.forText === undefined && !opts.forExit ? DEFAULT_IDLE_MS : undefined),
      watch: opts.forText === undefined ? undefined : new TextWatch(opts.forText, echo),
      seenBefore: replay !== undefined && replay.length > 0 ? replay : undefined,
      echoAllowed,
      baseline: this.screenAtInput,
      quietOnly,
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
    const { watch } = plan;
    if (watch && !echoAllowed) this.watches.add(watch);
    const screen = { rows: () => this.matchRows(), echoRows: (rows: MatchRows) => this.echoRows(rows, rows.rowBreaks) };
    return new Promise<R>((resolve, reject) => new PendingWait(this.ctx, plan, screen, this.status, (outcome, start) => resolve(result(outcome, plan, start)), reject).begin()).finally(() => {
      if (watch) this.watches.delete(watch);
    });
  }

  /** The typed lines whose echo has not ended in the output yet (counted by its line feeds). */
  private echoStillDue(): string[] {
    const typed = this.inputPlace?.typed ?? [];
    const due = this.ctx.signals.echoLines;
    return due > 0 ? typed.slice(-due) : [];
  }

  /**
   * The visible rows that are the echo of the last input: the cursor's row when it was sent and
   * the rows that continue it (a wrap), one such line per line of the input. None once the mark
   * is lost (the mirror was rebuilt, or the other screen is showing).
   */
  private echoRows(text: readonly string[], rowBreaks: readonly RowBreak[]): Set<number> {
    const rows = new Set<number>();
    const place = this.inputPlace;
    let y = place?.row.visibleRow();
    if (!place || y === undefined) return rows;
    for (let line = 0; line < place.typed.length && y < rowBreaks.length; line++) {
      // Where it was typed, and what was typed: a program that does not echo prints there too.
      if (y >= 0 && !echoedAt(text[y] ?? '', line === 0 ? place.x : 0, place.typed[line] ?? '')) break;
      if (y >= 0) rows.add(y);
      y++;
      // Rows in the history are not matched: only where the line comes back on screen matters.
      while (y < rowBreaks.length && (y < 0 || rowBreaks[y] !== 'line')) {
        if (y >= 0) rows.add(y);
        y++;
      }
    }
    return rows;
  }

  /** Resolves true as soon as the screen's digest differs from `digest`, false after `ms`. */
  changesWithin(digest: string, ms: number): Promise<boolean> {
    const { mirror, signals, clock } = this.ctx;
    return new Promise((resolve) => {
      const check = (): void => {
        if (signals.phase !== 'live' || mirror.digest() !== digest) done(true);
      };
      const timer = clock.after(ms, () => void mirror.whenParsed().then(() => done(mirror.digest() !== digest)));
      const done = (changed: boolean): void => {
        timer.cancel();
        signals.activityListeners.delete(check);
        resolve(changed);
      };
      signals.activityListeners.add(check);
      check();
    });
  }

  /**
   * The visible rows for text matching: right-trimmed, except the cursor row, kept up to the cursor
   * so that a prompt's trailing space ('$ ', '>>> ') is there to match.
   */
  private matchRows(): MatchRows {
    const snap = this.ctx.mirror.snapshot({ format: 'text' });
    return Object.assign(padCursorRow([...snap.lines], snap.cursor), { rowBreaks: snap.rowBreaks });
  }
}

function hintFor(outcome: WaitResult['outcome'], producing: boolean, recentOutput: boolean): string {
  switch (outcome) {
    case 'timeout':
      if (producing) return 'output is still arriving: the program is working; wait again with a larger timeoutMs';
      if (recentOutput) return 'the screen keeps redrawing but the program waits for input (see status): it will not go quiet; act on status() instead of waiting for idle';
      return 'no output recently: inspect status() and read() to see whether it waits for input or is stuck';
    case 'exit':
      return 'the program has exited: read() shows its last screen; status().exit has the code';
    case 'text':
      return 'the text appeared';
    case 'idle':
      return 'the screen settled';
  }
}
