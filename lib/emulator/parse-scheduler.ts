/**
 * Parses the mirrors' queued output in bounded slices, round-robin across mirrors, one turn per
 * event-loop iteration (the port's `defer` is setImmediate: the loop polls I/O between turns). One
 * drive's burst no longer holds the loop for a whole 1 MB chunk (xterm's own write queue parses a
 * chunk at once, and runs every expired timer's 12 ms batch back to back), so another drive's
 * keystroke echo, a command reply or a caller's call gets in within about one turn.
 *
 * Nothing runs while no mirror has work: a turn is only deferred by a mirror asking for one. The
 * layer has no timers of its own (the fence): the composition root passes the port
 * (backends/process/system-parse-scheduler.ts), one scheduler shared by every mirror.
 */
import type { TimerHandle } from '../common/clock.js';

/** A mirror's side: parse at most `maxBytes`; true when more is ready now. */
export interface ParseJob {
  runSlice(maxBytes: number): boolean;
}

export interface ParseScheduler {
  /** Asks for a slice soon (idempotent). */
  request(job: ParseJob): void;
  cancel(job: ParseJob): void;
  /** Milliseconds, monotonic. */
  now(): number;
  /** A real timer (not a test's fake clock): a mirror's gathering batch must end. */
  after(ms: number, fn: () => void): TimerHandle;
}

export interface SchedulerPort {
  /** Runs `fn` after pending I/O has been polled (setImmediate). */
  defer(fn: () => void): void;
  now(): number;
  after(ms: number, fn: () => void): TimerHandle;
}

/** Bytes one mirror parses before the next mirror's turn (~1 ms of plain text here). */
const SLICE_BYTES = 64 * 1024;
/** Time spent parsing before yielding to I/O. */
const TURN_MS = 4;

export function createParseScheduler(port: SchedulerPort): ParseScheduler {
  const ready = new Set<ParseJob>();
  let deferred = false;
  const defer = (): void => {
    if (deferred) return;
    deferred = true;
    port.defer(turn);
  };
  function turn(): void {
    deferred = false;
    const started = port.now();
    while (ready.size > 0 && port.now() - started < TURN_MS) {
      for (const job of [...ready]) {
        ready.delete(job);
        let more = false;
        try {
          more = job.runSlice(SLICE_BYTES);
        } catch (err) {
          // One mirror's failure must not stop the others' parsing: surfaced as an unhandled rejection.
          void Promise.reject(err);
        }
        if (more) ready.add(job);
        if (port.now() - started >= TURN_MS) break;
      }
    }
    if (ready.size > 0) defer();
  }
  return {
    request(job) {
      ready.add(job);
      defer();
    },
    cancel(job) {
      ready.delete(job);
    },
    now: () => port.now(),
    after: (ms, fn) => port.after(ms, fn),
  };
}
