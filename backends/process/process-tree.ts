/**
 * The host-side view of a drive's processes, read from /proc on demand (never on a timer).
 * Inside a bwrap jail pids are the namespace's; /proc read from the host shows host pids, which is
 * what signals and kill verification need. The parsing and the tree walk are shared with the ssh
 * host, which reads the same lines from a remote /proc.
 *
 * The room (backends/process/): what the tmux, spawn and ssh backends share about the program's
 * processes: this tree, activity sampling (process-activity.ts), the one signal-to-the-foreground-
 * group (signal-foreground.ts), the one kill verification (wait-gone.ts) and the real clock
 * (system-clock.ts). It imports
 * lib/common and the port types of lib/session/backend.ts and lib/perceive/activity.ts, nothing
 * of the backends that use it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  /** The session id (setsid): a pty's child leads one, and what it double-forks stays in it. */
  readonly sid: number;
  readonly tpgid: number;
  /** utime + stime, in clock ticks. */
  readonly cpuTicks: number;
  readonly startTicks: number;
}

/**
 * One /proc/<pid>/stat line. comm is parenthesised and may itself contain spaces and ')': it ends
 * at the last ')', and the fields after it start at field 3 (state).
 */
export function parseStat(line: string): ProcStat | undefined {
  const open = line.indexOf(' (');
  const close = line.lastIndexOf(')');
  if (open < 0 || close < open) return undefined;
  const pid = Number(line.slice(0, open));
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  const f = line.slice(close + 2).split(' ');
  const num = (i: number): number => Number(f[i] ?? '0');
  return { pid, comm: line.slice(open + 2, close), state: f[0] ?? '?', ppid: num(1), pgrp: num(2), sid: num(3), tpgid: num(5), cpuTicks: num(11) + num(12), startTicks: num(19) };
}

/** Concatenated /proc/<pid>/stat lines (a remote `cat /proc/[0-9]*\/stat`); malformed lines are skipped. */
export function parseStats(text: string): ProcStat[] {
  const out: ProcStat[] = [];
  for (const line of text.split('\n')) {
    const st = parseStat(line);
    if (st) out.push(st);
  }
  return out;
}

export function readStat(pid: number): ProcStat | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  return parseStat(text.trimEnd());
}

/** Every process of this machine, as one scan of /proc reads them. */
function allStats(): ProcStat[] {
  const out: ProcStat[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const st = readStat(pid);
    if (st) out.push(st);
  }
  return out;
}

/** The live (non-zombie) processes of the tree rooted at `root` among `all`, root first. */
export function treeOf(all: readonly ProcStat[], root: number): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  let rootStat: ProcStat | undefined;
  for (const st of all) {
    if (st.pid === root) rootStat = st;
    const list = byParent.get(st.ppid);
    if (list) list.push(st);
    else byParent.set(st.ppid, [st]);
  }
  if (!rootStat) return [];
  const out: ProcStat[] = [];
  const stack: ProcStat[] = [rootStat];
  for (let st = stack.pop(); st; st = stack.pop()) {
    if (st.state !== 'Z') out.push(st);
    for (const child of byParent.get(st.pid) ?? []) stack.push(child);
  }
  return out;
}

/**
 * Whether this kernel lists a task's children (/proc/PID/task/TID/children, CONFIG_PROC_CHILDREN):
 * then a tree is a few reads from its root instead of a scan of every process of the machine
 * (the scan cost ~85 ms per drive under load here, 20 drives sampled at once after a takeover).
 */
const CHILDREN_LISTED = ((): boolean => {
  try {
    readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'latin1');
    return true;
  } catch {
    return false;
  }
})();

/** The tree walked down the children lists; undefined when one cannot be read (then the scan is used). */
function treeByChildren(root: number): ProcStat[] | undefined {
  const out: ProcStat[] = [];
  const stack = [root];
  for (let pid = stack.pop(); pid !== undefined; pid = stack.pop()) {
    const st = readStat(pid);
    if (!st) continue; // gone meanwhile
    if (st.state !== 'Z') out.push(st);
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const tid of tasks) {
      let children: string;
      try {
        children = readFileSync(`/proc/${pid}/task/${tid}/children`, 'latin1');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT' && existsSync(`/proc/${pid}/task/${tid}`)) return undefined;
        continue; // the thread or process ended meanwhile
      }
      for (const child of children.split(' ')) if (child.trim() !== '') stack.push(Number(child));
    }
  }
  return out;
}

/** The live (non-zombie) processes of the tree rooted at `root`, root first. */
export function processTree(root: number): ProcStat[] {
  return (CHILDREN_LISTED ? treeByChildren(root) : undefined) ?? treeOf(allStats(), root);
}

/** Live processes of session `sid`: what a program double-forked (without setsid) is still in it. */
export function sessionMembers(sid: number): ProcStat[] {
  return allStats().filter((st) => st.sid === sid && st.state !== 'Z');
}

/** True while `pid` exists and is not a zombie (a daemon whose reaper never reaps stays Z). */
export function isAlive(pid: number): boolean {
  const st = readStat(pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
}

/** Alive and still the same process (a reused pid has another start time). */
export function isSameProcessAlive(p: ProcStat): boolean {
  const st = readStat(p.pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X' && st.startTicks === p.startTicks;
}

/** Sends `signal` to each pid, ignoring those already gone. */
export function signalAll(pids: Iterable<number>, signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Live (non-zombie) processes, other than this one, whose command line — argv words joined with
 * NUL, as /proc/PID/cmdline has them — satisfies `test`. One scan of /proc, on demand.
 */
export function findProcesses(test: (cmdline: string) => boolean): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 1 || pid === process.pid) continue;
    try {
      if (test(readFileSync(`/proc/${pid}/cmdline`, 'latin1')) && isAlive(pid)) out.push(pid);
    } catch {
      /* gone */
    }
  }
  return out;
}
