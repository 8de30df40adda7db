/**
 * What the many-streams phases share (bench/many-streams.ts, the library side; bench/null-consumers.ts,
 * the baseline): the sentinel each drive prints after its file, the phase's deadline, the final
 * screen check, and the figures a phase reports.
 */
import type { SentinelScanner } from './sentinel-scanner.js';

export const RUN_TIMEOUT_MS = 300_000;

export interface PhaseFigures {
  readonly ms: number;
  readonly bytes: number[];
  readonly hostCpuMs: number;
  /** Drives whose sentinel was seen only on the screen (tmux paused the pane and dropped output; ±250 ms). */
  readonly onScreenOnly: number;
  /** %pause notifications (tmux paused a pane: its output waited > pause-after 5 s for this host). */
  readonly pauses: number;
  /** Pauses tmux did not announce, found by a continue probe answered with %continue (also counted in pauses). */
  readonly unannounced?: number;
}

let runNumber = 0;
/** The marker a drive prints after its file; the command spells it so the typed line does not contain it. */
export function nextSentinel(): { text: string; command: string } {
  runNumber += 1;
  return { text: `END-42-${runNumber}`, command: `echo END-$((6*7))-${runNumber}` };
}

/** `stalled` says which drives had not finished, so a stall names its drives and their byte counts. */
export function phaseDeadline<T>(p: Promise<T>, what: string, stalled: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done within ${RUN_TIMEOUT_MS} ms; ${stalled()}`)), RUN_TIMEOUT_MS)))]).finally(() => clearTimeout(timer));
}

export function notFinished(done: readonly boolean[], scanners: readonly SentinelScanner[]): string {
  const left = done.flatMap((d, i) => (d ? [] : [`#${i} (${scanners[i]?.bytes ?? 0} bytes)`]));
  return `not finished: ${left.join(', ') || 'none (the final parse)'}`;
}

export function checkScreen(lines: readonly string[], lastLine: string, sentinel: string, who: string): void {
  const at = lines.lastIndexOf(sentinel);
  if (at < 1 || lines[at - 1] !== lastLine) throw new Error(`${who}: the screen does not end with the file's last line then ${sentinel}`);
}

