/**
 * Time as a port: the pure layers never read global timers, so tests can drive them and the
 * "no polling" invariant stays visible (every timer is armed by an event through this interface).
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds, monotonic. */
  now(): number;
  /** Runs `fn` once after `ms`; never repeats. */
  after(ms: number, fn: () => void): TimerHandle;
}
