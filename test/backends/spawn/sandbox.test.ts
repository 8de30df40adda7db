/**
 * A spawn drive with the bwrap argv the launch policy builds (lib/policy/sandbox.ts): the program
 * runs jailed in its own pid namespace, signals reach it rather than the wrapper, its exit status
 * comes through bwrap, and kill ends even what left the pty's session (setsid).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { sandboxArgv } from '../../../lib/policy/sandbox.js';
import { findExecutable } from '../../../lib/launch/plan-launch.js';
import { processTree } from '../../../backends/process/process-tree.js';
import { processesMentioning } from '../../helpers.js';
import { openSpawn, type SpawnDrive } from './spawn-harness.js';

const bwrap = findExecutable('bwrap', '/usr/bin:/bin');
const drives: SpawnDrive[] = [];
afterEach(async () => {
  for (const d of drives.splice(0)) await d.close().catch(() => undefined);
});

/** The drive's directory plays the data dir: its `workspace` is the only part the jail shows. */
function jailed(program: readonly string[]) {
  return (dataDir: string): string[] => {
    const workspace = join(dataDir, 'workspace');
    mkdirSync(workspace, { recursive: true });
    writeFileSync(join(dataDir, 'journal.db'), 'secret');
    return sandboxArgv({
      bwrapPath: bwrap as string,
      scope: { filesystem: 'workspace', paths: [], network: 'none', hosts: [], credentialPaths: [], uid: 'dedicated' },
      dataDir,
      workspace,
      userHome: homedir(),
      cwd: workspace,
      argv: program,
    });
  };
}

async function jailedBash(): Promise<SpawnDrive> {
  const d = await openSpawn([], { env: { PS1: '$ ' }, argvFor: jailed(['/bin/bash', '--norc', '--noprofile']) });
  drives.push(d);
  expect((await d.session.wait({ forText: '$ ', timeoutMs: 10_000 })).outcome).toBe('text');
  return d;
}

describe.skipIf(!bwrap)('a spawn drive in the bwrap sandbox', () => {
  it('runs jailed: its own pid namespace, the workspace visible, the data dir hidden', async () => {
    const { session, backend, dir } = await jailedBash();
    expect(processTree(backend.panePid() as number)[0]?.comm).toBe('bwrap');
    await session.sendText('echo "pid=$$ pwd=$PWD"; ls -A ' + dir, { submit: true });
    expect((await session.wait({ forText: /^workspace$/m, timeoutMs: 5000 })).outcome).toBe('text');
    const screen = session.read().content;
    expect(screen).toMatch(new RegExp(`^pid=\\d pwd=${dir}/workspace$`, 'm'));
    expect(screen).not.toContain('journal.db');
  });

  it('delivers a signal to the foreground program, not to bwrap, and reports the exit status through it', async () => {
    const { session } = await jailedBash();
    await session.sendText('sleep 100', { submit: true });
    await session.wait({ forIdleMs: 300 });
    await session.signal('interrupt');
    expect((await session.wait({ forText: '$ ', timeoutMs: 5000 })).outcome).toBe('text');
    await session.sendText('echo "rc=$?"; exit 5', { submit: true });
    expect((await session.wait({ forExit: true, timeoutMs: 5000 })).outcome).toBe('exit');
    expect(session.read().content).toMatch(/^rc=130$/m);
    expect(session.exit).toEqual({ code: 5, signal: null });
  });

  it('kill leaves nothing, not even a daemon that left the session with setsid', async () => {
    const { session, backend } = await jailedBash();
    await session.sendText('sleep 7781 & (sleep 7782 &) ; setsid sleep 7783 < /dev/null > /dev/null 2>&1 &', { submit: true });
    await session.wait({ forIdleMs: 300 });
    const markers = ['sleep\x007781', 'sleep\x007782', 'sleep\x007783'];
    for (const m of markers) expect(processesMentioning(m).length, m).toBe(1);
    const pid = backend.panePid() as number;
    await session.kill();
    for (const m of markers) expect(processesMentioning(m), m).toEqual([]);
    expect(processTree(pid)).toEqual([]);
  });
});
