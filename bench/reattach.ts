/**
 * Re-attach after a host kill: a child host creates N bash drives and is killed with SIGKILL; a new
 * Driver.open in this process re-attaches them all. Compared with the time the same drives took to
 * create, in the same run.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Driver } from '../lib/index.js';
import { ratioVerdict, type Benchmark, type BenchResult } from './benchmark.js';

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

function config(n: number) {
  return { worker: { maxSessions: n + 1 }, allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }] };
}

/** Runs a host that creates `n` drives, reports the creation time, and waits to be killed. */
function hostCreating(dataDir: string, n: number): Promise<{ createMs: number; kill: () => Promise<void> }> {
  const dist = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'index.js');
  const script = `
    import { Driver } from ${JSON.stringify(dist)};
    const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(config(n))} });
    const t0 = performance.now();
    await Promise.all(Array.from({ length: ${n} }, async (_, i) => {
      const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'r' + i });
      await s.wait({ forText: '$ ' });
    }));
    process.stdout.write('CREATED ' + (performance.now() - t0) + '\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((ok, fail) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /CREATED ([\d.]+)/.exec(out);
      if (m) ok({ createMs: Number(m[1]), kill: () => new Promise((done) => (child.once('exit', () => done()), child.kill('SIGKILL'))) });
    });
    child.once('exit', (code) => fail(new Error(`host exited with ${code} before creating its drives`)));
  });
}

export const reattach: Benchmark = {
  name: 'reattach',
  summary: 'Driver.open re-attaching N live drives after the host was SIGKILLed, vs creating them',
  async run({ quick, log }): Promise<BenchResult> {
    const n = quick ? 10 : 50;
    const dataDir = mkdtempSync(join(tmpdir(), 'tdr-'));
    try {
      log(`reattach: a host creates ${n} drives`);
      const host = await hostCreating(dataDir, n);
      await host.kill();
      log('reattach: host killed; re-attaching');
      const t0 = performance.now();
      const d = await Driver.open({ dataDir, config: config(n) });
      const reattachMs = performance.now() - t0;
      const infos = d.list();
      const live = infos.filter((i) => i.state === 'live').length;
      let exact = 0;
      for (const info of infos) if (info.state === 'live' && (await d.get(info.id).fidelity()).equal) exact++;
      for (const info of infos) if (info.state === 'live') await d.get(info.id).kill();
      await d.close();
      return {
        name: 'reattach',
        workload: `${n} bash drives (sandboxed), host killed with SIGKILL, then Driver.open`,
        columns: ['total ms', 'per drive ms'],
        rows: [
          { subject: `create ${n} drives (to the prompt)`, baseline: true, values: [host.createMs, host.createMs / n] },
          { subject: `re-attach ${n} drives (Driver.open)`, baseline: false, values: [reattachMs, reattachMs / n] },
        ],
        verdicts: [
          { label: `re-attach of ${n}`, value: reattachMs, unit: 'ms', target: n === 50 ? '≤ 2000 ms' : '≤ 2000 ms for 50', met: reattachMs <= 2000 * (n / 50) },
          ratioVerdict('re-attach / create', reattachMs / host.createMs),
          { label: 'drives re-attached live', value: live, unit: `of ${n}`, target: `${n}`, met: live === n },
          { label: 'mirrors equal to tmux grid', value: exact, unit: `of ${n}`, target: `${n}`, met: exact === n },
        ],
        notes: ['each re-attach: stale control client ended, control client attached, mirror rebuilt from a capture'],
      };
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  },
};
