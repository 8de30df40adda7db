/**
 * `socketAnswers` decides whether a drive's tmux server is gone, and a server judged gone is ended
 * (reconcile's endUnfinishedLaunch SIGKILLs what names its socket). Only a refused or missing socket
 * proves no server: a wedged server whose accept queue is full refuses a non-blocking connect with
 * EAGAIN, and must still count as alive. A real tmux 3.3a server, SIGSTOPped, its queue filled.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { socketAnswers } from '../../../backends/tmux/tmux-host.js';
import { killGone, processesMentioning } from '../../helpers.js';

let dir: string | undefined;
let serverPid: number | undefined;
const held: Socket[] = [];

afterEach(() => {
  for (const s of held.splice(0)) s.destroy();
  if (serverPid !== undefined) {
    try {
      process.kill(serverPid, 'SIGCONT');
      process.kill(serverPid, 'SIGKILL');
    } catch {
      /* gone */
    }
    serverPid = undefined;
  }
  // A server whose pid was never learnt (a set-up step failed) is found by its socket's directory.
  if (dir) {
    killGone(processesMentioning(dir));
    rmSync(dir, { recursive: true, force: true });
  }
  dir = undefined;
});

function startServer(): string {
  dir = mkdtempSync(join(tmpdir(), 'td-sockans-'));
  const sock = join(dir, 's.sock');
  execFileSync('tmux', ['-S', sock, '-f', '/dev/null', 'new-session', '-d', '-s', 'x', 'sleep 600'], { cwd: '/' });
  serverPid = Number(execFileSync('tmux', ['-S', sock, 'display-message', '-p', '#{pid}'], { encoding: 'utf8' }).trim());
  return sock;
}

/** Whether `pid` has exited (a zombie has: its descriptors, the listening socket too, are closed). */
function exited(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'latin1').replace(/^.*\) /s, '').startsWith('Z');
  } catch {
    return true;
  }
}

/** Opens connections to `sock` until the kernel refuses one with EAGAIN (the accept queue is full). */
async function fillQueue(sock: string): Promise<string> {
  for (let i = 0; i < 5000; i++) {
    const code = await new Promise<string>((resolve) => {
      const s = connect(sock);
      s.once('connect', () => {
        held.push(s);
        resolve('connected');
      });
      s.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? 'error'));
    });
    if (code !== 'connected') return code;
  }
  return 'never full';
}

describe('socketAnswers', () => {
  it('counts a wedged server with a full accept queue as alive (EAGAIN is not "gone")', async () => {
    const sock = startServer();
    process.kill(serverPid!, 'SIGSTOP');
    expect(await fillQueue(sock)).toBe('EAGAIN');
    expect(await socketAnswers(sock, 2000)).toBe(true);
    // and the server is still there
    expect(() => process.kill(serverPid!, 0)).not.toThrow();
  });

  it('answers true for a running server, false for a socket nobody listens on and for no socket', async () => {
    const sock = startServer();
    expect(await socketAnswers(sock, 2000)).toBe(true);
    const pid = serverPid!;
    process.kill(pid, 'SIGKILL');
    serverPid = undefined;
    // tmux 3.3a leaves its socket file behind when killed: refused, once the server has exited (a
    // SIGKILL takes effect when the process next runs: waited for, not a fixed 200 ms).
    await expect.poll(() => exited(pid), { timeout: 10_000, interval: 20 }).toBe(true);
    expect(existsSync(sock)).toBe(true);
    expect(await socketAnswers(sock, 2000)).toBe(false);
    rmSync(sock);
    expect(await socketAnswers(sock, 2000)).toBe(false);
  });
});
