/**
 * A standby's takeover defers each re-attached drive's first verdict (the quiet decision: a /proc
 * walk, a classification, a `state` event) by a second, past the first keys and echoes its
 * reconnected clients send (lib/driver/reconcile.ts, DriveWatch.deferQuiet). Real `tmux-drive
 * serve` processes from the built dist/, real tmux and bash: the holder is SIGKILLed, and then
 * - the drive is driven at once (status and an echo do not wait for the verdict);
 * - its first `state` event after the re-attach is still written, a second or more after it, and
 *   says what the screen shows (a prompt: awaiting input).
 * On the old code the first `state` came ≈ 250 ms after the re-attach (one quiet window).
 */
import { describe, expect, it } from 'vitest';
import { serveSuite, standbyWaiting } from './harness.js';

const suite = serveSuite();

describe('a takeover and the first verdict of each drive', () => {
  it('serves the drive at once and publishes its first verdict a second after the re-attach, not among the first inputs', async () => {
    const first = suite.serve();
    await first.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 20_000 });
    await (await owner.create({ allowId: 'bash', name: 'v', args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const standby = suite.serve(['--standby']);
    await standbyWaiting(standby);

    const back = new Promise((resolve) => owner.on('reconnected', resolve));
    first.child.kill('SIGKILL');
    await first.exited;
    await standby.ready;
    await back;

    const v = owner.drive('v');
    // Read on demand: not held back by the deferred verdict.
    expect((await v.status()).state).toBe('awaiting-input');
    await v.sendText('echo first-$((6 * 7))', { submit: true });
    expect((await v.wait({ forText: /^first-42$/m, timeoutMs: 15_000 })).outcome).toBe('text');

    const afterReattach = async (): Promise<{ reattachAt: number; states: { at: number; state: unknown }[] }> => {
      const events = await v.events({ limit: 1000 });
      const reattach = events.findLast((e) => e.kind === 'reattach');
      if (!reattach) throw new Error('no reattach event');
      return { reattachAt: reattach.at, states: events.filter((e) => e.seq > reattach.seq && e.kind === 'state').map((e) => ({ at: e.at, state: e.tags.state })) };
    };
    await expect.poll(async () => (await afterReattach()).states.length, { timeout: 10_000 }).toBeGreaterThan(0);
    const { reattachAt, states } = await afterReattach();
    // The reattach event is written right after bind, which deferred the quiet decision by 1000 ms.
    expect(states[0]!.at - reattachAt).toBeGreaterThanOrEqual(900);
    expect(states[0]!.state).toBe('awaiting-input');
    await v.kill();
  });
});
