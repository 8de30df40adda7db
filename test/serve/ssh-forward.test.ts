/**
 * A fleet past one machine: one serving host per machine, clients reaching it over an
 * ssh-forwarded Unix socket (`ssh -L local.sock:remote/host.sock`). The "remote machine" is this
 * one over the loopback sshd fixture (bench/loopback-sshd.ts): a library client and the CLI
 * (TMUX_DRIVE_SOCKET + TMUX_DRIVE_TOKEN, a local data dir that holds nothing) drive a drive the
 * remote host holds, with a token scoped to it, and stream its journal events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { sshdMissing, startSshd, type Sshd } from '../../bench/loopback-sshd.js';
import { ensureBuilt, runCli } from '../cli/dist.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const missing = sshdMissing();
const dataDir = tempDataDir();
const local = mkdtempSync(join(tmpdir(), 'td-fwd-'));
const forwarded = join(local, 'remote-host.sock');
let sshd: Sshd;
let ssh: ChildProcess;
let host: ServingHost;
let owner: Client;

beforeAll(async () => {
  if (missing) return;
  ensureBuilt();
  sshd = await startSshd();
  host = await serve({ dataDir, config: hostConfig() });
  owner = await Client.connect(dataDir);
  for (const name of ['remote-a', 'remote-b']) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
  const opts = sshd.options.flatMap((o) => ['-o', o]);
  ssh = spawn('ssh', ['-N', '-o', 'ExitOnForwardFailure=yes', '-o', 'StreamLocalBindUnlink=yes', ...opts, '-i', sshd.identityFile, '-p', String(sshd.port), '-L', `${forwarded}:${host.socketPath}`, 'root@127.0.0.1'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  ssh.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  // ssh makes the local socket once the session is up; it says nothing else (-N).
  for (let i = 0; i < 150 && !existsSync(forwarded); i++) {
    if (ssh.exitCode !== null) throw new Error(`ssh exited: ${stderr}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (!existsSync(forwarded)) throw new Error(`no forwarded socket after 15 s: ${stderr}`);
});

afterAll(async () => {
  if (missing) return;
  ssh?.kill('SIGTERM');
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner?.close();
  await host?.close();
  await sshd?.stop();
  sweep(dataDir);
  rmSync(local, { recursive: true, force: true });
});

describe.skipIf(missing !== undefined)(`a serving host over an ssh-forwarded socket${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a library client with a scoped token drives and watches its drive through the forward, and sees no other', async () => {
    const minted = await owner.mint({ classes: ['observe', 'drive'], drives: ['remote-a'], label: 'over ssh' });
    const client = await Client.connect({ socket: forwarded, token: minted.token, reconnect: false });
    try {
      expect(client.host.pid).toBe(process.pid);
      expect((await client.list()).map((i) => i.id)).toEqual(['remote-a']);
      const kinds: string[] = [];
      const d = client.drive('remote-a');
      d.on('journal', (e) => kinds.push(e.kind));
      await d.sendText('echo over-ssh-$((5 * 5))', { submit: true });
      expect((await d.wait({ forText: 'over-ssh-25' })).outcome).toBe('text');
      expect((await d.read()).content).toContain('over-ssh-25');
      await expect.poll(() => kinds.includes('create'), { timeout: 5000 }).toBe(true);
      expect((await client.drive('remote-b').read().catch((e: { code?: string }) => e)).code).toBe('NOT_PERMITTED');
    } finally {
      await client.close();
    }
  });

  it('the CLI reaches the remote host through TMUX_DRIVE_SOCKET with TMUX_DRIVE_TOKEN', async () => {
    const minted = await owner.mint({ classes: ['observe'], drives: ['remote-a'] });
    const env = { ...process.env, TMUX_DRIVE_SOCKET: forwarded, TMUX_DRIVE_TOKEN: minted.token };
    const read = await runCli(['--data-dir', join(local, 'data'), 'read', 'remote-a'], { env });
    expect(read.status, read.stderr).toBe(0);
    expect(read.stdout).toContain('over-ssh-25');
    const send = await runCli(['--data-dir', join(local, 'data'), 'send', 'remote-a', 'x'], { env });
    expect(send.stderr).toMatch(/NOT_PERMITTED/);
  });
});
