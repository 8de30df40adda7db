/**
 * Waits for the work a timed run leaves behind in this process (a drive's quiet paths and verdicts,
 * the journal's writes, a collection of the run's garbage) to end before the next run is timed, so
 * that it is not charged to whichever path comes next: until this process used < 10% of a core over
 * 200 ms, at most 3 s. many-streams found the phase after the other side's ran slower without it
 * (library after null 0.56-0.70x, before it 0.72-0.99x, quick runs at load 7-14); throughput's
 * library run followed the in-process node-pty → Mirror run in two rounds of three.
 */
import { sleep } from './sleep.js';

export async function settleProcess(): Promise<void> {
  await sleep(300);
  for (const deadline = performance.now() + 3000; performance.now() < deadline; ) {
    const cpu0 = process.cpuUsage();
    await sleep(200);
    const cpu = process.cpuUsage(cpu0);
    if ((cpu.user + cpu.system) / 1000 < 20) return;
  }
}
