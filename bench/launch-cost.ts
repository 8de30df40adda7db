/**
 * Launch cost of a sandboxed drive vs an unsandboxed one: create() → the first prompt on the
 * mirror, alternating the two in one run (the unsandboxed driver comes from an operator config file
 * with unsafeDisableSandbox, the only way to get one).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver } from '../lib/index.js';
import { ratioVerdict, type Benchmark, type BenchResult } from './benchmark.js';
import { percentile } from './percentiles.js';

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

async function openDriver(dir: string, sandbox: boolean): Promise<Driver> {
  const config = { allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }], ...(sandbox ? {} : { unsafeDisableSandbox: true }) };
  const file = join(dir, 'config.json');
  writeFileSync(file, JSON.stringify(config));
  return Driver.open({ dataDir: join(dir, 'data'), config: file });
}

async function launchOnce(d: Driver): Promise<number> {
  const t0 = performance.now();
  const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'] });
  const r = await s.wait({ forText: '$ ', timeoutMs: 10_000 });
  const ms = performance.now() - t0;
  await s.kill();
  if (r.outcome !== 'text') throw new Error(`no prompt (${r.outcome})`);
  return ms;
}

export const launchCost: Benchmark = {
  name: 'launch-cost',
  summary: 'create() → first prompt, sandboxed (bwrap) vs unsandboxed, alternating in one run',
  async run({ quick, log }): Promise<BenchResult> {
    const n = quick ? 5 : 20;
    const a = mkdtempSync(join(tmpdir(), 'tdl-'));
    const b = mkdtempSync(join(tmpdir(), 'tdl-'));
    const sandboxed = await openDriver(a, true);
    const bare = await openDriver(b, false);
    try {
      const withJail: number[] = [];
      const without: number[] = [];
      await launchOnce(sandboxed); // warm both paths once (page cache, first tmux exec)
      await launchOnce(bare);
      for (let i = 0; i < n; i++) {
        withJail.push(await launchOnce(sandboxed));
        without.push(await launchOnce(bare));
      }
      log(`launch-cost: ${n} launches each`);
      const sorted = (v: number[]): number[] => [...v].sort((x, y) => x - y);
      const row = (v: number[]) => [percentile(sorted(v), 50), percentile(sorted(v), 90), Math.max(...v)];
      const p50 = percentile(sorted(withJail), 50) / percentile(sorted(without), 50);
      return {
        name: 'launch-cost',
        workload: `${n} launches each of bash --norc to its prompt, alternating, 80x24`,
        columns: ['p50 ms', 'p90 ms', 'max ms'],
        rows: [
          { subject: 'sandboxed (bwrap: own namespaces, data dir masked, caps dropped)', baseline: false, values: row(withJail) },
          { subject: 'unsandboxed (unsafeDisableSandbox, env still scrubbed)', baseline: true, values: row(without) },
        ],
        verdicts: [ratioVerdict('sandboxed / unsandboxed, p50', p50), { label: 'sandbox cost at p50', value: percentile(sorted(withJail), 50) - percentile(sorted(without), 50), unit: 'ms' }],
        notes: ['each launch: generated tmux config, start-server, control client attach, resync, first prompt on the mirror'],
      };
    } finally {
      await sandboxed.close();
      await bare.close();
      rmSync(a, { recursive: true, force: true });
      rmSync(b, { recursive: true, force: true });
    }
  },
};
