/**
 * Who serves a data dir: `<dataDir>/serve/host.json` (pid, its start time, since when), written
 * by the host once it holds the lock. It names the holder in messages (HOST_HELD, a standby's
 * wait); it never decides anything: the lock does. A record whose process is gone (or whose pid
 * was reused: the start time differs) is nobody's.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { isHolderAlive, processStartTime } from '../../journal/process-identity.js';
import type { HostInfo } from '../wire/protocol.js';
import type { ServePaths } from './serve-paths.js';

export interface HostRecord {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat: a pid reused by another program is not this host. */
  readonly startTime: number;
  readonly startedAt: number;
  readonly socket: string;
}

export function writeHostRecord(paths: ServePaths, info: HostInfo): void {
  hostRecordWriter(paths, info.pid)(info.startedAt);
}

/**
 * What writes `pid`'s record, its process start time read now (from /proc): a standby makes it
 * while it waits, and its takeover only writes the file.
 */
export function hostRecordWriter(paths: ServePaths, pid: number): (startedAt: number) => void {
  const startTime = processStartTime(pid) ?? 0;
  return (startedAt) => {
    const record: HostRecord = { pid, startTime, startedAt, socket: paths.socket };
    writeFileSync(paths.hostRecord, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  };
}

/** The record when its process is alive; undefined otherwise. */
export function readHostRecord(paths: ServePaths): HostRecord | undefined {
  let r: Partial<HostRecord>;
  try {
    r = JSON.parse(readFileSync(paths.hostRecord, 'utf8')) as Partial<HostRecord>;
  } catch {
    return undefined;
  }
  if (typeof r.pid !== 'number' || typeof r.startTime !== 'number' || typeof r.startedAt !== 'number') return undefined;
  return isHolderAlive({ pid: r.pid, startTime: r.startTime }) ? (r as HostRecord) : undefined;
}

/** Removes the record if it is `pid`'s (a successor's record stays). */
export function removeHostRecord(paths: ServePaths, pid: number): void {
  try {
    const r = JSON.parse(readFileSync(paths.hostRecord, 'utf8')) as Partial<HostRecord>;
    if (r.pid === pid) rmSync(paths.hostRecord, { force: true });
  } catch {
    /* none */
  }
}
