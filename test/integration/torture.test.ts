/**
 * A short crash torture (tools/torture.ts): child hosts running the built library (dist/) are
 * SIGKILLed at random moments while driving two bash sessions; after each kill a new host must
 * find every drive re-attached with an exact screen (or failed with a reason), exactly one bash per
 * live drive, an intact journal and seqs that never go back. `npm run torture` runs the long one.
 */
import { describe, expect, it } from 'vitest';
import { runTorture } from '../../tools/torture.js';

describe('crash torture (short)', () => {
  it('survives 5 SIGKILLed hosts driving 2 sessions with no violation', async () => {
    const lines: string[] = [];
    const report = await runTorture({ iterations: 5, sessions: 2, serverKillEvery: 2, log: (l) => lines.push(l) });
    expect(report.violations, lines.join('\n')).toEqual([]);
    expect(report.kills).toBe(5);
    expect(report.results.every((r) => r.live + r.failed.length >= 1)).toBe(true);
    // The server killed before iteration 2 was reported failed, never relaunched.
    expect(report.failures.some((f) => f.endsWith('@2') && f.includes('server_gone')), lines.join('\n')).toBe(true);
  }, 55_000);
});
