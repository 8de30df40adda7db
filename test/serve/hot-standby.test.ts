/**
 * The hot standby (real `tmux-drive serve` processes from the built dist/, real tmux, real
 * sockets): while it waits on the host lock it holds one observer per live drive — a read-only
 * control client tmux sends no pane output — for the drives there when it started and for those
 * created later (learnt through inotify); after the serving host's SIGKILL it takes each drive's
 * lease and adopts that client (the journal's reattach event says `observed`), turned read-write,
 * the dead host's client ended: one driver per drive, every drive drivable (an echo typed through
 * the reconnected client is seen), the observer's subscription resumes with no gap and no repeat.
 * A drive whose observer is gone at the takeover, or that was created just before the kill, is
 * re-attached cold and driven too.
 */
import { describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { Client } from '../../lib/client/client.js';
import type { JournalItem } from '../../lib/client/remote-drive.js';
import { findProcesses, processTree, readStat } from '../../backends/process/process-tree.js';
import { isControlAttachArgv, isObserverAttachArgv, isStartServerArgv } from '../../lib/control/tmux-commands.js';
import { killServe, leaseHolder, serveSuite, standbyWaiting } from './harness.js';

const suite = serveSuite();

const socketOf = (drive: string): string => join(suite.dataDir, 'tmux', `${drive}.sock`);

interface TmuxClient {
  readonly control: boolean;
  readonly readOnly: boolean;
  readonly flags: string;
  readonly pid: number;
}

/** What tmux itself says of the clients attached to a drive (the test asks tmux directly). */
function tmuxClients(drive: string): TmuxClient[] {
  const r = spawnSync('tmux', ['-S', socketOf(drive), 'list-clients', '-F', '#{client_control_mode}|#{client_readonly}|#{client_flags}|#{client_pid}'], { encoding: 'utf8', timeout: 5000 });
  return r.stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [control, readOnly, flags, pid] = line.split('|');
      return { control: control === '1', readOnly: readOnly === '1', flags: flags ?? '', pid: Number(pid) };
    });
}

/** One drive's processes: servers, the bash under them, control clients, and which of those are observers. */
function census(drive: string): { servers: number; bashes: number; controlClients: number } {
  const socket = socketOf(drive);
  const servers = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const bashes = servers.flatMap((s) => processTree(s).filter((p) => p.comm === 'bash'));
  const controlClients = findProcesses((cmdline) => isControlAttachArgv(cmdline.split('\0'), socket));
  return { servers: servers.length, bashes: bashes.length, controlClients: controlClients.length };
}

/** The drive's observer processes whose parent is `pid`. */
function observersOf(pid: number, drive: string): number[] {
  return findProcesses((cmdline) => isObserverAttachArgv(cmdline.split('\0'), socketOf(drive))).filter((p) => readStat(p)?.ppid === pid);
}


/** Drivable: a typed echo's answer is seen on the drive's screen. */
async function drivable(c: Client, drive: string, tag: string): Promise<void> {
  const d = c.drive(drive);
  await d.sendText(`echo ${tag}-$((6 * 7))`, { submit: true });
  expect((await d.wait({ forText: new RegExp(`^${tag}-42$`, 'm'), timeoutMs: 15_000 })).outcome).toBe('text');
}

async function lastReattach(c: Client, drive: string): Promise<Record<string, unknown> | undefined> {
  return (await c.drive(drive).events({ limit: 1000 })).filter((e) => e.kind === 'reattach').at(-1)?.tags;
}

describe('a hot standby', () => {
  it('observes every live drive while it waits (read-only, no output), and after SIGKILL adopts them: one driver each, every drive drivable, the subscription resumes with no gap', async () => {
    const first = suite.serve();
    await first.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 30_000 });
    // Two drives before the standby starts (from the journal), one after (from the socket dir's inotify).
    for (const name of ['pre1', 'pre2']) await (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const standby = suite.serve(['--standby']);
    await standbyWaiting(standby);
    await (await owner.create({ allowId: 'bash', name: 'post', args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const drives = ['pre1', 'pre2', 'post'];

    // tmux's own view: the holder's read-write client, and the standby's observer, read-only and
    // sent no output (the holder's pane is not held back by it).
    for (const d of drives) {
      await expect.poll(() => observersOf(standby.pid, d).length, { timeout: 10_000 }).toBe(1);
      const attached = tmuxClients(d).filter((c) => c.control);
      expect(attached).toHaveLength(2);
      const observer = attached.find((c) => c.pid === observersOf(standby.pid, d)[0]);
      expect(observer).toMatchObject({ readOnly: true });
      expect(observer?.flags).toContain('no-output');
      expect(attached.filter((c) => !c.readOnly)).toHaveLength(1);
      expect(leaseHolder(suite.dataDir, d)).toBe(first.pid);
    }
    // The holder drives on, observed: nothing it does is disturbed.
    await drivable(owner, 'pre1', 'while-observed');

    const observer = await suite.connect({ token: (await owner.mint({ classes: ['observe'] })).token, reconnectTimeoutMs: 30_000 });
    const seen: JournalItem[] = [];
    observer.drive('post').on('journal', (item) => seen.push(item));
    await drivable(owner, 'post', 'before');
    await expect.poll(() => seen.length, { timeout: 5000 }).toBeGreaterThan(0);

    const back = new Promise((resolve) => owner.on('reconnected', resolve));
    first.child.kill('SIGKILL');
    await first.exited;
    const took = await standby.ready;
    expect(took).toMatchObject({ pid: standby.pid, drives: 3 });
    await back;

    for (const d of drives) {
      expect(leaseHolder(suite.dataDir, d)).toBe(standby.pid);
      // One driver: the adopted client (its process still has the observer argv), read-write now
      // and sent output; the dead host's client ended.
      expect(census(d)).toEqual({ servers: 1, bashes: 1, controlClients: 1 });
      const attached = tmuxClients(d).filter((c) => c.control);
      expect(attached).toHaveLength(1);
      expect(attached[0]).toMatchObject({ readOnly: false });
      expect(attached[0]?.flags).not.toContain('no-output');
      expect(await lastReattach(owner, d)).toEqual({ observed: true });
      await drivable(owner, d, `after-${d}`);
    }
    // The mirror was rebuilt from tmux's grid: what the dead host's drive showed is still there.
    expect((await owner.drive('pre1').read()).content).toContain('while-observed-42');

    const stored = await owner.drive('post').events({ limit: 1000 });
    await expect.poll(() => seen.length, { timeout: 5000 }).toBe(stored.length);
    expect(seen.map((e) => e.seq)).toEqual(stored.map((e) => e.seq));

    for (const d of drives) await owner.drive(d).kill();
    await killServe(standby, 'SIGTERM');
  });

  it('a drive whose observer ended, and one created just before the kill, are re-attached cold and driven after the takeover; a drive the holder closed is not taken', async () => {
    const first = suite.serve();
    await first.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 30_000 });
    for (const name of ['kept', 'lost', 'closed']) await (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' });
    const standby = suite.serve(['--standby']);
    await standbyWaiting(standby);
    for (const d of ['kept', 'lost', 'closed']) await expect.poll(() => observersOf(standby.pid, d).length, { timeout: 10_000 }).toBe(1);
    // A drive the holder closes: its server goes, and the observer with it.
    await owner.drive('closed').kill();
    await expect.poll(() => observersOf(standby.pid, 'closed').length, { timeout: 5000 }).toBe(0);
    // The observer of `lost` ends (killed by pid): the standby forgets it, and adopts nothing for it.
    for (const pid of observersOf(standby.pid, 'lost')) process.kill(pid, 'SIGKILL');
    await expect.poll(() => observersOf(standby.pid, 'lost').length, { timeout: 5000 }).toBe(0);

    // Created, and the host killed at once: observed or not by then, it is driven after the takeover.
    await owner.create({ allowId: 'bash', name: 'late', args: ['--norc', '--noprofile'] });
    first.child.kill('SIGKILL');
    await first.exited;
    expect(await standby.ready).toMatchObject({ pid: standby.pid, drives: 3 });

    expect(await lastReattach(owner, 'kept')).toEqual({ observed: true });
    expect(await lastReattach(owner, 'lost')).toEqual({});
    expect(await lastReattach(owner, 'late')).toBeDefined();
    expect((await owner.list()).find((i) => i.id === 'closed')?.state).not.toBe('live');
    for (const d of ['kept', 'lost', 'late']) {
      expect(leaseHolder(suite.dataDir, d)).toBe(standby.pid);
      expect(census(d)).toEqual({ servers: 1, bashes: 1, controlClients: 1 });
      await drivable(owner, d, `cold-${d}`);
    }
    for (const d of ['kept', 'lost', 'late']) await owner.drive(d).kill();
    await killServe(standby, 'SIGTERM');
  });
});
