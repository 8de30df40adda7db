/**
 * What idle drives cost. 20 bash drives at their prompt, settled; then, over a window, the CPU
 * of this Node process (process.cpuUsage), of the drives' tmux servers and control clients
 * (utime+stime from /proc), the main thread's context switches (each one a sleep and a wakeup),
 * the async callbacks run (async_hooks `before`, an upper bound on event-loop wakeups) and the
 * event loop's utilization. Baseline, in the same run and over a window of the same length: this
 * process with no drives, just before they are created. Idle should cost ≈ nothing.
 */
import { createHook } from 'node:async_hooks';
import { readdirSync, readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { processTree } from '../backends/process/process-tree.js';
import { type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { BenchDriver } from './bench-driver.js';
import { contextSwitches, cpuMs, wakeups } from './proc-usage.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';

const SESSIONS = 20;
const COLS = 80;
const ROWS = 24;

interface Window {
  readonly seconds: number;
  /** This process, ms of CPU per second. */
  readonly hostCpu: number;
  /** Main-thread context switches per second. */
  readonly hostSwitches: number;
  /** Async callbacks run per second. */
  readonly callbacks: number;
  /** Event-loop utilization over the window, in %. */
  readonly elu: number;
  /** The drives' tmux servers, summed: ms of CPU per second and wakeups per second. */
  readonly serverCpu: number | null;
  readonly serverSwitches: number | null;
  /** Control clients (`tmux -C`), summed. */
  readonly clientCpu: number | null;
  /** The programs in the panes (bwrap + bash), summed. */
  readonly paneCpu: number | null;
  readonly activeHandles: number;
}

/** Pids of the `tmux -C attach` clients of a socket. */
function controlClientsOf(socket: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid)) continue;
    try {
      const argv = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      if (argv.includes(socket) && argv.includes('-C')) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}

interface Watched {
  readonly servers: readonly number[];
  readonly clients: readonly number[];
  readonly panes: readonly number[];
}

function activeHandles(): number {
  const p = process as unknown as { _getActiveHandles?: () => unknown[] };
  return p._getActiveHandles?.().length ?? Number.NaN;
}

async function measure(ms: number, watched: Watched | undefined): Promise<Window> {
  let callbacks = 0;
  const hook = createHook({
    before() {
      callbacks++;
    },
  });
  const self = `/proc/${process.pid}/task/${process.pid}`;
  const cpu0 = process.cpuUsage();
  const sw0 = contextSwitches(self);
  const elu0 = performance.eventLoopUtilization();
  const server0 = watched ? cpuMs(watched.servers) : 0;
  const serverSw0 = watched ? wakeups(watched.servers) : 0;
  const client0 = watched ? cpuMs(watched.clients) : 0;
  const pane0 = watched ? cpuMs(watched.panes) : 0;
  const t0 = performance.now();
  hook.enable();
  await sleep(ms);
  hook.disable();
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const per = (v: number): number => v / seconds;
  return {
    seconds,
    hostCpu: per((cpu.user + cpu.system) / 1000),
    // The sleep's own timer wakes the thread once: not charged to either side.
    hostSwitches: per(contextSwitches(self) - sw0),
    callbacks: per(Math.max(0, callbacks - 1)),
    elu: elu.utilization * 100,
    serverCpu: watched ? per(cpuMs(watched.servers) - server0) : null,
    serverSwitches: watched ? per(wakeups(watched.servers) - serverSw0) : null,
    clientCpu: watched ? per(cpuMs(watched.clients) - client0) : null,
    paneCpu: watched ? per(cpuMs(watched.panes) - pane0) : null,
    activeHandles: activeHandles(),
  };
}

export const idleCpu: Benchmark = {
  name: 'idle-cpu',
  summary: `${SESSIONS} idle bash drives: CPU and wakeups of this process and the tmux servers, vs no drives`,
  async run(opts: BenchOptions): Promise<BenchResult> {
    const windowMs = opts.quick ? 3000 : 10_000;
    const settleMs = opts.quick ? 500 : 1500;
    return withTeardown(opts.log, async (teardown) => {
      // The same settle before both windows: a fresh process is still compiling and collecting.
      opts.log(`idle-cpu: settling ${settleMs} ms, then a ${windowMs} ms baseline window with no drives`);
      await sleep(settleMs);
      const base = await measure(windowMs, undefined);

      const bench = await BenchDriver.open({ maxSessions: SESSIONS + 4 });
      teardown.add('library driver', () => bench.close());
      const names = Array.from({ length: SESSIONS }, (_, i) => `idle${String(i).padStart(2, '0')}`);
      const t0 = performance.now();
      // Created in batches of 4: 20 at once is a burst of 60 process spawns on 2 cores.
      for (let i = 0; i < names.length; i += 4) await Promise.all(names.slice(i, i + 4).map((n) => bench.bash(n, COLS, ROWS)));
      const createMs = performance.now() - t0;
      const servers = await Promise.all(names.map((n) => bench.serverPid(n)));
      const clients = names.flatMap((n) => controlClientsOf(bench.socketOf(n)));
      const panes = servers.flatMap((pid) => processTree(pid).slice(1).map((p) => p.pid));
      if (clients.length !== SESSIONS) throw new Error(`expected ${SESSIONS} control clients, found ${clients.length}`);
      opts.log(`idle-cpu: ${SESSIONS} drives up in ${Math.round(createMs)} ms; settling ${settleMs} ms, then a ${windowMs} ms window`);
      await sleep(settleMs);
      const idle = await measure(windowMs, { servers, clients, panes });
      await bench.close();
      await sleep(200);
      const handlesAfterKill = activeHandles();

      const row = (w: Window): (number | null)[] => [w.hostCpu, w.hostSwitches, w.callbacks, w.elu, w.serverCpu, w.serverSwitches, w.clientCpu, w.paneCpu, w.activeHandles];
      const hostDelta = idle.hostCpu - base.hostCpu;
      const tmuxTotal = (idle.serverCpu ?? 0) + (idle.clientCpu ?? 0);
      return {
        name: 'idle-cpu',
        workload: `${SESSIONS} bash drives at '$ ' (${COLS}x${ROWS}), settled ${settleMs} ms, ${windowMs / 1000} s windows; per-second figures`,
        columns: ['host ms/s', 'host sw/s', 'callbacks/s', 'ELU %', 'servers ms/s', 'servers sw/s', 'clients ms/s', 'panes ms/s', 'handles'],
        rows: [
          { subject: `tmux-drive: ${SESSIONS} idle drives`, baseline: false, values: row(idle) },
          { subject: 'baseline: this process, no drives', baseline: true, values: row(base) },
        ],
        verdicts: [
          { label: 'host CPU, drives − baseline', value: hostDelta, unit: 'ms/s', target: '≤ 1 ms/s (0.1% of a core)', met: hostDelta <= 1 },
          { label: 'host wakeups, drives − baseline', value: idle.hostSwitches - base.hostSwitches, unit: '/s', target: '≤ 1/s', met: idle.hostSwitches - base.hostSwitches <= 1 },
          { label: 'async callbacks, drives − baseline', value: idle.callbacks - base.callbacks, unit: '/s', target: '≤ 1/s', met: idle.callbacks - base.callbacks <= 1 },
          { label: `tmux servers + clients, all ${SESSIONS}`, value: tmuxTotal, unit: 'ms/s', target: '≤ 2 ms/s', met: tmuxTotal <= 2 },
          { label: 'tmux server wakeups, per drive', value: (idle.serverSwitches ?? 0) / SESSIONS, unit: '/s', target: '0 (nothing to do)', met: (idle.serverSwitches ?? 0) === 0 },
          { label: 'active handles per drive', value: (idle.activeHandles - base.activeHandles) / SESSIONS, unit: '' },
        ],
        notes: [
          'ms/s = milliseconds of CPU per second of wall time (1000 = one core); sw/s = context switches of the main thread per second',
          'callbacks/s counts async_hooks `before` events (timers, I/O, promises from native work): an upper bound on event-loop wakeups',
          `creating the ${SESSIONS} drives took ${Math.round(createMs)} ms (batches of 4); active handles after killing them all: ${handlesAfterKill} (baseline ${base.activeHandles})`,
          'the ratio of two near-zero figures is noise, so the verdicts are differences against the baseline window',
        ],
        detail: { baseline: base, idle, createMs, handlesAfterKill, pids: { servers, clients, panes } },
      };
    });
  },
};
