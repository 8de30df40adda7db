/**
 * Ways to launch something other than what the operator allowed, each refused with a typed error
 * before anything runs: unknown ids, swapped or changed binaries, arguments outside the pinned
 * prefix, environment the entry does not pass, scope from the caller, planted symlinks in the
 * workspace. After every refusal, no process and no tmux socket of the driver exists.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Driver, PolicyError, TmuxDriveError, UsageError } from '../../lib/index.js';
import { planLaunch } from '../../lib/launch/plan-launch.js';
import { validateConfig } from '../../lib/policy/config.js';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from './probe.js';

const sha256 = (path: string): string => `sha256:${createHash('sha256').update(readFileSync(realpathSync(path))).digest('hex')}`;
const PYTHON = realpathSync('/usr/bin/python3');

let t: TestDriver;
let links: string;

beforeAll(async () => {
  links = mkdtempSync('/var/tmp/td-sec-links-');
  symlinkSync('/bin/bash', join(links, 'python3')); // named like python3, is bash
  t = await openDriver([
    allow('bash', '/bin/bash', BASH_ENTRY),
    allow('fake-python', join(links, 'python3'), { match: { path: join(links, 'python3'), hash: sha256(PYTHON) } }),
    allow('pinned-bash', '/bin/bash', { ...BASH_ENTRY, match: { path: '/bin/bash', hash: sha256('/bin/bash') } }),
    allow('stale-pin', '/bin/bash', { match: { path: '/bin/bash', hash: `sha256:${'0'.repeat(64)}` } }),
    allow('python-q', PYTHON, { match: { path: PYTHON, argsPrefix: ['-q', '-I'] } }),
    allow('env-bash', '/bin/bash', { ...BASH_ENTRY, passEnv: ['MY_SETTING', 'NODE_OPTIONS', 'LD_PRELOAD', 'PYTHONSTARTUP', 'PYTHONWARNINGS', 'GIT_CONFIG_PARAMETERS', 'CLAUDE_CODE_ENTRYPOINT', 'TMUX_DRIVE_DEBUG'] }),
  ]);
});

afterAll(async () => {
  await t?.cleanup();
  rmSync(links, { recursive: true, force: true });
});

/** The rejection of `promise`, which must be a typed error. */
async function rejection(promise: Promise<unknown>): Promise<TmuxDriveError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TmuxDriveError);
  return err as TmuxDriveError;
}

function nothingRunning(): void {
  expect(processesMentioning(t.dataDir)).toEqual([]);
  expect(readdirSync(join(t.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'))).toEqual([]);
}

describe('the launch bypass corpus', () => {
  it('refuses an id that is not on the allowlist', async () => {
    const err = await rejection(t.driver.create({ allowId: 'python3' }));
    expect(err).toBeInstanceOf(PolicyError);
    expect(err.code).toBe('NOT_ALLOWED');
    nothingRunning();
  });

  it("refuses a symlink to bash pinned with python3's hash", async () => {
    const err = await rejection(t.driver.create({ allowId: 'fake-python', args: ['-c', 'print(1)'] }));
    expect(err).toMatchObject({ code: 'HASH_MISMATCH', context: { binary: '/usr/bin/bash' } });
    nothingRunning();
  });

  it('refuses a binary whose pinned hash no longer matches, and launches one that does', async () => {
    expect((await rejection(t.driver.create({ allowId: 'stale-pin' }))).code).toBe('HASH_MISMATCH');
    nothingRunning();
    const s = await t.driver.create({ allowId: 'pinned-bash', args: BASH_ARGS, name: 'pinned' });
    await ready(s);
    await s.kill();
    nothingRunning();
  });

  it('refuses arguments outside the pinned prefix', async () => {
    for (const args of [[], ['-c', 'import os'], ['-I', '-q'], ['-q'], ['-qI']]) {
      expect((await rejection(t.driver.create({ allowId: 'python-q', args }))).code).toBe('NOT_ALLOWED');
    }
    expect((await rejection(t.driver.create({ allowId: 'python-q', args: '-q -I' as never }))).code).toBe('BAD_ARGUMENT');
    expect((await rejection(t.driver.create({ allowId: 'python-q', args: ['-q', '-I', 'a\0b'] }))).code).toBe('BAD_ARGUMENT');
    nothingRunning();
  });

  it('refuses caller environment the entry does not pass', async () => {
    const err = await rejection(t.driver.create({ allowId: 'bash', env: { MY_SETTING: '1' } }));
    expect(err).toMatchObject({ code: 'NOT_ALLOWED', context: { variable: 'MY_SETTING' } });
    nothingRunning();
  });

  it('refuses scrubbed variables even when the operator put them in passEnv', async () => {
    for (const name of ['NODE_OPTIONS', 'LD_PRELOAD', 'PYTHONSTARTUP', 'PYTHONWARNINGS', 'GIT_CONFIG_PARAMETERS', 'CLAUDE_CODE_ENTRYPOINT', 'TMUX_DRIVE_DEBUG']) {
      const err = await rejection(t.driver.create({ allowId: 'env-bash', env: { [name]: '--require /tmp/evil.js' } }));
      expect(err).toMatchObject({ code: 'NOT_ALLOWED', context: { variable: name } });
      expect(err.message).not.toContain('/tmp/evil.js');
    }
    nothingRunning();
  });

  it('does not let a config name an exported bash function in passEnv', () => {
    expect(() => validateConfig({ allow: [allow('x', '/bin/bash', { passEnv: ['BASH_FUNC_ls%%'] })] }, { fromFile: false })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INVALID' }),
    );
  });

  it('takes no scope, sandbox switch or command from the caller', async () => {
    for (const extra of [
      { scope: { filesystem: 'full', network: 'full' } },
      { unsafeDisableSandbox: true },
      { argv: ['/bin/sh', '-c', 'id'] },
      { command: 'id' },
      { shell: true },
      { passEnv: ['NODE_OPTIONS'] },
    ]) {
      const err = await rejection(t.driver.create({ allowId: 'bash', ...extra } as never));
      expect(err).toBeInstanceOf(UsageError);
      expect(err.code).toBe('BAD_ARGUMENT');
    }
    await expect(Driver.open({ dataDir: t.dataDir, config: { unsafeDisableSandbox: true } })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
    nothingRunning();
  });

  it('refuses project names that are paths', async () => {
    for (const project of ['../x', 'a/b', '.hidden', '', '/etc']) {
      expect((await rejection(t.driver.create({ allowId: 'bash', project }))).code).toBe('BAD_ARGUMENT');
    }
    nothingRunning();
  });

  it('launches nothing without bubblewrap', () => {
    const config = validateConfig({ allow: [allow('bash', '/bin/bash')] }, { fromFile: false });
    expect(() => planLaunch({ config, dataDir: t.dataDir, bwrapPath: undefined }, { allowId: 'bash' })).toThrow(expect.objectContaining({ code: 'SANDBOX_UNAVAILABLE' }));
  });
});

describe('symlinks planted in the workspace', () => {
  it('a drive cannot plant a project, and a planted project or cwd link is refused or clamped', async () => {
    const ws = workspaceOf(t.dataDir);
    const target = mkdtempSync('/var/tmp/td-sec-target-');
    try {
      const s = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'planter' });
      await ready(s);
      const r = await probe(
        s,
        ws,
        [
          `mkdir -p projects; ln -s ${target} projects/evil; echo "plant-project=$?"`,
          `ln -s ${target} escape; echo "plant-cwd=$?"`,
          `ln -s / root-link; echo "plant-root=$?"`,
        ].join('\n'),
      );
      // projects/ is read-only to a session on the shared workspace.
      expect(r.out).toMatch(/plant-project=1/);
      expect(r.out).toMatch(/plant-cwd=0/);
      await s.kill();

      // A link planted before (by an older version, or an operator by mistake) is refused.
      symlinkSync(target, join(ws, 'projects', 'evil'));
      const err = await rejection(t.driver.create({ allowId: 'bash', args: BASH_ARGS, project: 'evil' }));
      expect(err).toMatchObject({ code: 'NOT_ALLOWED', context: { project: 'evil' } });
      nothingRunning();

      // A cwd through a planted link is clamped to the workspace; nothing is created at its target.
      const c = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'clamped', cwd: 'escape/sub' });
      await ready(c);
      const where = await probe(c, ws, 'pwd');
      expect(where.out.trim()).toBe(ws);
      expect(existsSync(join(target, 'sub'))).toBe(false);
      const d = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'clamped2', cwd: 'root-link/etc/td-sec' });
      await ready(d);
      expect((await probe(d, ws, 'pwd')).out.trim()).toBe(ws);
      expect(existsSync('/etc/td-sec')).toBe(false);
      await c.kill();
      await d.kill();

      // A real subdirectory is honoured.
      mkdirSync(join(ws, 'src'), { recursive: true });
      const e = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'subdir', cwd: 'src/deeper' });
      await ready(e);
      expect((await probe(e, ws, 'pwd')).out.trim()).toBe(join(ws, 'src', 'deeper'));
      await e.kill();
      nothingRunning();
    } finally {
      rmSync(target, { recursive: true, force: true });
    }
  });
});
