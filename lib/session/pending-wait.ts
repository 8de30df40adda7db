/**
 * One wait in flight (the wait engine, wait.ts, plans it): its one-shot timers, its listeners
 * (the drive's activity and decoded text, the caller's abort signal), its looks at the screen
 * once it settles, and the first outcome that ends it (idle, text, exit, timeout, or an abort).
 * Nothing polls: every timer is armed by an event or by the wait's own deadline, and all leave
 * with the wait.
 */
import type { TimerHandle } from '../common/clock.js';
import { TmuxDriveError } from '../common/errors.js';
import { SCREEN_SHOWS_WORK } from '../perceive/classify-screen.js';
import type { SessionStatus } from '../perceive/status.js';
import type { RowBreak } from '../emulator/mirror.js';
import type { TextWatch } from '../perceive/text-watch.js';
import type { DriveContext } from './drive-signals.js';

/** How a wait ended. */
export type WaitOutcome = 'idle' | 'text' | 'exit' | 'timeout';

/** A waited-for text is looked for on the screen once it has been quiet this long. */
const SCREEN_SETTLE_MS = 30;

/** The visible rows for matching, with how each follows the one above. */
export type MatchRows = string[] & { readonly rowBreaks: readonly RowBreak[] };

/** What a wait reads of the screen. */
interface WaitScreen {
  readonly rows: () => MatchRows;
  readonly echoRows: (rows: MatchRows) => ReadonlySet<number>;
}

export interface WaitPlan {
  readonly timeoutMs: number;
  readonly idleMs: number | undefined;
  readonly watch: TextWatch | undefined;
  /** Output handled before the wait began that the watch reads first (the last send's, InputGate.outputOfSend). */
  readonly seenBefore?: readonly Uint8Array[] | undefined;
  /** submit's own wait for its echo: the echo rows count. */
  readonly echoAllowed: boolean;
  /** The screen when input was last sent: a text already there before is not new. */
  readonly baseline: readonly string[];
  readonly quietOnly: boolean;
  readonly signal?: AbortSignal;
}

/** One wait in flight: its timers, its listeners, and the first outcome that ends it. */
export class PendingWait {
  private done = false;
  /** Pending timers only: a fired one leaves the set, so a long wait holds a handful, not thousands. */
  private readonly timers = new Set<TimerHandle>();
  /** The screen is examined when it settles (SCREEN_SETTLE_MS of quiet), not on every chunk. */
  private settleArmed = false;
  /** Quiet for idleMs came while the screen showed the program busy: the next activity re-arms. */
  private busyOnQuiet = false;
  private readonly start: number;

  constructor(
    private readonly ctx: DriveContext,
    private readonly plan: WaitPlan,
    private readonly screen: WaitScreen,
    private readonly status: () => SessionStatus,
    /** With how it ended and when it began (the caller builds what it reads of the end). */
    private readonly resolve: (outcome: WaitOutcome, start: number) => void,
    private readonly reject: (err: Error) => void,
  ) {
    this.start = ctx.clock.now();
  }

  begin(): void {
    const { signal } = this.plan;
    if (signal?.aborted) return this.onAbort();
    signal?.addEventListener('abort', this.onAbort, { once: true });
    // Output is decoded only while a text wait listens.
    if (this.plan.watch) this.ctx.signals.textListeners.add(this.onText);
    this.ctx.signals.activityListeners.add(this.onActivity);
    this.arm(this.plan.timeoutMs, () => this.finish('timeout'));
    // Idle counts from the wait's start too: input sent just before may not have been echoed yet.
    if (this.plan.idleMs !== undefined) this.whenQuiet(this.plan.idleMs, this.start, this.onQuiet);
    if (this.readSeenBefore() || this.onScreen()) return this.finish('text');
    this.onActivity();
  }

  /** The output handled before the wait began, through the watch: whether the text was in it. */
  private readSeenBefore(): boolean {
    const { watch, seenBefore } = this.plan;
    if (!watch || !seenBefore) return false;
    return this.ctx.signals.outputText.replay(seenBefore).some((text) => text !== '' && watch.push(text));
  }

  /**
   * Quiet for idleMs. Settled is status()'s notion: a quiet screen that shows the program busy (a
   * working or queued marker, a TUI still loading) is not idle — typing now would land in a
   * loading or queued screen. The wait goes on until the screen or the published state changes.
   */
  private readonly onQuiet = (): void => {
    if (this.onScreen()) return this.finish('text');
    const st = this.status();
    if (this.plan.quietOnly || st.state !== 'working' || !SCREEN_SHOWS_WORK.has(st.reason)) return this.finish('idle');
    this.busyOnQuiet = true;
  };

  private readonly onActivity = (): void => {
    if (this.done) return;
    if (this.busyOnQuiet && this.plan.idleMs !== undefined) {
      // The screen or the state moved: settled is judged afresh after another quiet window.
      this.busyOnQuiet = false;
      this.whenQuiet(this.plan.idleMs, 0, this.onQuiet);
    }
    if (this.ctx.signals.phase !== 'live') {
      // Text first: a program that prints what we wait for and exits at once did print it,
      // and its last bytes may still be on their way into the grid.
      void this.ctx.mirror.whenParsed().then(
        () => this.finish(this.onScreen() ? 'text' : 'exit'),
        () => this.finish('exit'),
      );
      return;
    }
    this.armSettle();
  };

  private readonly onText = (text: string): void => {
    if (!this.done && this.plan.watch?.push(text)) this.finish('text');
  };

  private readonly onAbort = (): void => {
    if (this.done) return;
    this.done = true;
    this.cleanup();
    this.reject(new TmuxDriveError('ABORTED', 'the wait was aborted', { elapsedMs: Math.round(this.ctx.clock.now() - this.start) }));
  };

  private finish(outcome: WaitOutcome): void {
    if (this.done) return;
    this.done = true;
    this.cleanup();
    this.resolve(outcome, this.start);
  }

  private cleanup(): void {
    for (const t of this.timers) t.cancel();
    this.ctx.signals.textListeners.delete(this.onText);
    this.ctx.signals.activityListeners.delete(this.onActivity);
    this.plan.signal?.removeEventListener('abort', this.onAbort);
  }

  private arm(ms: number, fn: () => void): void {
    const handle = this.ctx.clock.after(ms, () => {
      this.timers.delete(handle);
      fn();
    });
    this.timers.add(handle);
  }

  private onScreen(): boolean {
    const { watch, baseline, echoAllowed } = this.plan;
    if (!watch) return false;
    const rows = this.screen.rows();
    return watch.onScreen(baseline, rows, echoAllowed ? NO_ROWS : this.screen.echoRows(rows));
  }

  /**
   * Runs `then` once there has been no output and no screen change for `ms`, counted from `since`
   * at the earliest (one timer, re-armed only when it fires early: no churn per chunk). With
   * `unhurried`, bytes still queued for the mirror are left to their batch (parsed within the
   * queue's own bound) and the timer looks again `ms` later instead of hurrying their parse.
   */
  private whenQuiet(ms: number, since: number, then: () => void, unhurried = false): void {
    const { clock, signals, mirror } = this.ctx;
    const quietFor = (): number => clock.now() - Math.max(signals.quietSince, since);
    const fire = (): void => {
      if (this.done) return;
      // libuv timers may fire up to a millisecond early: that is quiet enough.
      const left = ms - quietFor();
      if (left > 1) return this.arm(Math.ceil(left), fire);
      if (unhurried && mirror.backlogBytes > 0) return this.arm(ms, fire);
      // Everything written must be parsed before the screen is called settled.
      void mirror.whenParsed().then(() => {
        if (this.done) return;
        if (ms - quietFor() > 1) this.arm(Math.ceil(ms - quietFor()), fire);
        else then();
      });
    };
    this.arm(Math.ceil(Math.max(1, ms - quietFor())), fire);
  }

  /**
   * The screen is looked at once it has been quiet SCREEN_SETTLE_MS. Bytes still queued for the
   * mirror (a flood gathering into a batch, or a loop behind) are not hurried: the screen is looked
   * at again SCREEN_SETTLE_MS later, until their batch is parsed (whatever it changed: a batch of
   * titles or modes must not leave a screen change before it unread). Hurrying them ended a flood's batch at every 30 ms gap of a
   * loaded loop, and each batch's fast-forward parses the rows and history it keeps (8 drives × 2
   * MB at load 8–10, a text wait on each: 56–78 batches and 2.8–4.2 MB of 16.4 parsed; 24–38 and
   * 1.8–2.4 MB without the hurry, as without a wait).
   */
  private armSettle(): void {
    if (!this.plan.watch || this.settleArmed) return;
    this.settleArmed = true;
    this.whenQuiet(
      SCREEN_SETTLE_MS,
      0,
      () => {
        this.settleArmed = false;
        if (this.onScreen()) this.finish('text');
      },
      true,
    );
  }
}

const NO_ROWS: ReadonlySet<number> = new Set();
