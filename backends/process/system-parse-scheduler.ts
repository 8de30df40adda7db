import { createParseScheduler, type ParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import { systemClock } from './system-clock.js';

/** The one scheduler every mirror of this process shares (fair slices across drives), on real timers. */
export const systemParseScheduler: ParseScheduler = createParseScheduler({
  defer: (fn) => void setImmediate(fn),
  now: () => performance.now(),
  after: (ms, fn) => systemClock.after(ms, fn),
});
