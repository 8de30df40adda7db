/**
 * How far one serving host goes on this machine: a `tmux-drive serve` process with N idle bash
 * drives (100; --quick 20) and 20 clients in this process, each subscribed to every drive's feed
 * (journal events and output marks). Measured: the host's CPU and wakeups over an idle window
 * (baselines: the same host with no drive, then with the drives and no client), its memory per
 * drive (RSS growth / N; the tmux servers' RSS apart), and the fan-out latency when 20 drives
 * print at once: from the send to each client's output mark, with 1 subscribed client (the
 * baseline) and with 20.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isStartServerArgv } from '../lib/control/tmux-commands.js';
import { Client } from '../lib/client/client.js';
import { findProcesses } from '../backends/process/process-tree.js';
import { serveDir, startServe } from '../tools/serve-host.js';
import { ratioVerdict, type Benchmark, type BenchResult } from './benchmark.js';
import { percentiles } from './percentiles.js';
import { cpuMs, wakeups } from './proc-usage.js';
import { sleep } from './sleep.js';

const CLIENTS = 20;
const PRINTING = 20;

function rssKb(pid: number): number {
  try {
    return Number(/^VmRSS:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'latin1'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

/** The host's CPU (ms per s) and main-thread wakeups (per s) over `seconds`. */
async function idleWindow(pid: number, seconds: number): Promise<{ cpu: number; wakeups: number }> {
  const c0 = cpuMs([pid]);
  const w0 = wakeups([pid]);
  await sleep(seconds * 1000);
  return { cpu: (cpuMs([pid]) - c0) / seconds, wakeups: (wakeups([pid]) - w0) / seconds };
}

/**
 * Waits until the host has settled (a 1 s window under 2 ms of CPU, at most `maxS` seconds): work
 * that setup started (creations, thousands of subscriptions replaying their journals) is not idle
 * cost. Returns the seconds it took.
 */
async function settle(pid: number, maxS: number): Promise<number> {
  for (let s = 1; s <= maxS; s++) if ((await idleWindow(pid, 1)).cpu < 2) return s;
  return maxS;
}

/**
 * Each round: PRINTING drives echo at once; the delay from the send to each listening client's
 * first output mark after it. The listeners are on (subscribed) before the first round.
 */
async function fanOut(owner: Client, listeners: readonly Client[], drives: readonly string[], rounds: number): Promise<number[]> {
  const latencies: number[] = [];
  let sentAt = new Map<string, number>();
  let waiting = new Set<string>();
  let allIn: () => void = () => undefined;
  const subs = listeners.flatMap((c, ci) =>
    drives.map((d) =>
      c.drive(d).on('output', () => {
        const t = sentAt.get(d);
        const key = `${ci}/${d}`;
        if (t === undefined || !waiting.delete(key)) return;
        latencies.push(performance.now() - t);
        if (waiting.size === 0) allIn();
      }),
    ),
  );
  await sleep(1000); // the subscriptions are made
  for (let r = 0; r < rounds; r++) {
    sentAt = new Map();
    waiting = new Set(listeners.flatMap((_, ci) => drives.map((d) => `${ci}/${d}`)));
    const done = new Promise<void>((ok) => (allIn = ok));
    await Promise.all(
      drives.map((d) => {
        sentAt.set(d, performance.now());
        return owner.drive(d).sendText(`echo fan-${r}`, { submit: true });
      }),
    );
    await Promise.race([done, sleep(10_000)]);
    sentAt = new Map();
    await sleep(500);
  }
  for (const s of subs) s.dispose();
  return latencies;
}

export const serveScale: Benchmark = {
  name: 'serve-scale',
  summary: 'one serving host: 100 idle drives and 20 subscribed clients (idle CPU, memory per drive, fan-out latency)',
  async run({ quick, log }): Promise<BenchResult> {
    const n = quick ? 20 : 100;
    const window = quick ? 3 : 5;
    const rounds = quick ? 3 : 5;
    const dir = serveDir(n + 1);
    const clients: Client[] = [];
    const host = startServe(dir, false);
    try {
      await host.ready;
      const owner = await Client.connect(dir.dataDir);
      clients.push(owner);
      await sleep(500);
      const empty = await idleWindow(host.pid, window);
      const rss0 = rssKb(host.pid);
      log(`serve-scale: creating ${n} drives`);
      const names = Array.from({ length: n }, (_, i) => `i${i}`);
      for (let i = 0; i < n; i += 4) {
        await Promise.all(names.slice(i, i + 4).map(async (name) => (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' })));
      }
      const settledDrives = await settle(host.pid, 30);
      const rss1 = rssKb(host.pid);
      const sockets = names.map((name) => join(dir.dataDir, 'tmux', `${name}.sock`));
      const servers = findProcesses((cmdline) => sockets.some((socket) => isStartServerArgv(cmdline.split('\0'), socket)));
      const serverRss = servers.reduce((a, pid) => a + rssKb(pid), 0);
      const drivesIdle = await idleWindow(host.pid, window);

      const printing = names.slice(0, PRINTING);
      const first = await Client.connect(dir.dataDir);
      clients.push(first);
      log('serve-scale: fan-out to 1 client');
      const one = await fanOut(owner, [first], printing, rounds);
      log(`serve-scale: ${CLIENTS} clients subscribing to all ${n} drives`);
      const subscribed: Client[] = [first];
      for (let i = 1; i < CLIENTS; i++) {
        const c = await Client.connect(dir.dataDir);
        clients.push(c);
        subscribed.push(c);
      }
      const keep = subscribed.flatMap((c) => names.flatMap((d) => [c.drive(d).on('journal', () => undefined), c.drive(d).on('output', () => undefined)]));
      const settledClients = await settle(host.pid, 60);
      const rss2 = rssKb(host.pid);
      const subscribedIdle = await idleWindow(host.pid, window);
      log(`serve-scale: fan-out to ${CLIENTS} clients`);
      const twenty = await fanOut(owner, subscribed, printing, rounds);
      for (const k of keep) k.dispose();
      for (const d of names) await owner.drive(d).kill();

      const f1 = percentiles(one);
      const f20 = percentiles(twenty);
      const perDriveKb = (rss1 - rss0) / n;
      return {
        name: 'serve-scale',
        workload: `a serve process, ${n} idle bash drives (sandboxed), ${CLIENTS} clients each subscribed to every drive (journal + output marks); idle windows of ${window} s; fan-out: ${PRINTING} drives echo at once, ${rounds} rounds`,
        columns: ['host CPU ms/s', 'host wakeups/s', 'host RSS MiB', 'fan-out p50 ms', 'fan-out p99 ms'],
        rows: [
          { subject: 'host, no drive', baseline: true, values: [empty.cpu, empty.wakeups, rss0 / 1024, null, null] },
          { subject: `host, ${n} idle drives`, baseline: false, values: [drivesIdle.cpu, drivesIdle.wakeups, rss1 / 1024, null, null] },
          { subject: `fan-out to 1 client (${PRINTING} drives print)`, baseline: true, values: [null, null, null, f1.p50, f1.p99] },
          { subject: `host, ${n} drives, ${CLIENTS} subscribed clients`, baseline: false, values: [subscribedIdle.cpu, subscribedIdle.wakeups, rss2 / 1024, f20.p50, f20.p99] },
        ],
        verdicts: [
          { label: `host CPU idle with ${n} drives and ${CLIENTS} clients`, value: subscribedIdle.cpu, unit: 'ms/s', target: '≈ 0 (≤ 5 ms/s)', met: subscribedIdle.cpu <= 5 },
          { label: 'host memory per drive', value: perDriveKb / 1024, unit: 'MiB' },
          { label: 'tmux server memory per drive', value: serverRss / Math.max(1, servers.length) / 1024, unit: 'MiB' },
          { label: `host memory for ${CLIENTS} clients × ${n} subscriptions`, value: (rss2 - rss1) / 1024, unit: 'MiB' },
          ratioVerdict(`fan-out p50: ${CLIENTS} clients / 1 client`, f20.p50 / f1.p50),
        ],
        notes: [`the host settled ${settledDrives} s after the creations and ${settledClients} s after the subscriptions before its idle windows`, `${servers.length} tmux servers counted; fan-out latency includes the send (owner → host → tmux → bash → output → mark → client), ${twenty.length} samples with ${CLIENTS} clients`],
        detail: { settledDrives, settledClients, empty, drivesIdle, subscribedIdle, rss: [rss0, rss1, rss2], serverRss, one: f1, twenty: f20 },
      };
    } finally {
      for (const c of clients) await c.close();
      await host.kill('SIGTERM');
      dir.remove();
    }
  },
};
