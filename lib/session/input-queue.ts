/**
 * One drive's input, one caller at a time. Several callers (two clients of a serving host, a
 * client and the MCP server, in-process code) may send to one drive at once; each input is a unit
 * that must reach the program whole: a submit's text, its echo wait and its Enter, a run of keys,
 * a signal, a resize. Units run in the order they were asked for. The queue is bounded: at most
 * `maxWaiting` units wait (more is LIMIT_REACHED), each at most its turn timeout (then INPUT_BUSY),
 * and a waiting unit whose caller aborts (it cancelled, its connection ended, an operator took the
 * drive over) leaves the queue without running. A unit that runs is never interrupted by the queue.
 *
 * Uncontended, a unit starts at once, in the caller's own tick: no timer, no extra allocation
 * beyond one promise continuation that frees the turn. Timers exist only while someone waits.
 */
import { TmuxDriveError } from '../common/errors.js';

export const INPUT_QUEUE_LIMITS = {
  /** Units waiting for their turn on one drive; past this a caller is refused (LIMIT_REACHED). */
  maxWaiting: 256,
  /** How long a unit waits for its turn by default before INPUT_BUSY. */
  turnTimeoutMs: 30_000,
  /** The longest turn timeout a caller may ask for. */
  maxTurnTimeoutMs: 600_000,
} as const;

/** How one input waits for its turn. */
export interface InputTurnOptions {
  /** Aborting it takes a waiting input out of the queue (it is not sent); a sent input is not taken back. */
  readonly signal?: AbortSignal;
  /** How long the input may wait behind other callers' input (ms, default 30 000): then INPUT_BUSY. */
  readonly turnTimeoutMs?: number;
}

interface Waiter {
  readonly start: () => void;
  readonly fail: (err: unknown) => void;
}

export class InputQueue {
  private busy = false;
  private readonly waiting: Waiter[] = [];

  constructor(private readonly driveId: string) {}

  /** Units waiting now (not counting the one running). */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** Runs `unit` when it is this caller's turn; `what` names it in errors (sendText, sendKeys, …). */
  run<T>(what: string, unit: () => Promise<T>, opts: InputTurnOptions = {}): Promise<T> {
    const { signal } = opts;
    if (signal?.aborted) return Promise.reject(aborted(what, signal));
    if (!this.busy) {
      this.busy = true;
      return this.runNow(unit);
    }
    if (this.waiting.length >= INPUT_QUEUE_LIMITS.maxWaiting) {
      return Promise.reject(new TmuxDriveError('LIMIT_REACHED', `drive ${this.driveId}: ${INPUT_QUEUE_LIMITS.maxWaiting} inputs already wait for their turn; ${what} was not sent`, { cap: 'inputQueue.maxWaiting', id: this.driveId }));
    }
    const timeoutMs = turnTimeout(opts.turnTimeoutMs);
    return new Promise<T>((resolve, reject) => {
      const leave = (): void => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = (): void => {
        leave();
        reject(aborted(what, signal as AbortSignal));
      };
      const waiter: Waiter = {
        start: () => {
          leave();
          this.runNow(unit).then(resolve, reject);
        },
        fail: (err) => {
          leave();
          reject(err);
        },
      };
      const timer = setTimeout(() => waiter.fail(new TmuxDriveError('INPUT_BUSY', `drive ${this.driveId}: other callers' input kept it busy for ${timeoutMs} ms; ${what} was not sent`, { id: this.driveId, turnTimeoutMs: timeoutMs })), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private runNow<T>(unit: () => Promise<T>): Promise<T> {
    let running: Promise<T>;
    try {
      running = unit();
    } catch (err) {
      running = Promise.reject(err);
    }
    running.then(this.next, this.next);
    return running;
  }

  /** The running unit ended: the next waiter starts, or the drive's input is free. */
  private readonly next = (): void => {
    const waiter = this.waiting[0];
    if (waiter) waiter.start();
    else this.busy = false;
  };
}

function turnTimeout(ms: number | undefined): number {
  if (ms === undefined) return INPUT_QUEUE_LIMITS.turnTimeoutMs;
  if (!Number.isFinite(ms) || ms < 0) return INPUT_QUEUE_LIMITS.turnTimeoutMs;
  return Math.min(Math.floor(ms), INPUT_QUEUE_LIMITS.maxTurnTimeoutMs);
}

/** The abort's own typed reason when it carries one (an operator hold), else ABORTED. */
function aborted(what: string, signal: AbortSignal): TmuxDriveError {
  const reason: unknown = signal.reason;
  if (reason instanceof TmuxDriveError) return reason;
  return new TmuxDriveError('ABORTED', `${what} was aborted while it waited for its turn; it was not sent`);
}
