/**
 * Runs the benchmarks: `node dist/bench/run.js [--quick] [--only name[,name]]`. Prints one table
 * per benchmark and writes bench/results/latest.json with the machine it ran on. Every figure is
 * compared with a baseline measured in this same run (STYLE.md §10).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { Benchmark, BenchResult } from './benchmark.js';
import { echoLatency } from './echo-latency.js';
import { throughput } from './throughput.js';
import { manyStreams } from './many-streams.js';
import { idleCpu } from './idle-cpu.js';
import { settleLatency } from './settle-latency.js';
import { journalAppend } from './journal-append.js';
import { reattach } from './reattach.js';
import { formatTable } from './format-table.js';
import { launchCost } from './launch-cost.js';
import { sshBench } from './ssh.js';
import { fidelityCheck } from './fidelity-check.js';
import { serveCall } from './serve-call.js';
import { serveTakeover } from './serve-takeover.js';
import { serveScale } from './serve-scale.js';
import { consoleBench } from './console.js';
import { machineInfo } from './machine-info.js';
import { runAllTeardowns } from './teardown.js';

const BENCHMARKS: readonly Benchmark[] = [echoLatency, throughput, manyStreams, idleCpu, settleLatency, journalAppend, reattach, launchCost, sshBench, fidelityCheck, serveCall, serveTakeover, serveScale, consoleBench];

/** bench/results in the source tree, also when run from dist/bench. */
function resultsDir(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const root = here.split('/').includes('dist') ? resolve(here, '..', '..') : resolve(here, '..');
  return join(root, 'bench', 'results');
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      only: { type: 'string', multiple: true },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`usage: node dist/bench/run.js [--quick] [--only <name>[,<name>…]]\nbenchmarks:\n${BENCHMARKS.map((b) => `  ${b.name.padEnd(16)} ${b.summary}`).join('\n')}\n`);
    return 0;
  }
  const only = (values.only ?? []).flatMap((v) => v.split(',')).map((v) => v.trim()).filter(Boolean);
  const unknown = only.filter((n) => !BENCHMARKS.some((b) => b.name === n));
  if (unknown.length > 0) {
    process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHMARKS.map((b) => b.name).join(', ')}\n`);
    return 2;
  }
  const selected = only.length > 0 ? BENCHMARKS.filter((b) => only.includes(b.name)) : BENCHMARKS;
  const quick = values.quick ?? false;
  const log = (message: string): void => void process.stderr.write(`[bench] ${message}\n`);
  const machine = machineInfo();
  process.stdout.write(`tmux-drive benchmarks${quick ? ' (--quick)' : ''}: ${machine.cpuModel}, ${machine.cores} cores, node ${machine.node}, ${machine.tmux}, load ${machine.loadAverageAtStart}, ${machine.date}\n\n`);

  const results: Array<BenchResult & { durationMs: number }> = [];
  const failures: Array<{ name: string; error: string; durationMs: number }> = [];
  const started = performance.now();
  for (const bench of selected) {
    const t0 = performance.now();
    log(`${bench.name}: ${bench.summary}`);
    try {
      const result = await bench.run({ quick, log });
      const durationMs = Math.round(performance.now() - t0);
      results.push({ ...result, durationMs });
      process.stdout.write(`${formatTable(result)}\n  (${(durationMs / 1000).toFixed(1)} s)\n\n`);
    } catch (err) {
      const durationMs = Math.round(performance.now() - t0);
      const error = err instanceof Error ? (err.stack ?? err.message) : String(err);
      failures.push({ name: bench.name, error, durationMs });
      process.stdout.write(`== ${bench.name} == FAILED after ${(durationMs / 1000).toFixed(1)} s\n${error}\n\n`);
    }
  }
  const totalMs = Math.round(performance.now() - started);
  const dir = resultsDir();
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'latest.json');
  writeFileSync(file, `${JSON.stringify({ machine, options: { quick, only }, totalMs, results, failures }, null, 2)}\n`);
  process.stdout.write(`total ${(totalMs / 1000).toFixed(1)} s; wrote ${file}\n`);
  return failures.length > 0 ? 1 : 0;
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    process.stderr.write(`[bench] ${signal}: cleaning up\n`);
    void runAllTeardowns().finally(() => process.exit(130));
  });
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
