/**
 * A standby takes over when the serving host is SIGKILLed (real `tmux-drive serve` processes, the
 * built dist/): it was blocked in the kernel on the host lock, and it re-attaches every live drive
 * without relaunching anything; the clients reconnect by themselves and each subscription resumes
 * after the last journal seq it delivered: every stored journal event of the drive reaches the
 * observer exactly once, across the takeover. One drive, one driver: after the takeover each drive
 * has one tmux server, one bash, one control client (the new host's) and its lease names the new host.
 */
import { describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Client } from '../../lib/client/client.js';
import type { JournalItem } from '../../lib/client/remote-drive.js';
import type { HostInfo } from '../../lib/wire/protocol.js';
import { Journal } from '../../journal/journal.js';
import { findProcesses, processTree } from '../../backends/process/process-tree.js';
import { isStartServerArgv } from '../../lib/control/tmux-commands.js';
import { serveSuite, standbyWaiting } from './harness.js';

const suite = serveSuite();

function leaseHolder(drive: string): number | undefined {
  const j = Journal.open(suite.dataDir);
  try {
    return j.lease(drive)?.holder?.pid;
  } finally {
    j.close();
  }
}

/** The processes of one drive: tmux servers, the bash under them, tmux control clients attached to it. */
function census(drive: string): { servers: number; bashes: number; controlClients: number } {
  const socket = join(suite.dataDir, 'tmux', `${drive}.sock`);
  const servers = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const bashes = servers.flatMap((s) => processTree(s).filter((p) => p.comm === 'bash'));
  const controlClients = findProcesses((cmdline) => {
    const argv = cmdline.split('\0');
    return argv.includes(socket) && argv.includes('-C') && argv.includes('attach-session');
  });
  return { servers: servers.length, bashes: bashes.length, controlClients: controlClients.length };
}


describe('a standby host', () => {
  it('takes over after SIGKILL: no double drive, the clients reconnect, the observer resumes with no gap and no repeat in journal seqs', async () => {
    const first = suite.serve();
    await first.ready;
    const standby = suite.serve(['--standby']);
    await standbyWaiting(standby);

    const owner = await suite.connect({ reconnectTimeoutMs: 20_000 });
    for (const name of ['a', 'b']) await (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const observer = await suite.connect({ token: (await owner.mint({ classes: ['observe'], drives: ['a'] })).token, reconnectTimeoutMs: 20_000 });

    const seen: JournalItem[] = [];
    const marks: number[] = [];
    observer.drive('a').on('journal', (item) => seen.push(item));
    observer.drive('a').on('output', (mark) => marks.push(mark.seq));
    const a = owner.drive('a');
    await a.sendText('echo before-$((2 * 21))', { submit: true });
    await a.wait({ forText: 'before-42' });
    await expect.poll(() => marks.length, { timeout: 5000 }).toBeGreaterThan(0);
    expect(leaseHolder('a')).toBe(first.pid);

    const reconnected = (c: Client): Promise<HostInfo> => new Promise((resolve) => c.on('reconnected', resolve));
    const ownerBack = reconnected(owner);
    const observerBack = reconnected(observer);
    const marksBefore = [...marks];
    first.child.kill('SIGKILL');
    await first.exited;
    const took = await standby.ready;
    expect(took.pid).toBe(standby.pid);
    expect(took.drives).toBe(2);
    expect((await ownerBack).pid).toBe(standby.pid);
    expect((await observerBack).pid).toBe(standby.pid);

    // The same programs, driven by the new host only.
    for (const name of ['a', 'b']) {
      expect(leaseHolder(name)).toBe(standby.pid);
      expect(census(name)).toEqual({ servers: 1, bashes: 1, controlClients: 1 });
    }
    expect((await a.read()).content).toContain('before-42');
    await a.sendText('echo after-$((3 * 11))', { submit: true });
    await a.wait({ forText: 'after-33' });
    await owner.drive('b').sendText('echo b-alive', { submit: true });
    await owner.drive('b').wait({ forText: /^b-alive$/m });

    // Every event the journal stored for `a` reached the observer once, in order: those of the
    // killed host it had not delivered yet included, and the new host's reattach.
    const stored = await owner.drive('a').events({ limit: 1000 });
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(stored.length);
    expect(seen.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));
    expect(new Set(seen.map((e) => e.seq)).size).toBe(seen.length);
    expect(seen.map((e) => e.kind)).toContain('reattach');
    // Output marks go on after the takeover, numbered above every mark of the killed host (its
    // transcript's seqs were reserved in the journal before it handed them out): none repeats.
    await expect.poll(() => marks.length, { timeout: 5000 }).toBeGreaterThan(marksBefore.length);
    const after = marks.slice(marksBefore.length);
    expect(Math.min(...after)).toBeGreaterThan(Math.max(...marksBefore));

    for (const name of ['a', 'b']) await owner.drive(name).kill();
  });
});
