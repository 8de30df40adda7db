/**
 * `tmux-drive serve` as a real foreground process, and the CLI as thin clients of it (the built
 * dist/, a new process per command): a person reads, waits, sends, lists and attaches while the
 * daemon holds the drive (before this, each of those failed with LEASE_HELD); one host per data
 * dir; SIGTERM ends the host cleanly and the drives run on; a scoped token (TMUX_DRIVE_TOKEN) is
 * refused outside its scope and never falls back to hosting in-process.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pty from 'node-pty';
import { killGone, processesMentioning } from '../helpers.js';
import { CLI, ensureBuilt, runCli, testSetup, type Run } from '../cli/dist.js';
import { killServe, leaseHolder, type ServeProcess, startServe } from './harness.js';

let dir: string;
let dataDir: string;
let config: string;
let host: ServeProcess | undefined;

const td = (...args: string[]): Promise<Run> => runCli(['--data-dir', dataDir, '--config', config, ...args]);
const tdAs = (token: string, ...args: string[]): Promise<Run> => runCli(['--data-dir', dataDir, '--config', config, ...args], { env: { ...process.env, TMUX_DRIVE_TOKEN: token } });

function errorCode(r: Run): string | undefined {
  return /^tmux-drive: ([A-Z_]+):/m.exec(r.stderr)?.[1];
}

beforeAll(() => {
  ensureBuilt();
  ({ dir, dataDir, config } = testSetup());
});

afterAll(async () => {
  if (host) await killServe(host);
  const list = await td('list', '--json');
  if (list.status === 0) {
    for (const s of (JSON.parse(list.stdout) as { sessions: { id: string; state: string }[] }).sessions) if (s.state === 'live') await td('kill', s.id);
  }
  killGone(processesMentioning(dataDir));
  rmSync(dir, { recursive: true, force: true });
});

describe('the CLI through a serving host', () => {
  it('reads, waits, sends, lists and attaches while the daemon holds the drive: no LEASE_HELD, the lease never moves', async () => {
    host = startServe(['--data-dir', dataDir, '--config', config]);
    const ready = await host.ready;
    expect(ready.pid).toBe(host.pid);

    const created = await td('create', '--allow', 'bash', '--name', 'held', '--', '--norc', '--noprofile');
    expect(created.status, created.stderr).toBe(0);
    // The daemon holds the drive, not the CLI process that asked for it.
    expect(leaseHolder(dataDir, 'held')).toBe(host.pid);

    expect((await td('wait', 'held', '--text', '$ ')).status).toBe(0);
    const sent = await td('send', 'held', 'echo through-$((6 * 7))', '--submit');
    expect(sent.status, sent.stderr).toBe(0);
    expect((await td('wait', 'held', '--text', 'through-42')).status).toBe(0);
    const read = await td('read', 'held');
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/^through-42$/m);
    const status = await td('status', 'held', '--json');
    expect(status.status, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id: 'held', state: 'awaiting-input', lifecycle: 'live' });
    const list = JSON.parse((await td('list', '--json')).stdout) as { sessions: Array<{ id: string; heldBy?: number; state: string }> };
    expect(list.sessions).toEqual([expect.objectContaining({ id: 'held', state: 'live' })]);
    expect(list.sessions[0]?.heldBy).toBeUndefined();
    const transcript = await td('transcript', 'held', '--json');
    expect(JSON.parse(transcript.stdout).entries.map((e: { text?: string }) => e.text ?? '').join('')).toContain('through-42');

    // The operator attaches a real terminal to the drive the daemon holds, and detaches.
    const term = pty.spawn(process.execPath, [CLI, '--data-dir', dataDir, '--config', config, 'attach', 'held'], { cols: 100, rows: 30, env: { ...process.env, TERM: 'xterm-256color' } as Record<string, string> });
    let seen = '';
    const exited = new Promise<number>((ok) => term.onExit(({ exitCode }) => ok(exitCode)));
    await new Promise<void>((ok, fail) => {
      const timer = setTimeout(() => fail(new Error(`no drive screen on the attached terminal: ${JSON.stringify(seen)}`)), 15_000);
      term.onData((d) => {
        seen += d;
        if (seen.includes('through-42')) {
          clearTimeout(timer);
          ok();
        }
      });
    });
    term.write('\x02d');
    const again = setInterval(() => term.write('\x02d'), 3000);
    try {
      expect(await exited).toBe(0);
    } finally {
      clearInterval(again);
    }
    expect(leaseHolder(dataDir, 'held')).toBe(host.pid);
    // The daemon still drives it after the operator left.
    expect((await td('send', 'held', 'echo still-$((7 * 7))', '--submit')).status).toBe(0);
    expect((await td('wait', 'held', '--text', 'still-49')).status).toBe(0);
  });

  it('one host per data dir: a second serve fails with HOST_HELD naming the holder', async () => {
    const second = await td('serve');
    expect(second.status).toBe(1);
    expect(errorCode(second)).toBe('HOST_HELD');
    expect(second.stderr).toContain(`pid ${host?.pid}`);
  });

  it('a scoped token is refused outside its scope, and never falls back to hosting in-process', async () => {
    expect((await td('create', '--allow', 'bash', '--name', 'other', '--', '--norc', '--noprofile')).status).toBe(0);
    const minted = await td('token', 'mint', '--observe', '--for', 'held', '--label', 'cli test', '--json');
    expect(minted.status, minted.stderr).toBe(0);
    const { token, id: tokenId } = JSON.parse(minted.stdout) as { token: string; id: string };
    expect(token).toMatch(/^tdk_[A-Za-z0-9_-]{43}$/);

    const read = await tdAs(token, 'read', 'held');
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toContain('through-42');
    const listed = JSON.parse((await tdAs(token, 'list', '--json')).stdout) as { sessions: { id: string }[] };
    expect(listed.sessions.map((s) => s.id)).toEqual(['held']);

    const send = await tdAs(token, 'send', 'held', 'rm -rf ~', '--submit');
    expect(send.status).toBe(1);
    expect(errorCode(send)).toBe('NOT_PERMITTED');
    const foreign = await tdAs(token, 'read', 'other');
    expect(errorCode(foreign)).toBe('NOT_PERMITTED');
    const mint = await tdAs(token, 'token', 'mint', '--admin');
    expect(errorCode(mint)).toBe('NOT_PERMITTED');
    const garbage = await tdAs('tdk_not-a-token', 'read', 'held');
    expect(errorCode(garbage)).toBe('TOKEN_INVALID');
    // Every call is audited under the token's id; the token itself is written nowhere.
    const audit = readFileSync(join(dataDir, 'audit.jsonl'), 'utf8');
    expect(audit).not.toContain(token);
    expect(audit).not.toContain(token.slice(4, 24));
    const calls = audit.trim().split('\n').map((l) => JSON.parse(l) as { kind: string; sessionId: string | null; tags: Record<string, unknown> });
    expect(calls).toContainEqual(expect.objectContaining({ kind: 'call', sessionId: 'held', tags: { verb: 'sendText', token: tokenId, ok: false, code: 'NOT_PERMITTED' } }));
    expect(calls).toContainEqual(expect.objectContaining({ kind: 'call', sessionId: 'held', tags: { verb: 'read', token: tokenId, ok: true } }));
    expect(calls).toContainEqual(expect.objectContaining({ kind: 'call', sessionId: 'held', tags: { verb: 'sendText', token: 'owner', ok: true } }));
    expect((await td('kill', 'other')).status).toBe(0);
  });

  it('SIGTERM stops the host cleanly: exit 0, socket gone, the drive runs on and the CLI finds it in-process', async () => {
    const h = host as ServeProcess;
    h.child.kill('SIGTERM');
    expect(await h.exited).toEqual({ code: 0, signal: null });
    host = undefined;
    expect(existsSync(join(dataDir, 'serve', 'host.sock'))).toBe(false);
    expect(processesMentioning(join(dataDir, 'tmux', 'held.sock')).length).toBeGreaterThan(0);
    const read = await td('read', 'held');
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toMatch(/^still-49$/m);
    // With a token and no host: refused, not hosted in-process with the owner's authority.
    const scoped = await tdAs('tdk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', 'read', 'held');
    expect(errorCode(scoped)).toBe('NOT_SERVING');
    expect((await td('kill', 'held')).status).toBe(0);
  });
});
