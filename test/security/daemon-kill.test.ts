/**
 * kill() ends everything a drive started, also a program that daemonizes: a new session (setsid),
 * a double fork, SIGHUP and SIGTERM ignored. The pid namespace of the jail holds it: when the
 * pane's bwrap goes, the kernel ends every process in the namespace.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from './probe.js';

let t: TestDriver;
beforeAll(async () => {
  t = await openDriver([allow('bash', '/bin/bash', BASH_ENTRY)]);
});
afterAll(async () => {
  await t?.cleanup();
});

/** comm, parent and session id of a host pid (/proc/<pid>/stat). */
function statOf(pid: number): { comm: string; ppid: number; sid: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), ppid: Number(f[1]), sid: Number(f[3]) };
}

function childrenOf(parents: readonly number[]): number[] {
  return readdirSync('/proc')
    .map(Number)
    .filter((pid) => Number.isInteger(pid) && pid > 0)
    .filter((pid) => {
      try {
        return parents.includes(statOf(pid).ppid);
      } catch {
        return false;
      }
    });
}

async function settleUntil(check: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return check();
}

describe('kill() and daemons', () => {
  it('leaves no process behind for a program that daemonizes', async () => {
    const marker = `td-daemon-${randomBytes(5).toString('hex')}`;
    const s = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'daemonizer' });
    await ready(s);
    const daemon = [
      'import os, signal, sys, time',
      'if os.fork(): sys.exit(0)',
      'os.setsid()',
      'if os.fork(): sys.exit(0)',
      'signal.signal(signal.SIGHUP, signal.SIG_IGN)',
      'signal.signal(signal.SIGTERM, signal.SIG_IGN)',
      'os.chdir("/")',
      'for fd in (0, 1, 2): os.close(fd)',
      'time.sleep(600)',
    ].join('\n');
    const r = await probe(
      s,
      workspaceOf(t.dataDir),
      [
        `python3 -c '${daemon}' ${marker}-py`,
        // The shell way: a subshell that backgrounds a setsid'd, nohup'd sleeper and exits.
        `( setsid nohup bash -c 'trap "" HUP TERM; exec -a ${marker}-sh sleep 600' </dev/null >/dev/null 2>&1 & )`,
        'echo launched',
      ].join('\n'),
    );
    expect(r.out).toContain('launched');
    expect(await settleUntil(() => processesMentioning(`${marker}-py`).length === 1 && processesMentioning(`${marker}-sh`).length === 1, 3000)).toBe(true);
    const daemons = processesMentioning(marker);
    // This drive's bwrap processes (their argv names the data dir) and the shell they run.
    const bwraps = processesMentioning(t.dataDir).filter((pid) => statOf(pid).comm === 'bwrap');
    const shell = childrenOf(bwraps).find((pid) => statOf(pid).comm === 'bash');
    expect(shell).toBeDefined();
    for (const pid of daemons) {
      // They left the shell's session (and its terminal), and were re-parented to the jail's
      // init (bwrap), not to the host's.
      expect(statOf(pid).sid).not.toBe(statOf(shell!).sid);
      expect(bwraps).toContain(statOf(pid).ppid);
    }

    await s.kill();
    expect(processesMentioning(marker)).toEqual([]);
    expect(processesMentioning(t.dataDir)).toEqual([]);
  });
});
