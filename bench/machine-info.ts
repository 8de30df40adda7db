/** The machine a run was measured on: figures only compare within one run, but the machine is noted. */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { TMUX } from './baseline-server.js';

export interface MachineInfo {
  readonly date: string;
  readonly cpuModel: string;
  readonly cores: number;
  readonly node: string;
  readonly tmux: string;
  readonly bwrap: string;
  readonly kernel: string;
  readonly memoryGiB: number;
  /** 1-minute load average when the run started: a busy neighbour shows here. */
  readonly loadAverageAtStart: number;
}

function version(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch {
    return 'unavailable';
  }
}

export function machineInfo(): MachineInfo {
  const list = cpus();
  return {
    date: new Date().toISOString(),
    cpuModel: list[0]?.model ?? 'unknown',
    cores: list.length,
    node: process.version,
    tmux: version(TMUX, ['-V']),
    bwrap: version('bwrap', ['--version']),
    kernel: release(),
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    loadAverageAtStart: Math.round((loadavg()[0] ?? 0) * 100) / 100,
  };
}
