/**
 * A takeover's cost does not grow with what the drives printed (issue 14: every takeover of a
 * torture run was slower than the one before). Each re-attach captured the pane's whole history
 * (up to the scrollback limit) and replayed it into the mirror; an adopted observer's first
 * rebuild now takes the visible rows alone, and the history follows in a second resync once the
 * takeover's first rounds are past. Checked by the rows each capture brought (the transcript's
 * `resync` entries), not by time: a drive with 600 lines of history and one with none bring the
 * same rows at takeover, and the history is whole again afterwards. A real holder (`tmux-drive
 * serve`, dist/) is SIGKILLed; a real `serve --standby` takes over; real bash drives.
 */
import { describe, expect, it } from 'vitest';
import { Client } from '../../lib/client/client.js';
import { BASH_ARGS, killServe, serveSuite, standbyWaiting } from './harness.js';

const suite = serveSuite();

type Resync = { reason: string; lines: number; rows: number };

async function resyncs(owner: Client, drive: string): Promise<Resync[]> {
  const entries = await owner.drive(drive).transcript({ limit: 1000 });
  return entries.filter((e) => e.kind === 'resync').map((e) => ({ reason: String(e.tags?.reason), lines: Number(e.tags?.lines), rows: Number(e.tags?.rows) }));
}

describe('a takeover with long histories', () => {
  it('rebuilds each adopted drive from its visible rows alone, then brings its history back', async () => {
    const holder = suite.serve();
    await holder.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 20_000 });
    for (const name of ['long', 'short']) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
    await owner.drive('long').sendText('seq 1 600 | sed s/^/row-/', { submit: true });
    expect((await owner.drive('long').wait({ forText: /^row-600$/m, timeoutMs: 10_000 })).outcome).toBe('text');

    const standby = suite.serve(['--standby']);
    await standbyWaiting(standby);
    await expect.poll(() => standby.stderr(), { timeout: 20_000 }).toMatch(/2 live drive\(s\) observed/);
    const back = new Promise<void>((resolve) => {
      const sub = owner.on('reconnected', () => {
        sub.dispose();
        resolve();
      });
    });
    await killServe(holder);
    await standby.ready;
    await back;

    // At takeover: the same rows for both drives, the pane's screen, whatever each printed before.
    const [longAttach] = await resyncs(owner, 'long');
    const [shortAttach] = await resyncs(owner, 'short');
    expect(longAttach?.reason).toBe('attach');
    expect(shortAttach?.reason).toBe('attach');
    expect(longAttach?.lines).toBe(longAttach?.rows);
    expect(longAttach?.lines).toBe(shortAttach?.lines);

    // Then the history: the mirror has all of it again (the first rows printed included).
    await expect.poll(async () => (await resyncs(owner, 'long')).map((r) => r.reason), { timeout: 10_000 }).toContain('history');
    const history = (await resyncs(owner, 'long')).find((r) => r.reason === 'history');
    expect(history?.lines).toBeGreaterThan(600);
    const all = await owner.drive('long').read({ scrollback: 'all' });
    expect(all.content).toMatch(/^row-1$/m);
    expect(all.content).toMatch(/^row-600$/m);

    // Drivable, and the history resync did not disturb what follows.
    await owner.drive('long').sendText('echo after-$((6 * 7))', { submit: true });
    expect((await owner.drive('long').wait({ forText: /^after-42$/m, timeoutMs: 10_000 })).outcome).toBe('text');
  }, 90_000);
});
