/**
 * Busy versus hung, from two samples of the pane's process tree (taken by
 * backends/process/process-activity.ts): one when output stops, one when `stuckMs` has passed. A
 * long compile burns CPU (busy), a download moves bytes (busy); a hung program does neither.
 */

/** One process of the tree; counters are cumulative since the process started. */
export interface ProcessCounters {
  readonly pid: number;
  /** Start time in clock ticks since boot: tells a reused pid from the same process. */
  readonly start: number;
  /** utime + stime + cutime + cstime in ms (reaped children's time folds into their parent). */
  readonly cpuMs: number;
  /** Bytes read and written (rchar + wchar; reaped children's folds into their parent). */
  readonly ioBytes: number;
}

export interface ProcessActivitySample {
  /** The clock's now() when taken, in ms. */
  readonly at: number;
  readonly processes: readonly ProcessCounters[];
  /** A foreground process is blocked reading the terminal (a `read` on its tty). */
  readonly readingTerminal: boolean;
  /**
   * A process of the tree was running or runnable (state R) when sampled. On an overloaded
   * machine a CPU-bound program gets little CPU time but is always runnable.
   */
  readonly runnable?: boolean;
  /**
   * Every foreground process is blocked in a call that cannot read the terminal (a sleep, a wait
   * for a child, pause): nothing will read an answer. False when one waits elsewhere (epoll, as a
   * node prompt does) or is unknown; absent in samples recorded before the fact was taken.
   */
  readonly readsNothing?: boolean;
}

export type Busy = 'cpu' | 'io' | 'idle';

/** What changed between two samples; the classifier's `activity` signal. */
export interface ProcessActivity {
  readonly busy: Busy;
  /** The window the verdict covers (the samples' `at`). */
  readonly since: number;
  readonly until: number;
  readonly cpuMs: number;
  readonly ioBytes: number;
  /** From the later sample. */
  readonly readingTerminal: boolean;
}

export interface ActivityThresholds {
  /**
   * CPU share of one core above which the tree is busy. An idle TUI's render loop costs 1–3 %
   * (opencode measured at ~2 % idle here; Claude Code 3–5 % per anthropics/claude-code #44040):
   * 10 % is above those and far below a compile's 100 %.
   */
  readonly cpuShare?: number;
  /**
   * Bytes per second above which the tree is busy with I/O. An idle TUI reads ~100 B/s (its
   * own timers, /proc); a slow download moves kilobytes per second.
   */
  readonly ioBytesPerSecond?: number;
}

const DEFAULT_CPU_SHARE = 0.1;
const DEFAULT_IO_BYTES_PER_SECOND = 1024;

/**
 * Compares two samples of the same tree. Processes in both count by their delta; processes that
 * appeared count in full (all of their work happened in the window); processes that left are
 * counted through their parent's reaped-children totals, or not at all. CPU-bound: a share of a
 * core above the threshold, or runnable in both samples while gaining CPU time (a loaded machine).
 */
export function compareActivity(before: ProcessActivitySample, after: ProcessActivitySample, thresholds: ActivityThresholds = {}): ProcessActivity {
  const earlier = new Map(before.processes.map((p) => [`${p.pid}/${p.start}`, p]));
  let cpuMs = 0;
  let ioBytes = 0;
  for (const p of after.processes) {
    const old = earlier.get(`${p.pid}/${p.start}`);
    cpuMs += Math.max(0, p.cpuMs - (old?.cpuMs ?? 0));
    ioBytes += Math.max(0, p.ioBytes - (old?.ioBytes ?? 0));
  }
  const seconds = Math.max(0.001, (after.at - before.at) / 1000);
  const cpuShare = thresholds.cpuShare ?? DEFAULT_CPU_SHARE;
  const ioRate = thresholds.ioBytesPerSecond ?? DEFAULT_IO_BYTES_PER_SECOND;
  const cpuBound = cpuMs / 1000 / seconds >= cpuShare || (before.runnable === true && after.runnable === true && cpuMs > 0);
  const busy: Busy = cpuBound ? 'cpu' : ioBytes / seconds >= ioRate ? 'io' : 'idle';
  return { busy, since: before.at, until: after.at, cpuMs, ioBytes, readingTerminal: after.readingTerminal };
}
