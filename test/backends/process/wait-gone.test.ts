/**
 * Kill verification against real processes: a program that ignores SIGTERM is escalated to SIGKILL
 * halfway and seen gone; one the probe cannot end is reported alive at the deadline. Timing comes
 * from the real clock (the deadline is generous: nothing here measures speed).
 */
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { readStat, signalAll, type ProcStat } from '../../../backends/process/process-tree.js';
import { LOCAL_PROCESSES, waitGone, type GoneProbe } from '../../../backends/process/wait-gone.js';
import { systemClock } from '../../../lib/driver/system-clock.js';

const started: number[] = [];
afterEach(() => {
  signalAll(started.splice(0), 'SIGKILL');
});

/** A shell that ignores SIGTERM, and its start time (so a reused pid is not taken for it). */
async function stubborn(): Promise<ProcStat> {
  const child = spawn('/bin/sh', ['-c', 'trap "" TERM; echo up; while :; do sleep 1; done'], { stdio: ['ignore', 'pipe', 'ignore'] });
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  const pid = child.pid!;
  started.push(pid);
  const stat = readStat(pid);
  if (!stat) throw new Error('the test process vanished');
  return stat;
}

describe('waitGone', () => {
  it('escalates to SIGKILL halfway for a process that ignored the first signal, and sees it gone', async () => {
    const p = await stubborn();
    signalAll([p.pid], 'SIGTERM');
    const sent: string[] = [];
    const probe: GoneProbe<ProcStat> = {
      alive: LOCAL_PROCESSES.alive,
      signal: (procs, signal) => {
        sent.push(signal);
        return LOCAL_PROCESSES.signal(procs, signal);
      },
    };
    expect(await waitGone([p], probe, { clock: systemClock, timeoutMs: 2000, escalation: 'SIGKILL' })).toBe(true);
    expect(sent).toEqual(['SIGKILL']);
    expect(LOCAL_PROCESSES.alive([p])).toEqual([]);
  });

  it('reports false at the deadline when the processes outlive it', async () => {
    const p = await stubborn();
    const ignoring: GoneProbe<ProcStat> = { alive: LOCAL_PROCESSES.alive, signal: () => undefined };
    expect(await waitGone([p], ignoring, { clock: systemClock, timeoutMs: 300, escalation: 'SIGKILL' })).toBe(false);
    expect(LOCAL_PROCESSES.alive([p])).toEqual([p]);
  });

  it('is done at once with nothing to wait for', async () => {
    const never: GoneProbe<number> = {
      alive: () => {
        throw new Error('not asked');
      },
      signal: () => undefined,
    };
    expect(await waitGone([], never, { clock: systemClock, timeoutMs: 1000, escalation: 'SIGKILL' })).toBe(true);
  });
});
