/**
 * A waiting standby's rehearsal (lib/driver/standby-rehearsal.ts): scratch mirrors only, one per
 * turn of the event loop, stopped as soon as the takeover begins, and nothing left behind (no
 * handle, no timer): a standby that waits for days holds only its observers and the lock wait.
 */
import { describe, expect, it } from 'vitest';
import { rehearseTakeover } from '../../lib/driver/standby-rehearsal.js';

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

  it('stops at the next round once the takeover has begun, and does nothing when it already has', async () => {
    let checks = 0;
    expect(await rehearseTakeover(SIZE, () => ++checks > 3)).toBe(3);
    expect(await rehearseTakeover(SIZE, () => true)).toBe(0);
  });
});
