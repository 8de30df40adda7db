/**
 * The emulator's own log lines, rate-limited on their way to the owner's incidents: xterm.js can
 * log once per byte of a hostile stream.
 */
import type { EmulatorLog } from './headless.js';

/** What the owner records: a code and its details (MirrorOptions.onIncident). */
export type IncidentSink = (code: string, detail: Record<string, unknown>) => void;

/**
 * Each distinct message is reported at its 1st, 10th, 100th… occurrence: a flood of one message
 * costs a handful of incidents, and the count says how big it was.
 */
export function rateLimitedLog(onIncident: IncidentSink | undefined): EmulatorLog {
  const counts = new Map<string, number>();
  return (level, message) => {
    const key = message.slice(0, 200);
    const n = (counts.get(key) ?? 0) + 1;
    if (counts.size < 100 || counts.has(key)) counts.set(key, n);
    if (onIncident && isPowerOfTen(n)) onIncident('emulator_log', { level, message: key, count: n });
  };
}

function isPowerOfTen(n: number): boolean {
  let p = 1;
  while (p < n) p *= 10;
  return p === n;
}
