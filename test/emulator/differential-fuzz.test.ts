/**
 * The mirror against tmux 3.3a for bytes a program chooses: generated output streams
 * (tools/output-cases.ts) shown to a real tmux pane and to the library's mirror through control
 * mode, compared cell by cell (characters, widths, attributes), cursor (position and visibility),
 * alternate screen and history (tools/tmux-lab.ts). A divergence is shrunk by fast-check and
 * printed; each class the fuzzer found is kept in fixtures/mirror-divergence/ as its smallest
 * reproduction and must stay fixed. More cases: `npm run fuzz -- --cases N --seed S`.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCampaign, type DivergenceFixture } from '../../tools/differential-fuzz.js';
import { caseBytes, escapeBytes, OUTPUT_CASE_SIZES, unescapeBytes } from '../../tools/output-cases.js';
import { TmuxLab } from '../../tools/tmux-lab.js';

/** The seed set of `npm test`: fixed, so a failure here is a regression, not luck. */
const SEED = 20261201;
const CASES = Number(process.env.FUZZ_CASES ?? 300);

const FIXTURES = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'mirror-divergence');
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .sort()
  .map((f) => JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as DivergenceFixture & { readonly file?: string });

let lab: TmuxLab;
beforeAll(async () => {
  lab = await TmuxLab.start({ sizes: [...OUTPUT_CASE_SIZES, ...fixtures.map((f) => [f.cols, f.rows] as const)] });
});
afterAll(async () => {
  await lab?.close();
});

describe('every divergence class the fuzzer found stays fixed (fixtures/mirror-divergence)', () => {
  it('the fixtures are named after their class and say what tmux does', () => {
    expect(fixtures.length).toBeGreaterThan(0);
    for (const f of fixtures) {
      expect(f.class).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
      expect(f.summary.length).toBeGreaterThan(20);
      expect(escapeBytes(unescapeBytes(f.bytes))).toBe(f.bytes);
    }
  });

  it.each(fixtures.map((f) => [f.class, f] as const))('%s', async (_name, f) => {
    const d = await lab.runCase({ cols: f.cols, rows: f.rows, bytes: unescapeBytes(f.bytes) });
    expect(d).toMatchObject({ equal: true, cellMismatches: [] });
  });
});

describe(`generated output, seed ${SEED}`, () => {
  it(`${CASES} cases show no divergence from tmux`, async () => {
    const result = await runCampaign(lab, { seed: SEED, cases: CASES, concurrency: 6, shrinkLimit: 2, shrinkTimeMs: 60_000 });
    const found = result.findings.map((f) => ({ case: f.index, cols: f.shrunk.cols, rows: f.shrunk.rows, bytes: escapeBytes(caseBytes(f.shrunk)), divergence: f.divergence }));
    expect(result.errors).toEqual([]);
    expect(found).toEqual([]);
    expect(result.clean).toBe(CASES);
  }, 600_000);
});
