/**
 * processTree against real processes: the walk down /proc's children lists (when the kernel has
 * them) finds the same live tree as a scan of every process, root first, zombies left out.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { processTree, readStat, treeOf, type ProcStat } from '../../../backends/process/process-tree.js';

const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) c.kill('SIGKILL');
});

function scanAll(): ProcStat[] {
  return readdirSync('/proc')
    .filter((n) => /^\d+$/.test(n))
    .map((n) => readStat(Number(n)))
    .filter((st): st is ProcStat => st !== undefined);
}

describe('processTree', () => {
  it('finds the tree the full scan finds (nested children, a zombie left out), root first', async () => {
    // bash → (sleep, sleep, bash → sleep), and a child that exits unreaped while bash waits on `read`.
    const root = spawn('/bin/bash', ['-c', 'sleep 60 & sleep 60 & bash -c "sleep 60 & wait" & (exit 0) & read -t 60 x'], { stdio: ['pipe', 'ignore', 'ignore'] });
    children.push(root);
    const pid = root.pid as number;
    await expect.poll(() => processTree(pid).filter((p) => p.comm === 'sleep').length, { timeout: 5000 }).toBe(3);
    const walked = processTree(pid);
    expect(walked[0]?.pid).toBe(pid);
    expect(walked.map((p) => p.pid).sort()).toEqual(treeOf(scanAll(), pid).map((p) => p.pid).sort());
    expect(walked.some((p) => p.state === 'Z')).toBe(false);
    expect(processTree(2 ** 22 + 7)).toEqual([]);
  });
});
