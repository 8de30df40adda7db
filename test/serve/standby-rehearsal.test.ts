/**
 * A waiting standby's rehearsal (lib/driver/standby-rehearsal.ts): scratch mirrors only, one per
 * turn of the event loop, stopped as soon as the takeover begins, and nothing left behind (no
 * handle, no timer): a standby that waits for days holds only its observers and the lock wait.
 */
import { describe, expect, it } from 'vitest';
import { SAMPLED_ROUNDS, dropTerminals, prepareTerminals, rehearseTakeover } from '../../lib/driver/standby-rehearsal.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { spareTerminals } from '../../lib/emulator/headless.js';
import { GENERIC_PROFILE } from '../../lib/perceive/profile.js';
import { sampleProcessActivity } from '../../backends/process/process-activity.js';

const SIZE = { cols: 80, rows: 24, scrollback: 1000 };

/** What keeps the process alive now, counted by kind (timers, handles). */
function resources(): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of process.getActiveResourcesInfo()) counts.set(r, (counts.get(r) ?? 0) + 1);
  return counts;
}

describe('the standby rehearsal', () => {
  it('runs its rounds and leaves no handle or timer behind', async () => {
    const before = resources();
    const rounds = await rehearseTakeover(SIZE, () => false);
    expect(rounds).toBeGreaterThan(0);
    await new Promise((r) => setImmediate(r));
    // None more of any kind than before (the test runner's own may have ended meanwhile).
    for (const [kind, n] of resources()) expect({ kind, n }).toEqual({ kind, n: Math.min(n, before.get(kind) ?? 0) });
  });

  it("runs with the drives' profiles and samples a real process tree (/proc) in its first rounds only", async () => {
    const samples: number[] = [];
    const profile = { ...GENERIC_PROFILE, id: 'rehearsed' };
    const rounds = await rehearseTakeover(SIZE, () => false, {
      profiles: [profile],
      sampleActivity: () => {
        // This test process's own tree, read from /proc as a drive's first quiet reads its pane's.
        const sample = sampleProcessActivity(process.pid, performance.now());
        samples.push(sample.processes.length);
        return sample;
      },
    });
    expect(rounds).toBeGreaterThan(SAMPLED_ROUNDS);
    // Each walk reads every process's stat on the machine: not once per round.
    expect(samples).toHaveLength(SAMPLED_ROUNDS);
    expect(Math.min(...samples)).toBeGreaterThan(0);
  });

  it('stops at its next step once the takeover has begun (a round cut short is not counted), and does nothing when it already has', async () => {
    let checks = 0;
    // Three steps a round, each after a check: six checks pass two rounds.
    expect(await rehearseTakeover(SIZE, () => ++checks > 6)).toBe(2);
    expect(checks).toBe(7);
    expect(await rehearseTakeover(SIZE, () => true)).toBe(0);
    // The takeover begins during a round's second step (as flock(1)'s exit seen between turns):
    // the third step does not run, and neither does any later round.
    let begun = false;
    let after = 0;
    const rounds = await rehearseTakeover(SIZE, () => {
      if (begun) after++;
      return begun;
    }, {
      profiles: [],
      sampleActivity: () => {
        begun = true;
        return undefined;
      },
    });
    expect(rounds).toBe(0);
    expect(after).toBe(1);
  });

  it('makes the spare terminals wanted, one per turn, which the rehearsal does not take and a drive-sized mirror does; dropped after', async () => {
    const before = spareTerminals();
    expect(await prepareTerminals(SIZE, () => before.ready + 3, () => false)).toBe(3);
    expect(await prepareTerminals(SIZE, () => before.ready + 3, () => false)).toBe(0);
    expect(await rehearseTakeover(SIZE, () => false)).toBeGreaterThan(0);
    expect(spareTerminals()).toEqual({ ready: before.ready + 3, handedOut: before.handedOut });
    const mirror = new Mirror(SIZE);
    try {
      expect(spareTerminals()).toEqual({ ready: before.ready + 2, handedOut: before.handedOut + 1 });
      mirror.write(new TextEncoder().encode('$ spare'));
      expect(mirror.snapshot({ format: 'text' }).lines[0]).toBe('$ spare');
    } finally {
      mirror.dispose();
    }
    dropTerminals();
    expect(spareTerminals().ready).toBe(0);
    let checks = 0;
    expect(await prepareTerminals(SIZE, () => 10, () => ++checks > 1)).toBe(1);
    dropTerminals();
  });
});
