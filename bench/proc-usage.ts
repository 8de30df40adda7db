/**
 * CPU time and wakeups of other processes, from /proc (Linux). Used to charge the tmux servers,
 * control clients and pane programs of a run, which process.cpuUsage() cannot see.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { readStat } from '../backends/process/process-tree.js';

/** Clock ticks per second for utime/stime (USER_HZ; 100 on every Linux we run on, asked once). */
const TICKS_PER_SECOND = ((): number => {
  try {
    const n = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(n) && n > 0 ? n : 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of each pid, in ms (a pid that is gone counts 0). */
export function cpuMs(pids: Iterable<number>): number {
  let ticks = 0;
  for (const pid of pids) ticks += readStat(pid)?.cpuTicks ?? 0;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** voluntary + nonvoluntary context switches of one task (a thread: /proc/<pid>/task/<tid>). */
export function contextSwitches(path: string): number {
  try {
    const text = readFileSync(`${path}/status`, 'latin1');
    let n = 0;
    for (const m of text.matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) n += Number(m[1]);
    return n;
  } catch {
    return 0;
  }
}

/** Context switches of each process's main thread: how often it went to sleep and woke up. */
export function wakeups(pids: Iterable<number>): number {
  let n = 0;
  for (const pid of pids) n += contextSwitches(`/proc/${pid}/task/${pid}`);
  return n;
}
