/**
 * Who is alive, as Linux says it. A lease holder is a pid plus the process's start time, so a pid
 * that the kernel has handed to another program since does not keep a dead holder's lease.
 */
import { readFileSync } from 'node:fs';
import { JournalError, type LeaseHolder } from './journal-error.js';

interface ProcStat {
  /** Field 3: R, S, D, Z (zombie), X (dead), … */
  readonly state: string;
  /** Field 22. */
  readonly startTime: number;
}

function readStat(pid: number): ProcStat | undefined {
  if (!Number.isSafeInteger(pid) || pid <= 0) return undefined;
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'latin1');
  } catch {
    return undefined;
  }
  // Field 2 (comm) is parenthesised and may itself contain spaces and ')': fields resume after
  // the last ')'. What follows starts at field 3, so field N is at index N - 3.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const state = fields[0];
  const start = Number(fields[22 - 3]);
  if (state === undefined || !Number.isSafeInteger(start)) return undefined;
  return { state, startTime: start };
}

/** Field 22 of /proc/<pid>/stat (clock ticks after boot), or undefined when there is no such process. */
export function processStartTime(pid: number): number | undefined {
  return readStat(pid)?.startTime;
}

/** The calling process as a lease holder. */
export function currentHolder(): LeaseHolder {
  const startTime = processStartTime(process.pid);
  if (startTime === undefined) throw new JournalError('JOURNAL_UNREADABLE', '/proc/self/stat is unreadable: leases need a Linux /proc');
  return { pid: process.pid, startTime };
}

/** True while `pid` exists and is not a zombie (a SIGKILLed process its parent has not reaped yet). */
export function isPidAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z' && stat.state !== 'X';
}

/**
 * True iff the process exists, has the same start time and is not a zombie (a killed process its
 * parent has not reaped yet still has a /proc entry, but it will never write again).
 */
export function isHolderAlive(holder: LeaseHolder): boolean {
  const stat = readStat(holder.pid);
  return stat !== undefined && stat.startTime === holder.startTime && stat.state !== 'Z' && stat.state !== 'X';
}

let bootIdCache: string | null | undefined;

/**
 * This boot's id. Start times count from boot, so after a reboot a (pid, start time) pair could
 * name a new process by coincidence; a lease records the boot it was taken in.
 */
export function bootId(): string | null {
  if (bootIdCache === undefined) {
    try {
      const id = readFileSync('/proc/sys/kernel/random/boot_id', 'latin1').trim();
      bootIdCache = /^[0-9a-f-]{1,64}$/.test(id) ? id : null;
    } catch {
      bootIdCache = null;
    }
  }
  return bootIdCache;
}
