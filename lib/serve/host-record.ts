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
  const record: HostRecord = { pid: info.pid, startTime: processStartTime(info.pid) ?? 0, startedAt: info.startedAt, socket: paths.socket };
  writeFileSync(paths.hostRecord, `${JSON.stringify(record)}\n`, { mode: 0o600 });
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
