/**
 * The latency choice of docs/emulator.md, pinned: an idle mirror puts a 1-byte echo in the grid
 * synchronously, far faster than xterm's setTimeout-scheduled write path, measured in the same run.
 * `MEASURE=1 npx vitest run test/emulator/write-latency.test.ts` prints the figures of the doc.
 */
import { describe, expect, it } from 'vitest';
import { Mirror } from '../../lib/emulator/mirror.js';

const enc = new TextEncoder();

function percentile(xs: readonly number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? NaN;
}

/** Milliseconds from write() of one byte to the grid holding it, per write. */
async function echoLatencies(syncWriteMaxBytes: number, count: number): Promise<number[]> {
  const m = new Mirror({ cols: 120, rows: 40, scrollback: 1000, syncWriteMaxBytes });
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const started = performance.now();
    await new Promise<void>((resolve) => {
      const sub = m.onChange(() => {
        out.push(performance.now() - started);
        sub.dispose();
        resolve();
      });
      m.write(enc.encode(i % 100 === 99 ? '\n' : 'x'));
    });
  }
  m.dispose();
  return out;
}

describe('write latency', () => {
  it('shows a keystroke echo in the grid well under 1 ms, ≥10x faster than the queued path', async () => {
    const sync = await echoLatencies(4096, 500);
    const queued = await echoLatencies(0, 500);
    const figures = { syncP50: percentile(sync, 0.5), syncP99: percentile(sync, 0.99), queuedP50: percentile(queued, 0.5), queuedP99: percentile(queued, 0.99) };
    if (process.env.MEASURE) console.info('echo latency (ms)', figures);
    expect(figures.syncP50).toBeLessThan(0.2);
    expect(figures.queuedP50 / figures.syncP50).toBeGreaterThan(10);
  });

  it.runIf(process.env.MEASURE)('measures the synchronous parse cost by chunk size', () => {
    const line = '\x1b[1;32muser@host\x1b[0m:\x1b[34m~/src\x1b[0m$ ls -la  total 1234 drwxr-xr-x 2 root root 4096 Nov 30 file.txt\r\n';
    for (const size of [64, 1024, 4096, 16384, 65536]) {
      const data = enc.encode(line.repeat(Math.ceil(size / line.length)).slice(0, size));
      const m = new Mirror({ cols: 120, rows: 40, scrollback: 1000, syncWriteMaxBytes: 1 << 20 });
      const times: number[] = [];
      for (let i = 0; i < 300; i++) {
        const started = performance.now();
        m.write(data);
        times.push(performance.now() - started);
      }
      m.dispose();
      console.info(`sync parse ${size} B: p50 ${percentile(times, 0.5).toFixed(3)} ms, p99 ${percentile(times, 0.99).toFixed(3)} ms`);
    }
  });
});
