/** Shared test scaffolding: a driver over a private data dir, allow entries, process checks. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver, type DriverOptions } from '../lib/index.js';
import { findProcesses } from '../backends/process/process-tree.js';
import type { DriverConfigInput } from '../lib/policy/config-schema.js';

export const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

type AllowInput = NonNullable<DriverConfigInput['allow']>[number];

export function allow(id: string, path: string, extra: Partial<AllowInput> = {}): AllowInput {
  return { id, match: { path }, consent: CONSENT, ...extra };
}

export interface TestDriver {
  readonly driver: Driver;
  readonly dataDir: string;
  cleanup(): Promise<void>;
}

export async function openDriver(allowList: AllowInput[], more: Partial<DriverConfigInput> = {}, opts: Partial<DriverOptions> = {}): Promise<TestDriver> {
  const dataDir = mkdtempSync(join(tmpdir(), 'td-'));
  let driver: Driver;
  try {
    driver = await Driver.open({ dataDir, config: { allow: allowList, ...more }, ...opts });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    driver,
    dataDir,
    async cleanup() {
      for (const info of driver.list()) {
        if (info.state !== 'failed' && info.heldBy === undefined) await Promise.resolve().then(() => driver.get(info.id).kill()).catch(() => undefined);
      }
      await driver.close();
      // A safety net, loud: nothing of this driver may outlive the test (a leak is a bug to see).
      const left = processesMentioning(dataDir);
      if (left.length > 0) {
        console.warn(`test cleanup: ${left.length} process(es) still mention ${dataDir}; killing them`);
        killGone(left);
      }
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Pids of live processes whose command line mentions `needle` (to prove nothing is left). */
/** SIGKILLs each pid; one that ended since it was listed (ESRCH) is already what cleanup wants. */
export function killGone(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
    }
  }
}

export function processesMentioning(needle: string): number[] {
  return findProcesses((cmdline) => cmdline.includes(needle));
}
