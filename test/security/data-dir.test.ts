/**
 * Issue 10, item 9: the data dir. A data dir under /proc hung Driver.open at 100% CPU (Node's
 * recursive mkdir loops there); a regular file or a NUL in the path gave an untyped ENOTDIR /
 * ERR_INVALID_ARG_VALUE; a config error found after the directories were made left `tmux/`, the
 * journal and the audit log behind. Now: DATA_DIR_INVALID with the path and the reason, and
 * nothing created before every check passed. The /proc case runs in a child process (the built
 * library, dist/) with a deadline, so the old code's endless loop fails the test instead of
 * hanging the runner.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, DataDirError, Driver, TmuxDriveError, UsageError } from '../../lib/index.js';
import { allow } from '../helpers.js';
import { ROOT, ensureBuilt, runCli } from '../cli/dist.js';

let root: string;

beforeAll(() => {
  ensureBuilt();
  root = mkdtempSync(join(tmpdir(), 'td-dd-'));
});

const KERNEL_TREES = ['/sys/td-drive', '/dev/td-drive', '/dev/shm/td-drive', '/sys/fs/cgroup/td-drive'] as const;

afterAll(() => {
  rmSync(root, { recursive: true, force: true });
  // Only code that failed these tests could have made them (the old code did, on tmpfs mounts).
  for (const path of KERNEL_TREES) rmSync(path, { recursive: true, force: true });
});

const CONFIG = { allow: [allow('bash', '/bin/bash')] };

/** The rejection of Driver.open, which must be a typed error. */
async function openError(dataDir: unknown, config: object = CONFIG, more: object = {}): Promise<TmuxDriveError> {
  const err = await Driver.open({ dataDir: dataDir as string, config, ...more }).then(
    async (d) => {
      await d.close();
      return undefined;
    },
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(TmuxDriveError);
  return err as TmuxDriveError;
}

/** Driver.open in a child process of the built library, killed after `deadlineMs`. */
function openInChild(dataDir: string, deadlineMs = 15_000): { status: number | null; signal: string | null; out: string } {
  const script = `
    import(${JSON.stringify(join(ROOT, 'dist/lib/index.js'))}).then(async ({ Driver }) => {
      try { const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(CONFIG)} }); await d.close(); console.log('OPENED'); }
      catch (e) { console.log(JSON.stringify({ name: e.constructor.name, code: e.code, context: e.context })); }
    });`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: deadlineMs, killSignal: 'SIGKILL' });
  return { status: r.status, signal: r.signal, out: r.stdout.trim() };
}

describe('data dirs that cannot be one are DATA_DIR_INVALID', () => {
  it('under /proc: refused at once, no endless mkdir', () => {
    const r = openInChild('/proc/td-drive/data');
    expect(r.signal, 'Driver.open did not return within its deadline').toBeNull();
    expect(JSON.parse(r.out)).toMatchObject({ name: 'DataDirError', code: 'DATA_DIR_INVALID', context: { path: '/proc/td-drive/data', reason: expect.stringContaining('/proc') } });
  });

  it.each(KERNEL_TREES.map((p) => [p]))('%s (a kernel tree)', async (path) => {
    const err = await openError(path);
    expect(err).toBeInstanceOf(DataDirError);
    expect(err.code).toBe('DATA_DIR_INVALID');
    expect(err.context).toMatchObject({ path });
    expect(existsSync(path)).toBe(false);
  });

  it('through a symlink that leads into /proc or /sys', async () => {
    const link = join(root, 'to-proc');
    symlinkSync('/proc/self', link);
    const r = openInChild(join(link, 'td'));
    expect(r.signal, 'Driver.open did not return within its deadline').toBeNull();
    expect(JSON.parse(r.out)).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining('/proc') } });
    symlinkSync('/sys/kernel', join(root, 'to-sys'));
    expect((await openError(join(root, 'to-sys'))).code).toBe('DATA_DIR_INVALID');
  });

  it('a regular file, or a path through one', async () => {
    const file = join(root, 'a-file');
    writeFileSync(file, 'not a directory\n');
    const itself = await openError(file);
    expect(itself).toMatchObject({ code: 'DATA_DIR_INVALID', context: { path: file, reason: 'is not a directory' } });
    const through = await openError(join(file, 'sub', 'data'));
    expect(through).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining(`${file} is not a directory`) } });
  });

  it('a NUL byte, an empty string, a non-string', async () => {
    expect(await openError(join(root, 'a\0b'))).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: 'contains a NUL byte' } });
    expect((await openError('')).code).toBe('DATA_DIR_INVALID');
    expect((await openError(42)).code).toBe('DATA_DIR_INVALID');
    expect(readdirSync(root).filter((f) => f.startsWith('a'))).toEqual(['a-file']);
  });

  it('a data dir whose drive sockets would not fit in 107 bytes (every valid name must get a socket)', async () => {
    const base = realpathSync(tmpdir());
    // <dataDir>/tmux/<48 characters>.sock is the data dir plus 59 bytes.
    const fits = `${base}/${'f'.repeat(48 - base.length - 1)}`;
    const tooLong = `${base}/${'g'.repeat(48 - base.length)}`;
    expect(Buffer.byteLength(fits)).toBe(48);
    try {
      const err = await openError(tooLong);
      expect(err).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining('107') } });
      expect(existsSync(tooLong)).toBe(false);
      const d = await Driver.open({ dataDir: fits, config: CONFIG });
      expect(d.dataDir).toBe(fits);
      await d.close();
    } finally {
      rmSync(fits, { recursive: true, force: true });
      rmSync(tooLong, { recursive: true, force: true }); // only code that failed this test made it
    }
  });

  it('a data dir (or its tmux/) that others can write, or that another user owns: they could plant sockets or links', async () => {
    const open = join(root, 'world-writable');
    mkdirSync(open);
    chmodSync(open, 0o777);
    expect(await openError(open)).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining('writable by') } });
    const sockets = join(root, 'open-sockets');
    mkdirSync(join(sockets, 'tmux'), { recursive: true });
    chmodSync(sockets, 0o700);
    chmodSync(join(sockets, 'tmux'), 0o733);
    expect(await openError(sockets)).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining(join(sockets, 'tmux')) } });
    if (process.geteuid?.() === 0) {
      const theirs = join(root, 'theirs');
      mkdirSync(theirs, { mode: 0o700 });
      chownSync(theirs, 65534, 65534);
      expect(await openError(theirs)).toMatchObject({ code: 'DATA_DIR_INVALID', context: { reason: expect.stringContaining('belongs to uid 65534') } });
    }
  });

  it.skipIf(process.getuid?.() === 0)('a directory this user cannot write (root writes anywhere: skipped as root)', async () => {
    const ro = join(root, 'read-only');
    mkdirSync(ro, { mode: 0o500 });
    expect((await openError(join(ro, 'data'))).code).toBe('DATA_DIR_INVALID');
  });
});

describe('tmux-drive doctor on such a data dir', () => {
  it('reports DATA_DIR_INVALID for /proc and finishes (it made the data dir with a recursive mkdir too)', async () => {
    const r = await runCli(['--data-dir', '/proc/td-doctor/data', 'doctor']);
    expect(r.status).toBe(1);
    expect(r.stdout).toMatch(/FAIL\s+data dir\s+DATA_DIR_INVALID: data dir "\/proc\/td-doctor\/data": lies under \/proc/);
  });
});

describe('nothing is created before the config and the options are valid', () => {
  const refusals: ReadonlyArray<readonly [string, object, object, string]> = [
    ['an unknown profile', { allow: [allow('bash', '/bin/bash', { profile: 'no-such-profile' })] }, {}, 'CONFIG_INVALID'],
    ['an allow entry naming an unknown host', { allow: [allow('bash', '/bin/bash', { host: 'nowhere' })] }, {}, 'CONFIG_INVALID'],
    ['a schema error', { allow: [allow('bash', 'bash')] }, {}, 'CONFIG_INVALID'],
    ['a bad tmuxTimeoutMs', CONFIG, { tmuxTimeoutMs: -1 }, 'BAD_ARGUMENT'],
    ['a tmuxTimeoutMs a timer cannot hold', CONFIG, { tmuxTimeoutMs: 2 ** 31 }, 'BAD_ARGUMENT'],
    ['a bad reattach', CONFIG, { reattach: 'some' }, 'BAD_ARGUMENT'],
    ['a bad adoptOrphans', CONFIG, { adoptOrphans: 'yes' }, 'BAD_ARGUMENT'],
  ];

  it.each(refusals)('%s: a typed error, and the data dir (tmux/, journal, audit log) does not exist', async (_what, config, more, code) => {
    const dataDir = join(root, `fresh-${code}-${Math.random().toString(36).slice(2)}`);
    const err = await openError(dataDir, config, more);
    expect(err.code).toBe(code);
    expect(err instanceof ConfigError || err instanceof UsageError).toBe(true);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('an existing data dir gains nothing from a refused open', async () => {
    const dataDir = join(root, 'existing');
    mkdirSync(dataDir);
    await openError(dataDir, { allow: [allow('bash', '/bin/bash', { profile: 'no-such-profile' })] });
    expect(readdirSync(dataDir)).toEqual([]);
  });

  it('a relative dataDir option is resolved against the current directory (a relative one in a config is refused)', async () => {
    const before = process.cwd();
    process.chdir(root);
    try {
      const d = await Driver.open({ dataDir: 'relative-data', config: CONFIG });
      expect(d.dataDir).toBe(join(realpathSync(root), 'relative-data'));
      await d.close();
      const err = await openError(undefined, { ...CONFIG, dataDir: 'relative-data' });
      expect(err).toMatchObject({ code: 'CONFIG_INVALID', issues: [{ path: 'dataDir' }] });
    } finally {
      process.chdir(before);
    }
  });

  it('creates the data dir and tmux/ mode 0700, one component at a time', async () => {
    const dataDir = join(root, 'made', 'deep', 'data');
    const d = await Driver.open({ dataDir, config: CONFIG });
    await d.close();
    const { statSync } = await import('node:fs');
    for (const dir of [join(root, 'made'), join(root, 'made', 'deep'), dataDir, join(dataDir, 'tmux')]) expect(statSync(dir).mode & 0o777).toBe(0o700);
  });
});
