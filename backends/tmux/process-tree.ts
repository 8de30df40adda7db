/**
 * The host-side view of a drive's processes, read from /proc on demand (never on a timer).
 * Inside a bwrap jail pids are the namespace's; /proc read from the host shows host pids, which is
 * what signals and kill verification need.
 */
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  readonly pid: number;
  readonly comm: string;
  readonly state: string;
  readonly ppid: number;
  readonly pgrp: number;
  readonly tpgid: number;
  /** utime + stime, in clock ticks. */
  readonly cpuTicks: number;
  readonly startTicks: number;
}

export function readStat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // comm may contain spaces and parentheses: it ends at the last ')'.
  const close = text.lastIndexOf(')');
  const comm = text.slice(text.indexOf('(') + 1, close);
  const f = text.slice(close + 2).split(' ');
  const num = (i: number): number => Number(f[i] ?? '0');
  return { pid, comm, state: f[0] ?? '?', ppid: num(1), pgrp: num(2), tpgid: num(5), cpuTicks: num(11) + num(12), startTicks: num(19) };
}

/** The live (non-zombie) processes of the tree rooted at `root`, root first. */
export function processTree(root: number): ProcStat[] {
  const byParent = new Map<number, ProcStat[]>();
  let rootStat: ProcStat | undefined;
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    const st = readStat(pid);
    if (!st) continue;
    if (pid === root) rootStat = st;
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

/** True while `pid` exists and is not a zombie (a daemon whose reaper never reaps stays Z). */
export function isAlive(pid: number): boolean {
  const st = readStat(pid);
  return st !== undefined && st.state !== 'Z' && st.state !== 'X';
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
