/**
 * `npm run fuzz -- --cases N --seed S [--concurrency P] [--shrink K] [--out DIR]`: the
 * differential fuzzer of the mirror against real tmux (tools/differential-fuzz.ts). Prints how
 * many cases ran and how many diverged; each shrunk divergence is written to DIR as a fixture
 * candidate (`candidate-<hash>.json`, the format of test/emulator/fixtures/mirror-divergence/),
 * to be named after its class and kept as a regression test once fixed.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Fnv1a64 } from '../lib/common/fnv1a64.js';
import { runCampaign, type DivergenceFixture, type Finding } from './differential-fuzz.js';
import { caseBytes, escapeBytes, OUTPUT_CASE_SIZES, unescapeBytes } from './output-cases.js';
import { TmuxLab } from './tmux-lab.js';

function candidate(f: Finding): DivergenceFixture & { readonly divergence: unknown; readonly seedIndex: number } {
  return {
    class: '',
    summary: '',
    cols: f.shrunk.cols,
    rows: f.shrunk.rows,
    bytes: escapeBytes(caseBytes(f.shrunk)),
    seedIndex: f.index,
    divergence: f.divergence,
  };
}

/** `--replay FILE…`: runs fixture files (or candidates) against tmux and prints each verdict. */
async function replay(files: readonly string[]): Promise<number> {
  const fixtures = files.map((file) => ({ file, f: JSON.parse(readFileSync(file, 'utf8')) as DivergenceFixture }));
  const lab = await TmuxLab.start({ sizes: fixtures.map(({ f }) => [f.cols, f.rows] as const) });
  let failed = 0;
  try {
    for (const { file, f } of fixtures) {
      const d = await lab.runCase({ cols: f.cols, rows: f.rows, bytes: unescapeBytes(f.bytes) });
      if (!d.equal) failed++;
      process.stdout.write(`${d.equal ? 'same  ' : 'DIFFER'} ${file}${d.equal ? '' : `\n${JSON.stringify(d, null, 1)}`}\n`);
    }
  } finally {
    await lab.close();
  }
  return failed === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const { values, positionals } = parseArgs({
    options: {
      cases: { type: 'string', default: '1000' },
      seed: { type: 'string' },
      concurrency: { type: 'string', default: '6' },
      shrink: { type: 'string', default: '6' },
      out: { type: 'string', default: 'fuzz-findings' },
      replay: { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  if (values.replay) return replay(positionals);
  const seed = values.seed === undefined ? Date.now() % 2 ** 31 : Number(values.seed);
  const cases = Number(values.cases);
  if (!Number.isInteger(seed) || !Number.isInteger(cases) || cases < 1) {
    process.stderr.write('usage: fuzz --cases N --seed S [--concurrency P] [--shrink K] [--out DIR]\n');
    return 2;
  }
  const lab = await TmuxLab.start({ sizes: OUTPUT_CASE_SIZES });
  const started = performance.now();
  try {
    let lastReport = 0;
    const result = await runCampaign(lab, {
      seed,
      cases,
      concurrency: Number(values.concurrency),
      shrinkLimit: Number(values.shrink),
      onProgress: (done, divergent) => {
        if (done - lastReport >= 100 || done === cases) {
          lastReport = done;
          process.stderr.write(`${done}/${cases} cases, ${divergent} divergent\n`);
        }
      },
    });
    const seconds = ((performance.now() - started) / 1000).toFixed(1);
    process.stdout.write(`seed ${seed}: ${result.ran} cases in ${seconds} s, ${result.clean} with no divergence, ${result.ran - result.clean - result.errors.length} divergent, ${result.errors.length} not run; ${result.fastForwarded} fast-forwarded\n`);
    for (const e of result.errors.slice(0, 5)) process.stdout.write(`  not run: case ${e.index}: ${e.message}\n`);
    if (result.findings.length > 0) {
      const out = resolve(values.out as string);
      mkdirSync(out, { recursive: true });
      for (const f of result.findings) {
        const fixture = candidate(f);
        const h = new Fnv1a64();
        h.str(`${fixture.cols}x${fixture.rows}:${fixture.bytes}`);
        const file = join(out, `candidate-${h.hex().slice(0, 10)}.json`);
        writeFileSync(file, `${JSON.stringify(fixture, null, 2)}\n`);
        process.stdout.write(`  divergence (case ${f.index}) shrunk to ${fixture.cols}x${fixture.rows} "${fixture.bytes}" -> ${file}\n`);
      }
    }
    if (result.unshrunk.length > 0) process.stdout.write(`  ${result.unshrunk.length} more divergent case(s) not shrunk: ${result.unshrunk.slice(0, 20).join(', ')}\n`);
    return result.clean === result.ran ? 0 : 1;
  } finally {
    await lab.close();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  // Exit through process.exit so the lab's exit hook ends its tmux server.
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
  main().then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`fuzz: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
      process.exit(1);
    },
  );
}
