/** Shared scaffolding of the serving-host tests: a private data dir with a config, a host, clean-up that leaves nothing running. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allow, processesMentioning } from '../helpers.js';
import type { DriverConfigInput } from '../../lib/policy/config-schema.js';

export const BASH = allow('bash', '/bin/bash', { env: { PS1: '$ ' } });
export const BASH_ARGS = ['--norc', '--noprofile'];

export function hostConfig(more: Partial<DriverConfigInput> = {}): DriverConfigInput {
  return { allow: [BASH, allow('python3', '/usr/bin/python3')], ...more };
}

export function tempDataDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'tds-')), 'data');
}

/** Kills whatever still mentions the data dir (tmux servers, hosts), loudly, then removes it. */
export function sweep(dataDir: string): void {
  const left = processesMentioning(dataDir);
  if (left.length > 0) {
    console.warn(`serve test cleanup: ${left.length} process(es) still mention ${dataDir}; killing them`);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
}
