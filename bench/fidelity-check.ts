/**
 * What a check of the mirror against tmux's own grid would cost if it ran every time the screen
 * settles (docs/emulator.md, "A check at settle time"). For a full screen of coloured text at
 * 80x24 and 200x60:
 * - `session.fidelity()`: `capture-pane -p -e -N` and the cursor over the drive's control channel,
 *   then the cell-by-cell comparison (the whole check);
 * - the comparison alone, in process, against a capture taken once;
 * - the mirror's own grid hash, which a settle already computes: the baseline. Taken on the painted
 *   mirror after a parse each time (a cursor save + restore, which changes no cell): the digest is
 *   memoised on the parse counter, and a repeat with no parse would time the memo.
 * The cost is also set against the settle window the drives use (200 ms of quiet).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { capturePaneArgv } from '../lib/control/tmux-commands.js';
import { captureReplay, splitCaptureRows } from '../lib/emulator/capture-replay.js';
import { compareWithCapture } from '../lib/emulator/fidelity.js';
import { Mirror } from '../lib/emulator/mirror.js';
import type { Session } from '../lib/index.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { TMUX } from './baseline-server.js';
import { BenchDriver } from './bench-driver.js';
import { percentiles, type Percentiles } from './percentiles.js';
import { withTeardown } from './teardown.js';

const run = promisify(execFile);
const SIZES = [
  [80, 24],
  [200, 60],
] as const;
/** The settle window the benchmarks and the guide's examples use. */
const SETTLE_MS = 200;

/** A screenful of text in eight colours, bold every third row (what a TUI repaint looks like). */
function paintCommand(cols: number, rows: number): string {
  return `clear; for i in $(seq 1 ${rows - 1}); do printf '\\e[3%d;4%dm%s\\e[0m\\n' $((i % 8)) $(((i + 3) % 8)) "$(head -c ${cols - 1} /dev/zero | tr '\\0' x)"; done; printf 'painted'`;
}

/** Parsed, changes no cell: the digest is taken again, not read from its memo. */
const UNCHANGED = new TextEncoder().encode('\x1b7\x1b8');

async function time(n: number, fn: () => unknown): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await fn();
    out.push(performance.now() - t);
  }
  return out;
}

function row(p: Percentiles): number[] {
  return [p.p50, p.p90, p.p99, p.max, p.n];
}

export const fidelityCheck: Benchmark = {
  name: 'fidelity-check',
  summary: 'cost of comparing the mirror with tmux (capture + compare) at 80x24 and 200x60, vs the mirror digest and the settle window',
  async run(opts: BenchOptions): Promise<BenchResult> {
    const n = opts.quick ? 30 : 200;
    return withTeardown(opts.log, async (teardown) => {
      const bench = await BenchDriver.open();
      teardown.add('library driver', () => bench.close());
      const rows: BenchResult['rows'][number][] = [];
      const verdicts: BenchResult['verdicts'][number][] = [];
      const detail: Record<string, unknown> = {};
      for (const [cols, lines] of SIZES) {
        const name = `fid${cols}`;
        const s: Session = await bench.bash(name, cols, lines);
        await s.sendText(paintCommand(cols, lines), { submit: true });
        if ((await s.wait({ forText: 'painted', timeoutMs: 10_000 })).outcome !== 'text') throw new Error('the screen was not painted');
        await s.wait({ forIdleMs: 100 });
        const report = await s.fidelity();
        if (!report.equal) throw new Error(`the mirror differs from tmux before measuring (${report.mismatchCount} cells)`);
        opts.log(`fidelity-check: ${cols}x${lines}, ${n} samples each`);
        await s.fidelity(); // first-call costs are not what is measured
        const full = percentiles(await time(n, () => s.fidelity()));
        // The comparison alone: a mirror painted from one capture taken outside, against it.
        const out = (await run(TMUX, ['-S', bench.socketOf(name), ...capturePaneArgv(name, { attributes: true })], { encoding: 'buffer' })).stdout;
        const capture = new Uint8Array(out.subarray(0, out.length > 0 && out[out.length - 1] === 0x0a ? out.length - 1 : out.length));
        const mirror = new Mirror({ cols, rows: lines, scrollback: 1000 });
        mirror.write(captureReplay(splitCaptureRows(capture)).build());
        await mirror.whenParsed();
        const cursor = mirror.cursor;
        if (!compareWithCapture(mirror, capture, cursor).equal) throw new Error('the painted mirror differs from its capture');
        const compare = percentiles(await time(n, () => compareWithCapture(mirror, capture, cursor)));
        const digest = percentiles(
          await time(n, () => {
            mirror.write(UNCHANGED);
            return mirror.digest();
          }),
        );
        mirror.dispose();
        await s.kill();
        rows.push(
          { subject: `${cols}x${lines}: session.fidelity() (capture over control mode + compare)`, baseline: false, values: row(full) },
          { subject: `${cols}x${lines}: compareWithCapture alone (in process)`, baseline: false, values: row(compare) },
          { subject: `${cols}x${lines}: the mirror's digest after a parse (what a settle already computes)`, baseline: true, values: row(digest) },
        );
        verdicts.push(
          ratioVerdict(`${cols}x${lines}: fidelity() / digest(), p50`, full.p50 / digest.p50),
          { label: `${cols}x${lines}: fidelity() p50 as a share of the ${SETTLE_MS} ms settle window`, value: (100 * full.p50) / SETTLE_MS, unit: '%' },
        );
        detail[`${cols}x${lines}`] = { full, compare, digest };
      }
      return {
        name: 'fidelity-check',
        workload: `${n} samples per path, bash drives at 80x24 and 200x60 showing a full screen of coloured text`,
        columns: ['p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'n'],
        rows,
        verdicts,
        notes: ['the capture runs in the drive\'s own tmux server (one per drive): it stalls no other drive'],
        detail,
      };
    });
  },
};
