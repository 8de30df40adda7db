/**
 * One sample of a pane's process tree for busy-vs-hung (lib/perceive/activity.ts compares two).
 * Read from /proc on demand: the session takes one sample when output stops and one when its
 * stuck timer fires, never on an interval (invariant 1). Inside a bwrap jail the tree is read
 * from the host side, where pids are real.
 */
import { readFileSync, readlinkSync } from 'node:fs';
import { processTree, type ProcStat } from './process-tree.js';
import type { ProcessActivitySample, ProcessCounters } from '../../lib/perceive/activity.js';

/**
 * Linux reports /proc times in USER_HZ, which the kernel ABI fixes at 100 on every architecture
 * Node runs on (sysconf(_SC_CLK_TCK) is 100 here); there is no portable way to ask from Node.
 */
const USER_HZ = 100;
const MS_PER_TICK = 1000 / USER_HZ;

/** Syscall numbers, per architecture, as /proc/PID/syscall shows them. */
const SYSCALLS: Readonly<Record<string, { readonly read: number; readonly select: readonly number[]; readonly elsewhere: readonly number[] }>> = {
  // elsewhere: calls that cannot read the terminal: nanosleep, clock_nanosleep, wait4, waitid, pause, rt_sigsuspend, rt_sigtimedwait
  x64: { read: 0, select: [23, 270], elsewhere: [35, 230, 61, 247, 34, 130, 128] }, // select, pselect6
  arm64: { read: 63, select: [72], elsewhere: [101, 115, 260, 95, 133, 137] }, // pselect6 (arm64 has no select, no pause)
  riscv64: { read: 63, select: [72], elsewhere: [101, 115, 260, 95, 133, 137] },
};

/**
 * Samples the tree rooted at `root` (the pane's pid). `now` is the caller's clock, kept in the
 * sample so that two samples say how long their window was. A vanished root gives an empty sample.
 */
export function sampleProcessActivity(root: number, now: number): ProcessActivitySample {
  const tree = processTree(root);
  const processes: ProcessCounters[] = [];
  let readingTerminal = false;
  let runnable = false;
  // Who could read an answer: the foreground processes with no foreground child (a shell waiting
  // on its command, the jail's own supervisor polling its child, are not readers).
  const parents = new Set(tree.filter((st) => st.pgrp === st.tpgid).map((st) => st.ppid));
  let leaves = 0;
  let elsewhere = 0;
  for (const st of tree) {
    const counters = readCounters(st);
    if (counters) processes.push(counters);
    if (st.state === 'R') runnable = true;
    if (st.pgrp !== st.tpgid) continue;
    if (!readingTerminal && st.state === 'S' && isReadingTerminal(st.pid)) readingTerminal = true;
    if (parents.has(st.pid)) continue;
    leaves++;
    if (st.state === 'S' && isBlockedElsewhere(st.pid)) elsewhere++;
  }
  return { at: now, processes, readingTerminal, runnable, readsNothing: leaves > 0 && elsewhere === leaves };
}

/** Blocked in a sleep, a wait for a child or pause: a call that cannot read the terminal. Unknown = false. */
function isBlockedElsewhere(pid: number): boolean {
  const nrs = SYSCALLS[process.arch];
  if (nrs === undefined) return false;
  try {
    const nr = Number(readFileSync(`/proc/${pid}/syscall`, 'latin1').trim().split(' ')[0]);
    return nrs.elsewhere.includes(nr);
  } catch {
    return false;
  }
}

function readCounters(st: ProcStat): ProcessCounters | undefined {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${st.pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // Fields after the comm's closing parenthesis: state is 0, utime 11, stime 12, cutime 13, cstime 14.
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const n = (i: number): number => Number(f[i] ?? '0') || 0;
  const cpuMs = (n(11) + n(12) + n(13) + n(14)) * MS_PER_TICK;
  return { pid: st.pid, start: st.startTicks, cpuMs, ioBytes: readIoBytes(st.pid) };
}

/**
 * rchar + wchar: every byte moved through read/write, sockets and pipes included (a download);
 * read_bytes + write_bytes (storage only) when the first pair is missing. 0 when /proc/PID/io is
 * not readable (another user's process without ptrace rights).
 */
function readIoBytes(pid: number): number {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/io`, 'latin1');
  } catch {
    return 0;
  }
  const fields = new Map<string, number>();
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon > 0) fields.set(line.slice(0, colon), Number(line.slice(colon + 1).trim()) || 0);
  }
  if (fields.has('rchar') || fields.has('wchar')) return (fields.get('rchar') ?? 0) + (fields.get('wchar') ?? 0);
  return (fields.get('read_bytes') ?? 0) + (fields.get('write_bytes') ?? 0);
}

/**
 * True when the process waits on its terminal: blocked in `read` on a tty (python's input(),
 * `read -p`, cat), or in select/pselect6 watching only fd 0 when fd 0 is a tty (bash's readline
 * at a prompt). The program waits for a human: a fact no screen text can forge.
 * /proc/PID/syscall needs ptrace rights; without them the answer is false (unknown), never a guess.
 */
function isReadingTerminal(pid: number): boolean {
  const nrs = SYSCALLS[process.arch];
  if (nrs === undefined) return false;
  let syscall: string;
  try {
    syscall = readFileSync(`/proc/${pid}/syscall`, 'latin1');
  } catch {
    return false;
  }
  const [nrText, arg0] = syscall.trim().split(' ');
  const nr = Number(nrText);
  if (arg0 === undefined || !Number.isInteger(nr)) return false;
  const first = Number.parseInt(arg0, 16);
  let fd: number;
  if (nr === nrs.read) fd = first;
  // select(nfds, …) with nfds = 1 watches fd 0 alone.
  else if (nrs.select.includes(nr) && first === 1) fd = 0;
  else return false;
  if (!Number.isInteger(fd) || fd < 0) return false;
  try {
    const target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return target.startsWith('/dev/pts/') || target.startsWith('/dev/tty');
  } catch {
    return false;
  }
}
