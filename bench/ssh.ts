/**
 * Remote drives over ssh vs local, in one run: keystroke → mirrored echo (one 'x' into bash at
 * its prompt, from sendText to the mirror's cursor row showing it) and bulk throughput (a program
 * printing N bytes of base64, from the command to its end marker on the mirror). The remote is a
 * private sshd on 127.0.0.1 (bench/loopback-sshd.ts), so the figures are the cost of the
 * ssh channel (crypto, mux, the extra hops), not of a network.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver, type Session } from '../lib/index.js';
import { SshHost } from '../backends/ssh/ssh-host.js';
import { startSshd, sshdMissing } from './loopback-sshd.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { percentiles } from './percentiles.js';

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

function cursorRow(s: Session): string {
  const screen = s.read();
  return screen.content.split('\n')[screen.cursor.y] ?? '';
}

async function until(cond: () => boolean, timeoutMs: number, what?: () => string): Promise<void> {
  const end = performance.now() + timeoutMs;
  while (!cond()) {
    if (performance.now() > end) throw new Error(`timed out${what ? `: ${what()}` : ''}`);
    await new Promise((r) => setImmediate(r));
  }
}

async function echoSamples(s: Session, keys: number): Promise<number[]> {
  const out: number[] = [];
  for (let block = 0; block < Math.ceil(keys / 40); block++) {
    const base = cursorRow(s).padEnd(s.read().cursor.x).slice(0, s.read().cursor.x);
    for (let i = 1; i <= 40 && out.length < keys; i++) {
      const want = `${base}${'x'.repeat(i)}`;
      const t0 = performance.now();
      await s.sendText('x', { paste: 'never' });
      await until(() => cursorRow(s).trimEnd() === want, 5000, () => JSON.stringify([want, cursorRow(s), s.read().cursor]));
      out.push(performance.now() - t0);
    }
    await s.sendKeys(['C-u']);
    await until(() => cursorRow(s).trimEnd() === base.trimEnd(), 5000);
  }
  return out;
}

async function bulk(s: Session, bytes: number): Promise<number> {
  const t0 = performance.now();
  await s.sendText(`head -c ${bytes} /dev/zero | base64 -w 100; echo BULK-$((6 * 7))`, { submit: true });
  const r = await s.wait({ forText: /^BULK-42$/m, timeoutMs: 120_000 });
  if (r.outcome !== 'text') throw new Error(`bulk: ${r.outcome}`);
  const seconds = (performance.now() - t0) / 1000;
  return (bytes * 4) / 3 / 1e6 / seconds;
}

export const sshBench: Benchmark = {
  name: 'ssh',
  summary: 'remote drive over one ssh channel (loopback sshd) vs local: keystroke echo and bulk throughput',
  async run(options: BenchOptions): Promise<BenchResult> {
    const missing = sshdMissing();
    if (missing) throw new Error(`ssh bench needs sshd: ${missing}`);
    const keys = options.quick ? 80 : 400;
    const bytes = options.quick ? 3_000_000 : 15_000_000;
    const sshd = await startSshd();
    const dataDir = mkdtempSync(join(tmpdir(), 'td-'));
    const remoteDir = mkdtempSync(join(tmpdir(), 'tdr-'));
    const hostCfg = { id: 'lo', ssh: { host: '127.0.0.1', user: 'root', port: sshd.port, identityFile: sshd.identityFile, options: sshd.options }, dataDir: remoteDir };
    const bash = { match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT };
    const driver = await Driver.open({ dataDir, config: { hosts: [hostCfg], allow: [{ id: 'local', ...bash }, { id: 'remote', host: 'lo', ...bash }] } });
    try {
      const result: Record<string, { echo: number[]; mbps: number[] }> = {};
      for (const where of ['local', 'remote'] as const) {
        options.log(`ssh: ${where} drive`);
        const s = await driver.create({ allowId: where, args: ['--norc', '--noprofile'], cols: 120, rows: 40 });
        await s.wait({ forText: '$ ', timeoutMs: 15_000 });
        await echoSamples(s, 20); // warm-up
        const echo = await echoSamples(s, keys);
        const mbps = [await bulk(s, bytes), await bulk(s, bytes)];
        result[where] = { echo, mbps };
        await s.kill();
      }
      const l = percentiles(result.local!.echo);
      const r = percentiles(result.remote!.echo);
      const lt = Math.max(...result.local!.mbps);
      const rt = Math.max(...result.remote!.mbps);
      return {
        name: 'ssh',
        workload: `${keys} keystrokes into bash at its prompt, then 2× ${(bytes / 1e6).toFixed(0)} MB of zeros as base64 (100-col lines), 120×40; remote = sshd on 127.0.0.1 over one ControlMaster`,
        columns: ['echo p50 ms', 'echo p90 ms', 'echo p99 ms', 'bulk MB/s (best of 2)'],
        rows: [
          { subject: 'local drive (tmux control mode over pipes)', baseline: true, values: [l.p50, l.p90, l.p99, lt] },
          { subject: 'remote drive (tmux control mode over ssh mux channel)', baseline: false, values: [r.p50, r.p90, r.p99, rt] },
        ],
        verdicts: [ratioVerdict('remote echo p50 / local echo p50', r.p50 / l.p50), ratioVerdict('remote bulk / local bulk', rt / lt)],
        notes: ['loopback: no network latency; a real link adds its RTT to every keystroke echo'],
        detail: result,
      };
    } finally {
      await driver.close();
      await new SshHost(hostCfg, dataDir, 5000).stopMaster().catch(() => undefined);
      await sshd.stop();
      rmSync(dataDir, { recursive: true, force: true });
      rmSync(remoteDir, { recursive: true, force: true });
    }
  },
};
