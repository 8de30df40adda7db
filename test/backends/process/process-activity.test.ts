/**
 * Sampling real process trees from /proc: a CPU loop is busy, a sleeper is idle, a program
 * blocked reading its terminal (in a private tmux server) is seen reading it.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sampleProcessActivity } from '../../../backends/process/process-activity.js';
import { compareActivity } from '../../../lib/perceive/activity.js';

const children: ChildProcess[] = [];
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Each root leads its own process group, so the whole tree ends with it (no loop left burning CPU). */
function start(cmd: string, args: string[]): number {
  const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
  children.push(child);
  if (child.pid === undefined) throw new Error(`${cmd} did not start`);
  return child.pid;
}

afterAll(() => {
  for (const c of children) {
    try {
      if (c.pid !== undefined) process.kill(-c.pid, 'SIGKILL');
    } catch {
      /* gone */
    }
  }
});

describe('sampleProcessActivity', () => {
  it('a CPU loop in a child of the root is busy (cpu); a sleeper is idle', async () => {
    const busyRoot = start('bash', ['-c', 'sh -c "while :; do :; done" & wait']);
    const idleRoot = start('bash', ['-c', 'sleep 30 & wait']);
    await sleep(200);
    const b0 = sampleProcessActivity(busyRoot, 0);
    const i0 = sampleProcessActivity(idleRoot, 0);
    await sleep(800);
    const b1 = sampleProcessActivity(busyRoot, 800);
    const i1 = sampleProcessActivity(idleRoot, 800);
    expect(b1.processes.length).toBe(2);
    // Runnable in both samples: busy even when a loaded machine gives it little CPU time.
    expect(b1.runnable).toBe(true);
    expect(compareActivity(b0, b1)).toMatchObject({ busy: 'cpu', since: 0, until: 800 });
    expect(compareActivity(i0, i1).busy).toBe('idle');
    expect(i1.readingTerminal).toBe(false);
  });

  it('a vanished root gives an empty sample', () => {
    expect(sampleProcessActivity(2 ** 22 + 12345, 0)).toEqual({ at: 0, processes: [], readingTerminal: false, runnable: false, readsNothing: false });
  });

  const hasTmux = spawnSync('tmux', ['-V']).status === 0;
  it.runIf(hasTmux)('a program blocked reading its terminal, and bash at its prompt, are reading the terminal', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'td-act-'));
    const sock = join(dir, 's');
    const tmux = (...args: string[]): string => spawnSync('tmux', ['-S', sock, '-f', '/dev/null', ...args], { encoding: 'utf8' }).stdout.trim();
    try {
      // /usr/bin/python3, not a PATH lookup: a pyenv shim on PATH is a bash script that takes a while to exec python.
      tmux('new-session', '-d', '-s', 'py', '-x', '80', '-y', '24', '/usr/bin/python3', '-c', 'input("Name: ")');
      tmux('new-session', '-d', '-s', 'sh', '-x', '80', '-y', '24', 'bash', '--norc', '--noprofile');
      tmux('new-session', '-d', '-s', 'sl', '-x', '80', '-y', '24', 'sleep', '30');
      const pid = (s: string): number => Number(tmux('display-message', '-p', '-t', s, '#{pane_pid}'));
      // Each program reaches its read in its own time on a loaded machine: look until it does (bounded).
      const reading = async (s: string): Promise<boolean> => {
        for (let i = 0; i < 50; i++) {
          if (sampleProcessActivity(pid(s), 0).readingTerminal) return true;
          await sleep(100);
        }
        return false;
      };
      expect(await reading('py')).toBe(true);
      expect(await reading('sh')).toBe(true);
      expect(sampleProcessActivity(pid('sl'), 0).readingTerminal).toBe(false);
    } finally {
      tmux('kill-server');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
