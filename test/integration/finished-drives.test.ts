/**
 * Finished drives (issue 13, seed 001: "normal zero exit or explicit close verifies server
 * cleanup"): a clean exit takes the status and the final screen, then ends the tmux server and its
 * socket, verified; a nonzero exit keeps the dead pane for an operator until prune; a host that
 * opens the data dir again never lists an exited drive as live; a failed drive keeps its journal
 * row's durability and stays failed; a new drive reusing a finished drive's name starts with no
 * history of its own.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Driver } from '../../lib/index.js';
import { Journal } from '../../journal/journal.js';
import { CONSENT, killGone, processesMentioning } from '../helpers.js';

const CONFIG = { worker: { stuckMs: 60_000 }, allow: [{ id: 'sh', match: { path: '/bin/sh' }, consent: CONSENT }] };
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Pids of the drive's tmux server: its `start-server` command line names the socket. */
function serverPids(socket: string): number[] {
  return processesMentioning(socket).filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('start-server');
    } catch {
      return false;
    }
  });
}

/** Waits (test-side, bounded) until `done()` holds. */
async function until(done: () => boolean, ms = 10_000): Promise<boolean> {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(50)) if (done()) return true;
  return done();
}

const dirs: string[] = [];
const drivers: Driver[] = [];
afterEach(async () => {
  for (const d of drivers.splice(0)) {
    try {
      for (const info of d.list()) if (info.state === 'live' && info.heldBy === undefined) await d.get(info.id).kill().catch(() => undefined);
      await d.prune();
    } catch {
      /* closed by the test */
    }
    await d.close();
  }
  for (const dir of dirs.splice(0)) {
    killGone(processesMentioning(dir));
    rmSync(dir, { recursive: true, force: true });
  }
});

async function open(dataDir?: string): Promise<Driver> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'td-'));
  if (!dataDir) dirs.push(dir);
  const d = await Driver.open({ dataDir: dir, config: CONFIG });
  drivers.push(d);
  return d;
}

describe('finished drives', () => {
  it('a clean exit ends the server and its socket (verified), the final screen stays readable; a nonzero exit keeps its server until prune', async () => {
    const d = await open();
    const ok = await d.create({ allowId: 'sh', name: 'clean', args: ['-c', 'echo the-final-words; read go; exit 0'] });
    const bad = await d.create({ allowId: 'sh', name: 'broken', args: ['-c', 'echo it-broke; read go; exit 4'] });
    const okSocket = join(d.dataDir, 'tmux', 'clean.sock');
    const badSocket = join(d.dataDir, 'tmux', 'broken.sock');
    for (const s of [ok, bad]) await s.wait({ forText: /the-final-words|it-broke/ });
    const okServer = serverPids(okSocket);
    expect(okServer).toHaveLength(1);
    for (const s of [ok, bad]) await s.sendKeys('Enter');
    for (const s of [ok, bad]) expect((await s.wait({ forExit: true, timeoutMs: 20_000 })).outcome).toBe('exit');
    expect(ok.outcome).toMatchObject({ outcome: 'done', reason: 'exit_0' });
    // Cleaned up and verified: no server process, no socket file (tmux 3.3a leaves it behind).
    expect(await until(() => serverPids(okSocket).length === 0 && !existsSync(okSocket))).toBe(true);
    expect(okServer.every((pid) => !existsSync(`/proc/${pid}`) || readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z '))).toBe(true);
    expect(ok.read().content).toContain('the-final-words');
    expect(d.list().find((i) => i.id === 'clean')).toMatchObject({ state: 'exited', exit: { code: 0 } });
    // The nonzero exit is kept for an operator: its server still answers.
    expect(bad.outcome).toMatchObject({ outcome: 'failed', reason: 'nonzero_exit' });
    await sleep(500);
    expect(serverPids(badSocket)).toHaveLength(1);
    expect(bad.read().content).toContain('it-broke');

    const pruned = await d.prune();
    expect(pruned.map((p) => [p.id, p.state, p.pruned]).sort()).toEqual([['broken', 'exited', true], ['clean', 'exited', true]]);
    expect(serverPids(badSocket)).toEqual([]);
    expect(existsSync(badSocket)).toBe(false);
    expect(d.list()).toEqual([]);
    const journal = Journal.open(d.dataDir);
    try {
      expect(journal.listSessions()).toEqual([]);
    } finally {
      journal.close();
    }
  });

  it('a program that exits 0 during its own launch: create succeeds, the outcome is done, the server is cleaned up after the launch', async () => {
    const d = await open();
    const sessions = await Promise.all(Array.from({ length: 6 }, (_, i) => d.create({ allowId: 'sh', name: `quick${i}`, args: ['-c', 'echo quick; exit 0'] })));
    for (const s of sessions) expect((await s.wait({ forExit: true, timeoutMs: 20_000 })).outcome).toBe('exit');
    for (const s of sessions) expect(s.outcome).toMatchObject({ outcome: 'done', reason: 'exit_0' });
    const socketsLeft = (): string[] => readdirSync(join(d.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'));
    expect(await until(() => sessions.every((s) => serverPids(join(d.dataDir, 'tmux', `${s.id}.sock`)).length === 0) && socketsLeft().length === 0)).toBe(true);
    expect(d.list().map((i) => i.state)).toEqual(sessions.map(() => 'exited'));
  });

  it('a host that opens the data dir again never lists an exited drive as live, and the row stays exited', async () => {
    const first = await open();
    const dir = first.dataDir;
    const ends = Date.now() + 5000;
    for (const [name, code] of [['zero', 0], ['three', 3], ['zero2', 0]] as const) {
      // Each ends at the same moment, well after this host has let go of them.
      await first.create({ allowId: 'sh', name, args: ['-c', `sleep ${((ends - Date.now()) / 1000).toFixed(2)}; exit ${code}`] });
    }
    await first.close(); // the drives run on, detached, and end while no host is attached
    expect(Date.now()).toBeLessThan(ends);
    await sleep(ends - Date.now() + 1000);
    const second = await open(dir);
    const states = Object.fromEntries(second.list().map((i) => [i.id, i]));
    expect(states).toMatchObject({ zero: { state: 'exited', exit: { code: 0 } }, three: { state: 'exited', exit: { code: 3 } }, zero2: { state: 'exited', exit: { code: 0 } } });
    // The clean ones were cleaned up on the way; the nonzero one waits for an operator (or prune).
    expect(serverPids(join(dir, 'tmux', 'zero.sock'))).toEqual([]);
    expect(serverPids(join(dir, 'tmux', 'three.sock'))).toHaveLength(1);
    await second.close();
    const journal = Journal.open(dir);
    try {
      expect(journal.listSessions().map((r) => [r.id, r.state])).toEqual([['zero', 'exited'], ['three', 'exited'], ['zero2', 'exited']]);
    } finally {
      journal.close();
    }
    const third = await open(dir);
    expect(third.list().filter((i) => i.state === 'live')).toEqual([]);
    expect(() => third.get('three')).toThrow(expect.objectContaining({ code: 'SESSION_NOT_FOUND', message: expect.stringContaining('exited') }));
    const pruned = await third.prune({ ids: ['three'] });
    expect(pruned).toEqual([expect.objectContaining({ id: 'three', state: 'exited', pruned: true, exit: { code: 3, signal: null } })]);
    expect(serverPids(join(dir, 'tmux', 'three.sock'))).toEqual([]);
  });

  it('a drive whose server died is listed failed and durable as its row says, and its row stays failed', async () => {
    const first = await open();
    const dir = first.dataDir;
    const s = await first.create({ allowId: 'sh', name: 'gone', args: ['-c', 'echo up; sleep 600'] });
    await s.wait({ forText: 'up' });
    await first.close();
    const socket = join(dir, 'tmux', 'gone.sock');
    expect(spawnSync('tmux', ['-S', socket, 'kill-server']).status).toBe(0);
    expect(await until(() => serverPids(socket).length === 0)).toBe(true);
    const second = await open(dir);
    expect(second.list()).toEqual([expect.objectContaining({ id: 'gone', state: 'failed', reason: 'server_gone', backend: 'tmux', durable: true })]);
    await second.close();
    const journal = Journal.open(dir);
    try {
      expect(journal.getSession('gone')).toMatchObject({ state: 'failed', failureReason: 'server_gone', durable: true });
    } finally {
      journal.close();
    }
  });

  it('a new drive reusing a finished drive\'s name starts with no answered prompts, outcome or events of the old one', async () => {
    const d = await open();
    const old = await d.create({ allowId: 'sh', name: 'reused', args: ['-c', 'exit 0'] });
    await old.wait({ forExit: true, timeoutMs: 20_000 });
    expect(old.outcome).toMatchObject({ outcome: 'done' });
    // The old drive answered a dialog (recorded as the driver's auto-answer records it).
    const before = Journal.open(d.dataDir);
    try {
      before.recordAnswer('reused', 'dialog:0123456789abcdef0123456789abcdef', 'Enter');
      expect(before.answerCount('reused')).toBe(1);
    } finally {
      before.close();
    }
    const fresh = await d.create({ allowId: 'sh', name: 'reused', args: ['-c', 'echo again; sleep 600'] });
    await fresh.wait({ forText: 'again' });
    const after = Journal.open(d.dataDir);
    try {
      expect(after.answerCount('reused')).toBe(0);
      expect(d.events('reused').map((e) => e.kind)).not.toContain('outcome');
      expect(d.events('reused')[0]).toMatchObject({ seq: 1, kind: 'create' });
      // The old drive's history is kept, under its retired id, until prune.
      const retired = after.listSessions().find((r) => r.id !== 'reused');
      expect(retired).toMatchObject({ state: 'exited' });
      expect(after.answerCount(retired!.id)).toBe(1);
      expect(d.events(retired!.id).map((e) => e.kind)).toContain('outcome');
    } finally {
      after.close();
    }
    await fresh.kill();
    expect(await d.prune()).toEqual([expect.objectContaining({ pruned: true }), expect.objectContaining({ pruned: true })]);
    expect(readdirSync(join(d.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'))).toEqual([]);
  });
});
