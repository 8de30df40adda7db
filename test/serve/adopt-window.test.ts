/**
 * A standby that took over serves before it has re-attached every drive (real `tmux-drive serve`
 * processes from the built dist/, real tmux, real sockets). To hold one drive's re-attach open on
 * purpose, its tmux server is stopped (SIGSTOP) across the SIGKILL of the serving host: the
 * takeover's commands to it wait, while the other drive is adopted and served. Through the
 * reconnected client: a call for the adopted drive is answered while the stopped one is still being
 * re-attached; a call for the stopped one is not refused (no LEASE_HELD naming the dead host) but
 * answered once its server runs again; a list asked meanwhile waits for every drive and shows both
 * live, held by nobody else; a create asked meanwhile waits for every drive too, so the session cap
 * (2 here) counts both and refuses it.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { findProcesses, readStat } from '../../backends/process/process-tree.js';
import { isObserverAttachArgv, isStartServerArgv } from '../../lib/control/tmux-commands.js';
import { killServe, serveSuite, standbyWaiting } from './harness.js';

let stopped: number | undefined;
const suite = serveSuite({
  moreConfig: 'worker: { maxSessions: 2 }\n',
  beforeEnd: () => {
    if (stopped === undefined) return;
    try {
      process.kill(stopped, 'SIGCONT');
    } catch {
      /* gone */
    }
  },
});

const socketOf = (drive: string): string => join(suite.dataDir, 'tmux', `${drive}.sock`);

/** Settles to 'pending' when `p` has not settled by the time the event loop has turned a few times. */
async function stateOf(p: Promise<unknown>): Promise<'pending' | 'settled'> {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return done ? 'settled' : 'pending';
}

describe('a takeover serves while it re-attaches', () => {
  it('answers a call for an adopted drive while another is still being re-attached; a call for that one waits for it and is not refused', async () => {
    const first = suite.serve();
    await first.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 30_000 });
    for (const name of ['quick', 'held']) await (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const standby = suite.serve(['--standby']);
    // Waiting on the lock (its start no longer waits for the observers' attaches: one still under
    // way when the held server stops is waited for by that drive's re-attach alone,
    // test/serve/standby-hung-drive.test.ts).
    await standbyWaiting(standby);
    // Both drives observed (hot): each takeover is an adoption, not a cold attach.
    for (const d of ['quick', 'held']) {
      await expect.poll(() => findProcesses((cmdline) => isObserverAttachArgv(cmdline.split('\0'), socketOf(d))).filter((p) => readStat(p)?.ppid === standby.pid).length, { timeout: 15_000 }).toBe(1);
    }

    // The held drive's tmux server answers nothing until SIGCONT (its program keeps its state).
    const server = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socketOf('held')));
    expect(server).toHaveLength(1);
    stopped = server[0] as number;
    process.kill(stopped, 'SIGSTOP');
    const lost = new Promise<void>((resolve) => owner.on('disconnected', () => resolve()));
    await killServe(first);
    // The calls below are asked once the client knows its host is gone: asked before, on the dead
    // connection, a create is rightly reported as maybe done (not retried), which is not this test.
    await lost;

    // Asked while the takeover runs: the client waits for the new host, then for the drive.
    const heldRead = owner.drive('held').read({ mode: 'full' });
    const listed = owner.list();
    const created = owner.create({ allowId: 'bash', name: 'third', args: ['--norc', '--noprofile'] });
    created.catch(() => undefined);
    const quickScreen = await owner.drive('quick').read({ mode: 'full' });
    expect(quickScreen.content).toContain('$');
    // The new host answers on its socket while one drive is still being re-attached.
    expect(await stateOf(standby.ready)).toBe('pending');
    expect(await stateOf(heldRead)).toBe('pending');
    expect(await stateOf(listed)).toBe('pending');
    expect(await stateOf(created)).toBe('pending');
    await new Promise((r) => setTimeout(r, 300));
    expect(await stateOf(heldRead)).toBe('pending');

    process.kill(stopped, 'SIGCONT');
    stopped = undefined;
    const heldScreen = await heldRead;
    expect(heldScreen.content).toContain('$');
    const sessions = await listed;
    for (const d of ['quick', 'held']) {
      const info = sessions.find((s) => s.id === d);
      expect(info).toMatchObject({ state: 'live' });
      expect(info?.heldBy).toBeUndefined();
    }
    await expect(created).rejects.toMatchObject({ code: 'LIMIT_REACHED' });
    expect((await standby.ready).drives).toBe(2);
    // Driven after the takeover, both.
    for (const d of ['quick', 'held']) {
      await owner.drive(d).sendText('echo took-$((6 * 7))', { submit: true });
      expect((await owner.drive(d).wait({ forText: /^took-42$/m, timeoutMs: 15_000 })).outcome).toBe('text');
    }
  }, 90_000);
});
