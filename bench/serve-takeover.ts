/**
 * Standby takeover after SIGKILL of the serving host, with N bash drives, clients driving them and
 * an observer on every feed (tools/serve-torture.ts, a few rounds): the time from the SIGKILL to
 * the standby's ready line, to every drive taking a key through the reconnected client, and to
 * every drive showing an echo typed through it (drivable: the verdict's figure), against
 * a host started cold on the same drives (spawn → ready) in the same run. Double drives and
 * journal gaps found are violations (the verdicts say how many).
 */
import { runServeTorture } from '../tools/serve-torture.js';
import { ratioVerdict, type Benchmark, type BenchResult } from './benchmark.js';
import { percentiles } from './percentiles.js';

export const serveTakeover: Benchmark = {
  name: 'serve-takeover',
  summary: 'standby takeover after SIGKILL of the serving host (20 drives): until every drive is drivable again',
  async run({ quick, log }): Promise<BenchResult> {
    const drives = quick ? 5 : 20;
    const rounds = quick ? 3 : 10;
    const r = await runServeTorture({ iterations: rounds, drives, drivers: 2, log });
    const ready = percentiles(r.readyMs);
    const keyed = percentiles(r.keyMs);
    const drivable = percentiles(r.drivableMs);
    const cpu = percentiles(r.standbyCpuMs);
    return {
      name: 'serve-takeover',
      workload: `${drives} bash drives, 2 clients driving, 1 observer on every feed; ${rounds} SIGKILLs of the serving host, a standby waiting each time`,
      columns: ['p50 ms', 'p90 ms', 'max ms'],
      rows: [
        { subject: `a host started cold on ${drives} drives (spawn → ready)`, baseline: true, values: [r.coldStartMs, null, null] },
        { subject: `the same key + echo round on a steady host (${drives} drives at once)`, baseline: false, values: [r.steadyEchoMs, null, null] },
        { subject: 'SIGKILL → the standby serves', baseline: false, values: [ready.p50, ready.p90, ready.max] },
        { subject: 'SIGKILL → every drive took a key', baseline: false, values: [keyed.p50, keyed.p90, keyed.max] },
        { subject: 'SIGKILL → every drive showed a typed echo', baseline: false, values: [drivable.p50, drivable.p90, drivable.max] },
        { subject: "the standby's own CPU over that (utime + stime, 10 ms ticks)", baseline: false, values: [cpu.p50, cpu.p90, cpu.max] },
      ],
      verdicts: [
        { label: `drivable after takeover p50 (${drives} drives)`, value: drivable.p50, unit: 'ms', target: drives === 20 ? '≤ 300 ms' : '≤ 300 ms for 20', met: drivable.p50 <= 300 },
        ratioVerdict('takeover / cold start p50', drivable.p50 / r.coldStartMs),
        { label: 'double drives and journal gaps', value: r.violations.length, unit: 'violations', target: '0', met: r.violations.length === 0 },
        { label: 'calls lost in flight (HOST_LOST)', value: r.lostCalls, unit: 'calls' },
      ],
      notes: ['a hot standby: every live drive observed while it waits (read-only, no output) and its mirror\'s terminal made; the takeover takes the leases in one transaction and adopts those clients (no tmux -C started, no terminal made)', ...r.violations.slice(0, 5)],
      detail: r,
    };
  },
};
