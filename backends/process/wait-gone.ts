/**
 * Kill verification for both backends: a process counts as ended only once /proc (local or the
 * remote's) no longer shows it alive. Bounded by a deadline, with a backoff armed by the clock
 * (no interval timer), and one escalation halfway for what ignored the first signal.
 */
import type { Clock } from '../../lib/common/clock.js';
import { isSameProcessAlive, signalAll, type ProcStat } from './process-tree.js';

/** How the caller sees its processes: local pids, remote pids, or (pid, start time) pairs. */
export interface GoneProbe<P> {
  /** The members of `procs` still alive. */
  alive(procs: readonly P[]): readonly P[] | Promise<readonly P[]>;
  signal(procs: readonly P[], signal: NodeJS.Signals): void | Promise<void>;
}

export interface WaitGoneOptions {
  readonly clock: Clock;
  /** The whole wait; the escalation is sent halfway. */
  readonly timeoutMs: number;
  /** Sent once, halfway, to what is still alive. */
  readonly escalation: NodeJS.Signals;
}

/** First look after 2 ms (a SIGKILLed process is usually reaped by then), then doubling. */
const FIRST_DELAY_MS = 2;
/** Backoff ceiling: a survivor is looked at ten times a second until the deadline. */
const MAX_DELAY_MS = 100;

/** True once every member of `procs` is gone; false when some outlived the deadline. */
export async function waitGone<P>(procs: readonly P[], probe: GoneProbe<P>, opts: WaitGoneOptions): Promise<boolean> {
  const { clock, timeoutMs } = opts;
  const deadline = clock.now() + timeoutMs;
  let delay = FIRST_DELAY_MS;
  let escalated = false;
  for (;;) {
    const alive = procs.length === 0 ? [] : await probe.alive(procs);
    if (alive.length === 0) return true;
    const now = clock.now();
    if (now >= deadline) return false;
    if (!escalated && now >= deadline - timeoutMs / 2) {
      await probe.signal(alive, opts.escalation);
      escalated = true;
    }
    await new Promise<void>((resolve) => clock.after(delay, resolve));
    delay = Math.min(delay * 2, MAX_DELAY_MS);
  }
}

/** Processes of this machine, each known by its pid and start time (a reused pid is not a survivor). */
export const LOCAL_PROCESSES: GoneProbe<ProcStat> = {
  alive: (procs) => procs.filter(isSameProcessAlive),
  signal: (procs, signal) => signalAll(procs.map((p) => p.pid), signal),
};
