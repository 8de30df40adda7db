/**
 * The core against real programs, each drive in the bwrap sandbox as the default config has it,
 * on both backends: a per-drive tmux server (durable) and a host-owned pty (spawn). One suite:
 * callers never branch on the backend; only what spawn cannot do (a tmux socket, a fidelity check
 * against tmux's grid) is checked for tmux alone.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, Driver, PolicyError, Session, TmuxDriveError, UsageError } from '../../lib/index.js';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];

describe.each(['tmux', 'spawn'] as const)('a drive of bash on the %s backend', (backend) => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' }, backend })]);
  });
  afterAll(async () => t.cleanup());

  it('launches, types, reads the answer from the mirror, and kills with nothing left behind', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'basic' });
    const ready = await s.wait({ forText: '$ ', timeoutMs: 10_000 });
    expect(ready.outcome).toBe('text');
    await s.sendText('echo $((6 * 7))', { submit: true });
    const got = await s.wait({ forText: /^42$/m, timeoutMs: 10_000 });
    expect(got.outcome).toBe('text');
    // The wait ends on the line 42; bash's next prompt may come in a later chunk: let it settle.
    expect((await s.wait({ forIdleMs: 300, timeoutMs: 10_000 })).outcome).toBe('idle');
    const screen = s.read();
    // The default read is the digest (drive.readMode): trailing blank rows are dropped.
    expect(screen.content).toMatch(/^\$ echo \$\(\(6 \* 7\)\)\n42\n\$$/);
    expect(screen.untrusted).toBe(true);
    expect(t.driver.list()).toEqual([expect.objectContaining({ id: 'basic', allowId: 'bash', backend, durable: backend === 'tmux', state: 'live' })]);
    const socket = join(t.dataDir, 'tmux', 'basic.sock');
    if (backend === 'tmux') expect(processesMentioning(socket).length).toBeGreaterThan(0);
    await s.kill();
    expect(processesMentioning(socket)).toEqual([]);
    expect(processesMentioning(t.dataDir)).toEqual([]);
    expect(existsSync(socket)).toBe(false);
    expect(t.driver.list()[0]?.state).toBe('exited');
    await expect(s.sendText('x')).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
    // Reads and waits on a killed session say why, not that some inner part is gone.
    expect(() => s.read()).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED', message: expect.stringContaining('was killed') }));
    await expect(s.wait({ forText: 'x' })).rejects.toMatchObject({ code: 'SESSION_CLOSED', message: expect.stringContaining('was killed') });
  });

  it('reports the exit code and signal of the program', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'exits' });
    await s.wait({ forText: '$ ' });
    await s.sendText('exit 7', { submit: true });
    const r = await s.wait({ forExit: true, timeoutMs: 10_000 });
    expect(r.outcome).toBe('exit');
    expect(s.status()).toMatchObject({ state: 'exited', reason: 'pane_dead', exit: { code: 7, signal: null } });
    await s.kill();
  });

  it('waits for text after the echo of the command that prints it, not on the echo', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'echo-wait' });
    await s.wait({ forText: '$ ' });
    await s.sendText('sleep 1.5; echo FIN', { submit: true });
    const r = await s.wait({ forText: 'FIN', timeoutMs: 10_000 });
    expect(r.outcome).toBe('text');
    expect(r.elapsedMs).toBeGreaterThanOrEqual(1200);
    await s.kill();
  });

  it('delivers signals to the foreground program, not to the sandbox wrapper', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'signals' });
    await s.wait({ forText: '$ ' });
    await s.sendText('sleep 100', { submit: true });
    await s.wait({ forIdleMs: 300 });
    await s.signal('interrupt');
    // bash, like a keyboard ^C, gets its prompt back; the interrupted sleep's status is 130.
    expect((await s.wait({ forText: '$ ', timeoutMs: 5000 })).outcome).toBe('text');
    await s.sendText('echo "rc=$?"', { submit: true });
    const r = await s.wait({ forText: 'rc=130', timeoutMs: 5000 });
    expect(r.outcome).toBe('text');
    expect(s.status().state).not.toBe('exited');
    await s.signal('kill');
    expect((await s.wait({ forExit: true, timeoutMs: 5000 })).outcome).toBe('exit');
    await s.kill();
  });

  it('resizes the pane and keeps the mirror exact', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'resize', cols: 80, rows: 24 });
    await s.wait({ forText: '$ ' });
    await s.sendText('for i in $(seq 1 40); do printf "line %03d \\e[1;3%dmcolour\\e[0m %s\\n" $i $((i % 8)) $(printf "x%.0s" $(seq 1 $i)); done', { submit: true });
    await s.wait({ forText: 'line 040', timeoutMs: 10_000 });
    await s.wait({ forIdleMs: 200 });
    await s.resize(50, 15);
    await s.wait({ forIdleMs: 200 });
    expect(s.read()).toMatchObject({ cols: 50, rows: 15 });
    await s.sendText('stty size', { submit: true });
    await s.wait({ forText: '15 50', timeoutMs: 5000 });
    await s.wait({ forIdleMs: 200 });
    if (backend === 'tmux') expect((await s.fidelity()).equal).toBe(true);
    else await expect(s.fidelity()).rejects.toMatchObject({ code: 'UNSUPPORTED' });
    await s.kill();
  });
});

describe('typed errors for bad input, with nothing left running', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash')]);
  });
  afterAll(async () => t.cleanup());

  it('rejects an unknown allowId with a PolicyError that names what is allowed', async () => {
    const err = await t.driver.create({ allowId: 'vim' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PolicyError);
    expect(err).toMatchObject({ code: 'NOT_ALLOWED', message: expect.stringContaining('allowed: bash') });
  });

  it('rejects bad sizes, names and options', async () => {
    await expect(t.driver.create({ allowId: 'bash', cols: 0 })).rejects.toMatchObject({ code: 'BAD_SIZE' });
    await expect(t.driver.create({ allowId: 'bash', rows: 1.5 })).rejects.toMatchObject({ code: 'BAD_SIZE' });
    await expect(t.driver.create({ allowId: 'bash', name: '../x' })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(t.driver.create({ allowId: 'bash', shell: true } as never)).rejects.toBeInstanceOf(UsageError);
  });

  it('rejects a name or an objective that is not a string, before anything is journaled', async () => {
    await expect(t.driver.create({ allowId: 'bash', name: 5 } as never)).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(t.driver.create({ allowId: 'bash', name: { toString: () => 'looks-fine' } } as never)).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    const throwing = { toString: () => { throw new Error('not a name'); } };
    await expect(t.driver.create({ allowId: 'bash', name: throwing } as never)).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(t.driver.create({ allowId: 'bash', objective: { goal: 'x' } } as never)).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    expect(t.driver.list()).toEqual([]);
  });

  it('rejects unknown key names and bad resize/signal arguments on a live session', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'keys' });
    await expect(s.sendKeys('Entr')).rejects.toMatchObject({ code: 'UNKNOWN_KEY_NAME' });
    await expect(s.sendKeys(['Up', 'kill-server'])).rejects.toMatchObject({ code: 'UNKNOWN_KEY_NAME' });
    await expect(s.resize(10_000, 10)).rejects.toMatchObject({ code: 'BAD_SIZE' });
    await expect(s.signal('stop' as never)).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(s.wait({ timeoutMs: -1 })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    expect(s.status().state).not.toBe('exited');
    await s.kill();
    expect(processesMentioning(t.dataDir)).toEqual([]);
  });

  it('rejects a config with unknown keys, listing every issue with its path', async () => {
    const err = await Driver.open({ dataDir: t.dataDir, config: { allow: [], wroker: {}, defaults: { cols: 'wide' } } as never }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError).issues.map((i) => i.path);
    expect(issues).toEqual(expect.arrayContaining(['wroker', 'defaults.cols']));
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
  });

  it('refuses to disable the sandbox through the API', async () => {
    await expect(Driver.open({ dataDir: t.dataDir, config: { unsafeDisableSandbox: true } })).rejects.toMatchObject({ code: 'CONFIG_INVALID' });
  });

  it('launches nothing with an empty allowlist', async () => {
    const empty = await openDriver([]);
    await expect(empty.driver.create({ allowId: 'shell' })).rejects.toMatchObject({ code: 'NOT_ALLOWED', message: expect.stringContaining('empty') });
    await empty.cleanup();
  });

  it('leaves nothing running after all of the above', () => {
    expect(processesMentioning(t.dataDir)).toEqual([]);
  });
});

/**
 * The sessions a driver makes, caught as it wires each one to the journal (its first `on`): a
 * create that fails never hands its session out, and these tests must still reach it.
 */
function watchSessionsMade(onMade: (session: Session) => void = () => undefined): { made: Session[]; restore(): void } {
  const made: Session[] = [];
  const original = Session.prototype.on;
  const spy = vi.spyOn(Session.prototype, 'on').mockImplementation(function (this: Session, ...args: Parameters<Session['on']>) {
    if (!made.includes(this)) {
      made.push(this);
      onMade(this);
    }
    return original.apply(this, args);
  });
  return { made, restore: () => spy.mockRestore() };
}

describe('a create that fails or is overtaken by close()', () => {
  it('disposes the session of a launch that failed: its mirror is released, the row failed, the name free again', async () => {
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
    // A tmux server the journal does not know sits on the drive's socket (started after open, so
    // not an orphan): the real tmux launch finds it answering and refuses, after the session is made.
    const socket = join(t.dataDir, 'tmux', 'taken.sock');
    const watch = watchSessionsMade();
    try {
      expect(spawnSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'squatter', '--', 'sleep', '600']).status).toBe(0);
      const err = await t.driver.create({ allowId: 'bash', args: BASH, name: 'taken' }).catch((e: unknown) => e);
      expect(err).toMatchObject({ code: 'NAME_IN_USE' });
      expect(watch.made).toHaveLength(1);
      // A disposed mirror refuses to be read: before the fix it lived on, never to be disposed.
      expect(() => watch.made[0]!.read()).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }));
      watch.restore();
      spawnSync('tmux', ['-S', socket, 'kill-server']);
      // kill-server returns before the server has gone; a server still answering keeps the name.
      await expect.poll(() => spawnSync('tmux', ['-S', socket, 'list-sessions']).status, { timeout: 5000 }).not.toBe(0);
      expect(t.driver.list()).toEqual([]);
      expect(t.driver.events('taken').map((e) => e.kind)).toEqual(['create']);
      // The lease was let go and the failed row is terminal: the name can be used again.
      const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'taken' });
      expect((await s.wait({ forText: '$ ', timeoutMs: 10_000 })).outcome).toBe('text');
      await s.kill();
    } finally {
      watch.restore();
      spawnSync('tmux', ['-S', socket, 'kill-server']);
      await t.cleanup();
    }
  });

  it('a create under way when close() is called finishes first: it rejects with DRIVER_CLOSED, its drive detached for the next host', async () => {
    const config = { allow: [allow('bash', '/bin/bash', { env: { PS1: '$ ' } })] };
    const dataDir = mkdtempSync(join(tmpdir(), 'td-'));
    const driver = await Driver.open({ dataDir, config });
    let closing: Promise<void> | undefined;
    // close() is called the moment the session exists, while its tmux server is being started.
    const watch = watchSessionsMade(() => {
      closing ??= driver.close();
    });
    let next: Driver | undefined;
    try {
      const err = await driver.create({ allowId: 'bash', args: BASH, name: 'overtaken' }).catch((e: unknown) => e);
      watch.restore();
      expect(closing).toBeDefined();
      await closing;
      expect(err).toMatchObject({ code: 'DRIVER_CLOSED' });
      expect(watch.made).toHaveLength(1);
      expect(() => watch.made[0]!.read()).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED' }));
      // Durable: the program runs on, and the next host re-attaches it (one copy, never relaunched).
      next = await Driver.open({ dataDir, config });
      expect(next.list()).toEqual([expect.objectContaining({ id: 'overtaken', state: 'live' })]);
      const s = next.get('overtaken');
      await s.sendText('echo again-$((40 + 2))', { submit: true });
      expect((await s.wait({ forText: /^again-42$/m, timeoutMs: 10_000 })).outcome).toBe('text');
      await s.kill();
    } finally {
      watch.restore();
      await closing?.catch(() => undefined);
      await next?.close();
      // The safety net of a failure: whatever is left of the drive is ended.
      spawnSync('tmux', ['-S', join(dataDir, 'tmux', 'overtaken.sock'), 'kill-server']);
      rmSync(dataDir, { recursive: true, force: true });
    }
    expect(processesMentioning(dataDir)).toEqual([]);
  });
});

describe('a wedged tmux', () => {
  it('makes calls fail with a typed timeout instead of hanging', async () => {
    const t = await openDriver([allow('bash', '/bin/bash')], {}, { tmuxTimeoutMs: 800 });
    // The drive and its server are ended whatever fails (a failed expect once left the stopped
    // server behind): cleanup kills the session and whatever still mentions the data directory.
    let server: number | undefined;
    // Resumed before the kill and in any case; a server already ended (ESRCH) needs nothing.
    const resume = (): void => {
      if (server === undefined) return;
      try {
        process.kill(server, 'SIGCONT');
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err;
      }
    };
    try {
      const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'wedged' });
      server = processesMentioning(join(t.dataDir, 'tmux', 'wedged.sock')).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('start-server'));
      expect(server).toBeDefined();
      process.kill(server!, 'SIGSTOP');
      const started = performance.now();
      const err = await s.sendKeys('Enter').catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TmuxDriveError);
      expect((err as TmuxDriveError).code).toBe('TMUX_TIMEOUT');
      expect(performance.now() - started).toBeLessThan(5000);
      resume();
      await s.kill();
    } finally {
      resume();
      await t.cleanup();
    }
  });
});

describe('without tmux on the host', () => {
  it('runs a durable request on the spawn backend with a logged warning, and reports durable: false', async () => {
    // A PATH that has bwrap but no tmux (the driver looks both up when it opens).
    const bin = mkdtempSync(join(tmpdir(), 'td-bin-'));
    symlinkSync('/usr/bin/bwrap', join(bin, 'bwrap'));
    const saved = process.env.PATH;
    process.env.PATH = bin;
    const warnings: string[] = [];
    let t: TestDriver | undefined;
    try {
      t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], {}, { logger: { warn: (m) => warnings.push(m) } });
    } finally {
      process.env.PATH = saved;
    }
    try {
      const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'no-tmux' });
      expect(warnings.join('\n')).toMatch(/tmux is not installed.*spawn backend.*not durable/);
      expect(t.driver.list()[0]).toMatchObject({ id: 'no-tmux', backend: 'spawn', durable: false, state: 'live' });
      await s.wait({ forText: '$ ' });
      await s.sendText('echo spawned-$((2 + 2))', { submit: true });
      expect((await s.wait({ forText: /^spawned-4$/m })).outcome).toBe('text');
      expect(() => s.attachCommand()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED' }));
      await s.kill();
    } finally {
      await t.cleanup();
      rmSync(bin, { recursive: true, force: true });
    }
  });
});

describe('profiles named by allow entries', () => {
  it('rejects a profile id that no profile file defines, naming the loaded ones', async () => {
    const err = await openDriver([allow('x', '/bin/bash', { profile: 'no-such-cli' })]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues[0]).toMatchObject({ path: 'allow.0.profile', message: expect.stringContaining('claude-code') });
  });
});
