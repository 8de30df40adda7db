/**
 * A private sshd on 127.0.0.1 for the remote-drive tests and bench/ssh.ts (not part of the API): host and client keys in a temp dir, its
 * own sshd_config, root login by key only. The "remote machine" is this machine over loopback,
 * with a remote data dir that differs from the local one.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface Sshd {
  readonly dir: string;
  readonly port: number;
  readonly identityFile: string;
  readonly options: string[];
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => resolve(false));
  });
}

/** Why the suite cannot run, or undefined when sshd and ssh are installed. */
export function sshdMissing(): string | undefined {
  if (!existsSync('/usr/sbin/sshd')) return 'openssh-server is not installed (apt-get install -y openssh-server)';
  if (spawnSync('ssh', ['-V']).status !== 0) return 'openssh-client is not installed';
  return undefined;
}

export async function startSshd(): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'td-sshd-'));
  const keygen = (file: string): void => {
    const r = spawnSync('ssh-keygen', ['-q', '-N', '', '-t', 'ed25519', '-f', file]);
    if (r.status !== 0) throw new Error(`ssh-keygen failed: ${r.stderr}`);
  };
  keygen(join(dir, 'host_key'));
  keygen(join(dir, 'client_key'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_key.pub')), { mode: 0o600 });
  const port = await freePort();
  writeFileSync(
    join(dir, 'sshd_config'),
    [
      `Port ${port}`,
      'ListenAddress 127.0.0.1',
      `HostKey ${join(dir, 'host_key')}`,
      `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
      'PermitRootLogin prohibit-password',
      'PasswordAuthentication no',
      'KbdInteractiveAuthentication no',
      `PidFile ${join(dir, 'sshd.pid')}`,
      'UsePAM no',
      'StrictModes no',
      'MaxSessions 100',
      'MaxStartups 100',
      'LogLevel ERROR',
      '',
    ].join('\n'),
  );
  mkdirSync('/run/sshd', { recursive: true, mode: 0o755 });
  const child: ChildProcess = spawn('/usr/sbin/sshd', ['-D', '-f', join(dir, 'sshd_config'), '-e'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => {
    err += d.toString();
  });
  for (let i = 0; i < 100 && !(await accepts(port)); i++) {
    if (child.exitCode !== null) throw new Error(`sshd exited: ${err}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    dir,
    port,
    identityFile: join(dir, 'client_key'),
    options: [`UserKnownHostsFile=${join(dir, 'known_hosts')}`, 'StrictHostKeyChecking=accept-new', 'LogLevel=ERROR'],
    async stop() {
      if (child.exitCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGTERM');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
