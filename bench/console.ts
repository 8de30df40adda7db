/**
 * The web console's cost (issue 15): a serving host in this process with 20 drives producing
 * output (python printing a wall-clock stamp every 50 ms), and Debian's chromium (playwright-core)
 * on its console.
 *
 * - Live-update latency, pane byte → the browser terminal's buffer: each stamp the drive page's
 *   xterm.js shows for the first time, Date.now() in the page minus the stamp. Baseline in the
 *   same run: the same stamps as the host itself first sees them (the session's output event),
 *   pane byte → host. The console's share is the difference; the ratio is console / host.
 * - The host's extra CPU per open console: this process's CPU per second over equal windows with
 *   no console open (the baseline: the 20 drives alone), one table, one drive page, and three
 *   drive pages (per page = the difference / 3). The browser's own CPU is not the host's.
 */
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Benchmark, type BenchOptions, type BenchResult, ratioVerdict } from './benchmark.js';
import { percentiles, type Percentiles } from './percentiles.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';

const DRIVES = 20;
const CHROMIUM = '/usr/bin/chromium';
const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };
/** Prints "M <ms since the epoch>" every 50 ms, unbuffered. */
const STAMPER = 'import time\nwhile True:\n    print("M %.3f" % (time.time() * 1000), flush=True)\n    time.sleep(0.05)\n';
const STAMP = /M (\d{13}\.\d{3})/g;

/** Runs in the page: records, for each stamp the terminal shows for the first time, how old it is. */
const PAGE_PROBE = `(() => {
  const term = window.tmuxDriveTerminal;
  const seen = new Set();
  const lat = [];
  let first = true;
  window.__stampLatencies = lat;
  term.onWriteParsed(() => {
    const now = Date.now();
    const b = term.buffer.active;
    for (let i = 0; i < b.length; i++) {
      const text = b.getLine(i)?.translateToString(true) ?? '';
      const m = /^M (\\d{13}\\.\\d{3})$/.exec(text);
      if (!m || seen.has(m[1])) continue;
      seen.add(m[1]);
      if (!first) lat.push(now - Number(m[1]));
    }
    first = false;
  });
})()`;

function cpuWindow(ms: number): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  return sleep(ms).then(() => {
    const c = process.cpuUsage(c0);
    return (c.user + c.system) / 1000 / ((performance.now() - t0) / 1000);
  });
}

export const consoleBench: Benchmark = {
  name: 'console',
  summary: `web console: pane byte → browser terminal latency with ${DRIVES} drives printing, host CPU per open console`,
  async run(opts: BenchOptions): Promise<BenchResult> {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install chromium`);
    const windowMs = opts.quick ? 3000 : 10_000;
    return withTeardown(opts.log, async (teardown) => {
      const { serve } = await import('../lib/serve/serve.js');
      const { ConsoleServer } = await import('../lib/console/console-server.js');
      const { chromium } = await import('playwright-core');
      const dir = mkdtempSync(join(tmpdir(), 'tdc-'));
      teardown.add('data dir', () => rmSync(dir, { recursive: true, force: true }));
      const host = await serve({
        dataDir: join(dir, 'data'),
        config: { worker: { maxSessions: DRIVES + 2 }, allow: [{ id: 'python3', match: { path: '/usr/bin/python3' }, consent: CONSENT }] },
        console: ConsoleServer.at('127.0.0.1:0'),
      });
      teardown.add('host', () => host.close());
      const names = Array.from({ length: DRIVES }, (_, i) => `out${String(i).padStart(2, '0')}`);
      teardown.add('drives', async () => {
        for (const n of names) await Promise.resolve().then(() => host.driver.get(n).kill()).catch(() => undefined);
      });
      for (let i = 0; i < names.length; i += 4) {
        await Promise.all(names.slice(i, i + 4).map((name) => host.driver.create({ allowId: 'python3', name, args: ['-c', STAMPER] }).then((s) => s.wait({ forText: 'M ', timeoutMs: 15_000 }))));
      }
      opts.log(`console: ${DRIVES} drives printing; host CPU baseline window (no console) ${windowMs} ms`);
      await sleep(1000);
      const cpuNone = await cpuWindow(windowMs);

      const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
      teardown.add('browser', () => browser.close());
      const context = await browser.newContext({ extraHTTPHeaders: { Authorization: `Bearer ${readFileSync(join(host.paths.dataDir, 'serve', 'owner.token'), 'utf8').trim()}` } });
      const base = host.console?.url as string;

      const table = await context.newPage();
      await table.goto(base);
      await table.waitForSelector(`tr[data-drive="${names[DRIVES - 1]}"]`);
      await sleep(500);
      opts.log('console: one table open');
      const cpuTable = await cpuWindow(windowMs);
      await table.close();

      // Host baseline: the stamps of drive 0 as the host first sees them.
      const hostLat: number[] = [];
      const decoder = new TextDecoder();
      const watched = host.driver.get(names[0] as string);
      let hostOn = false;
      const off = watched.on('output', (data) => {
        if (!hostOn) return;
        const now = Date.now();
        for (const m of decoder.decode(data, { stream: true }).matchAll(STAMP)) hostLat.push(now - Number(m[1]));
      });
      teardown.add('output listener', () => off.dispose());

      const page = await context.newPage();
      await page.goto(`${base}drive/${names[0]}`);
      await page.waitForFunction(() => (window as unknown as { tmuxDriveTerminal?: unknown }).tmuxDriveTerminal !== undefined);
      await page.evaluate(PAGE_PROBE);
      hostOn = true;
      opts.log('console: one drive page open (latency samples and CPU)');
      const cpuOnePage = await cpuWindow(windowMs);
      hostOn = false;
      const pageLat = (await page.evaluate(() => (window as unknown as { __stampLatencies: number[] }).__stampLatencies)).slice();

      const more = await Promise.all([1, 2].map(async (i) => {
        const p = await context.newPage();
        await p.goto(`${base}drive/${names[i]}`);
        return p;
      }));
      await sleep(500);
      opts.log('console: three drive pages open');
      const cpuThreePages = await cpuWindow(windowMs);
      for (const p of [page, ...more]) await p.close();

      const browserP = percentiles(pageLat);
      const hostP = percentiles(hostLat);
      const row = (p: Percentiles): number[] => [p.n, p.p50, p.p90, p.p99, p.max];
      const perPage = (cpuThreePages - cpuNone) / 3;
      return {
        name: 'console',
        workload: `${DRIVES} python drives printing a stamp every 50 ms (${DRIVES * 20} lines/s), 80x24; drive page on one of them; ${windowMs / 1000} s windows`,
        columns: ['samples', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
        rows: [
          { subject: 'pane byte → browser terminal buffer (drive page)', baseline: false, values: row(browserP) },
          { subject: 'baseline: pane byte → host (session output event)', baseline: true, values: row(hostP) },
        ],
        verdicts: [
          ratioVerdict('browser p50 / host p50', browserP.p50 / Math.max(hostP.p50, 0.5)),
          { label: 'console share of the latency, p50 (browser − host)', value: browserP.p50 - hostP.p50, unit: 'ms', target: '≤ 50 ms', met: browserP.p50 - hostP.p50 <= 50 },
          { label: 'console p99 (browser − host)', value: browserP.p99 - hostP.p99, unit: 'ms' },
          { label: 'host CPU, no console (baseline)', value: cpuNone, unit: 'ms/s' },
          { label: 'host CPU extra, one table open', value: cpuTable - cpuNone, unit: 'ms/s' },
          { label: 'host CPU extra, one drive page open', value: cpuOnePage - cpuNone, unit: 'ms/s' },
          { label: 'host CPU extra per drive page (3 open)', value: perPage, unit: 'ms/s', target: '≤ 50 ms/s (5% of a core)', met: perPage <= 50 },
          ratioVerdict('host CPU, 3 drive pages / no console', cpuThreePages / cpuNone),
        ],
        notes: [
          'ms/s = ms of host CPU per second of wall time (1000 = one core); the browser runs in its own processes and is not counted',
          'a drive page gets frames (the serialized screen), at most one per 16 ms and one in flight: latency includes that pacing',
          'stamps are wall-clock (python time.time in the drive, Date.now in the host and the page, one machine)',
        ],
        detail: { pageLatencies: pageLat, hostLatencies: hostLat, cpu: { none: cpuNone, table: cpuTable, onePage: cpuOnePage, threePages: cpuThreePages } },
      };
    });
  },
};
