/**
 * A call through the serving host against the same call in-process. In this process: a host
 * serving one bash drive, a connected Client, and the host's own Session; `read` (digest of the
 * screen) timed both ways, alternating. Then whole `tmux-drive read` processes: through a serving
 * host (a thin client: connect, hello, one call) and with no host (the CLI opens the data dir
 * itself and re-attaches the drive), against `node -e ''` (the process start both pay).
 */
import { spawn } from 'node:child_process';
import { serve } from '../lib/serve/serve.js';
import { Client } from '../lib/client/client.js';
import { CLI, serveDir } from '../tools/serve-host.js';
import { ratioVerdict, type Benchmark, type BenchResult } from './benchmark.js';
import { percentiles } from './percentiles.js';

function run(argv: readonly string[]): Promise<number> {
  return new Promise((ok, fail) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, argv, { stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('error', fail);
    child.once('exit', (code) => (code === 0 ? ok(performance.now() - t0) : fail(new Error(`${argv.join(' ')} exited ${code}: ${err.slice(0, 300)}`))));
  });
}

async function processSamples(argv: readonly string[], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await run(argv));
  return out;
}

export const serveCall: Benchmark = {
  name: 'serve-call',
  summary: 'read through the serving host (socket round trip; whole CLI process) vs in-process',
  async run({ quick, log }): Promise<BenchResult> {
    const calls = quick ? 100 : 500;
    const procs = quick ? 5 : 15;
    const dir = serveDir(4);
    try {
      const host = await serve({ dataDir: dir.dataDir, config: dir.config });
      const client = await Client.connect(dir.dataDir);
      const remote = await client.create({ allowId: 'bash', name: 'b', args: ['--norc', '--noprofile'] });
      await remote.wait({ forText: '$ ' });
      await remote.sendText('seq 1 20', { submit: true });
      await remote.wait({ forText: /^20$/m });
      const local = host.driver.get('b');
      log(`serve-call: ${calls} reads each way`);
      const socket: number[] = [];
      const inProcess: number[] = [];
      for (let i = 0; i < 20; i++) {
        await remote.read();
        local.read({ caller: 'bench' });
      }
      for (let i = 0; i < calls; i++) {
        let t0 = performance.now();
        await remote.read();
        socket.push(performance.now() - t0);
        t0 = performance.now();
        local.read({ caller: 'bench' });
        inProcess.push(performance.now() - t0);
      }
      const cli = [CLI, ...dir.args, 'read', 'b'];
      log(`serve-call: ${procs} tmux-drive read processes through the host`);
      const cliHost = await processSamples(cli, procs);
      await client.close();
      await host.close();
      log(`serve-call: ${procs} tmux-drive read processes with no host (each re-attaches)`);
      const cliAlone = await processSamples(cli, procs);
      const nodeOnly = await processSamples(['-e', ''], procs);
      // The drive outlived the host; end it in-process.
      const { Driver } = await import('../lib/driver/driver.js');
      const d = await Driver.open({ dataDir: dir.dataDir, config: dir.config, reattach: 'all' });
      await d.get('b').kill();
      await d.close();

      const s = percentiles(socket);
      const ip = percentiles(inProcess);
      const ch = percentiles(cliHost);
      const ca = percentiles(cliAlone);
      const nd = percentiles(nodeOnly);
      return {
        name: 'serve-call',
        workload: `one bash drive (80x24, 22 lines of output), read digest; ${calls} calls each way, ${procs} processes each`,
        columns: ['p50 ms', 'p90 ms', 'p99 ms'],
        rows: [
          { subject: 'session.read() in the host process', baseline: true, values: [ip.p50, ip.p90, ip.p99] },
          { subject: 'client.read() through the socket', baseline: false, values: [s.p50, s.p90, s.p99] },
          { subject: "node -e '' (process start)", baseline: true, values: [nd.p50, nd.p90, nd.p99] },
          { subject: 'tmux-drive read, a host serves', baseline: false, values: [ch.p50, ch.p90, ch.p99] },
          { subject: 'tmux-drive read, no host (re-attach)', baseline: false, values: [ca.p50, ca.p90, ca.p99] },
        ],
        verdicts: [
          { label: 'read round trip through the socket p50', value: s.p50, unit: 'ms', target: '≤ 5 ms', met: s.p50 <= 5 },
          ratioVerdict('socket / in-process p50', s.p50 / ip.p50),
          ratioVerdict('CLI read: no host / through the host p50', ca.p50 / ch.p50, { text: '> 1', ok: (v) => v > 1 }),
          ratioVerdict('CLI read through the host / node start p50', ch.p50 / nd.p50),
        ],
        notes: ['the socket path: JSON line out, gate (token, scope, schema), Session.read, redaction, JSON line back', 'CLI rows include loading the CLI modules; the no-host row also opens the journal and re-attaches the drive'],
        detail: { socket: s, inProcess: ip, cliHost: ch, cliAlone: ca, nodeOnly: nd },
      };
    } finally {
      dir.remove();
    }
  },
};
