/**
 * Which processes a signal goes to, from a process tree as /proc (local or remote) gives it. The
 * trees are written by hand (the selection is the unit); signals to real programs through a real
 * tty are test/backends/spawn/spawn-backend.test.ts's and test/integration's.
 */
import { describe, expect, it } from 'vitest';
import type { ProcStat } from '../../../backends/process/process-tree.js';
import { signalForeground } from '../../../backends/process/signal-foreground.js';

function proc(pid: number, comm: string, pgrp: number, tpgid: number, ppid = 1): ProcStat {
  return { pid, comm, state: 'S', ppid, pgrp, sid: 10, tpgid, cpuTicks: 0, startTicks: 1 };
}

async function targets(tree: ProcStat[], name: 'interrupt' | 'kill' = 'interrupt'): Promise<{ pids: number[]; signal: string }> {
  let sent: { pids: number[]; signal: string } = { pids: [], signal: '' };
  await signalForeground(tree, name, (pids, signal) => {
    sent = { pids, signal };
  });
  return sent;
}

describe('signalForeground', () => {
  it("sends to the terminal's foreground group only, as a keyboard would (not the shell, not a background job)", async () => {
    // bash (group 10) runs `sleep 99 &` (group 20) and then `vim` in the foreground (group 30).
    const tree = [proc(10, 'bash', 10, 30), proc(20, 'sleep', 20, 30, 10), proc(30, 'vim', 30, 30, 10), proc(31, 'vim-helper', 30, 30, 30)];
    expect(await targets(tree)).toEqual({ pids: [30, 31], signal: 'SIGINT' });
  });

  it('never signals the bwrap wrappers between the terminal and the program', async () => {
    // The jail's bwrap processes share the program's group: SIGINT to them would end the jail.
    const tree = [proc(5, 'bwrap', 5, 5), proc(6, 'bwrap', 5, 5, 5), proc(7, 'python3', 5, 5, 6)];
    expect(await targets(tree, 'kill')).toEqual({ pids: [7], signal: 'SIGKILL' });
  });

  it('falls back to the whole tree but its wrappers when no process of it is in the foreground group', async () => {
    const tree = [proc(5, 'bwrap', 5, 99), proc(7, 'python3', 7, 99, 5), proc(8, 'worker', 7, 99, 7)];
    expect(await targets(tree)).toEqual({ pids: [7, 8], signal: 'SIGINT' });
  });
});
