import type { Clock } from '../../lib/common/clock.js';

/** The real clock, wired in by the composition root; the pure layers only see the `Clock` port. */
export const systemClock: Clock = {
  now: () => performance.now(),
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
};
