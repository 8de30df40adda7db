/**
 * Remote drives over ssh (backends/ssh): a private sshd on 127.0.0.1, the "remote" being this
 * machine over loopback with its own remote data dir. Create, drive and kill; a host SIGKILLed and
 * a new one re-attaching; the ssh channel lost mid-drive and a reconnect; the program running once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Driver } from '../../../lib/index.js';
import type { DriverConfigInput } from '../../../lib/policy/config-schema.js';
import { CONSENT, processesMentioning } from '../../helpers.js';
import { parseStats, processTree } from '../../../backends/process/process-tree.js';
import { remoteCommand, shQuote } from '../../../backends/ssh/shell-quote.js';
import { SshHost, checkSshOption } from '../../../backends/ssh/ssh-host.js';
import { startSshd, sshdMissing, type Sshd } from '../../../bench/loopback-sshd.js';
import { BYTE_CORPUS } from '../../byte-corpus.js';

const DIST = resolve(__dirname, '../../../dist/lib/index.js');

/** The byte-exact corpus, minus NUL (argv cannot carry it), plus shell-only cases. */
const CORPUS: Array<[string, string]> = [
  ...BYTE_CORPUS.map(([label, text]): [string, string] => [label, text.replace(/\x00NUL/g, '')]),
  ['empty', ''],
  ['quotes only', `''"'"\\'`],
  ['glob', '* ? [a-z] {a,b}'],
];

describe('shell quoting for ssh remote commands', () => {
  it.each(CORPUS)('round-trips %s through sh -c', (_label, text) => {
    const r = spawnSync('/bin/sh', ['-c', `printf %s ${shQuote(text)}`]);
    expect(r.stdout).toEqual(Buffer.from(text, 'utf8'));
    const b = spawnSync('/bin/bash', ['-c', remoteCommand(['printf', '%s|%s', text, text])]);
    expect(b.stdout).toEqual(Buffer.from(`${text}|${text}`, 'utf8'));
  });
  it('refuses NUL and leaves plain words bare', () => {
    expect(() => shQuote('a\0b')).toThrow();
    expect(shQuote('/usr/bin/tmux')).toBe('/usr/bin/tmux');
    expect(shQuote('-S')).toBe('-S');
  });
  it('checks ssh options and parses /proc stat lines', () => {
    expect(checkSshOption('StrictHostKeyChecking=accept-new')).toBeUndefined();
    expect(checkSshOption('ControlPath=/tmp/x')).toMatch(/transport/);
    expect(checkSshOption('Foo=a b')).toMatch(/Key=value/);
    expect(checkSshOption('-oProxyCommand=x')).toMatch(/Key=value/);
    expect(parseStats('12 (a b) c) S 1 12 12 0 -1 0 0 0 0 0 3 4 0 0 20 0 1 0 99 0 0\n')).toEqual([
      expect.objectContaining({ pid: 12, comm: 'a b) c', state: 'S', ppid: 1, cpuTicks: 7, startTicks: 99 }),
    ]);
  });
});

const missing = sshdMissing();
if (missing) console.warn(`test/backends/ssh/ssh.test.ts: remote-drive suite skipped: ${missing}`);

describe.skipIf(missing !== undefined)('remote drives over ssh (private sshd on loopback)', () => {
  let sshd: Sshd;
  let dataDir: string;
  let remoteDir: string;
  let config: DriverConfigInput;
  const socketOf = (name: string): string => join(remoteDir, 'tmux', `${name}.sock`);
  /** bash processes under the drive's remote tmux server (the remote is this machine). */
  const bashes = (name: string): number[] => {
    const server = processesMentioning(socketOf(name)).find((pid) => readFileSync(`/proc/${pid}/cmdline`, 'latin1').includes('start-server'));
    return server === undefined ? [] : processTree(server).filter((p) => p.comm === 'bash').map((p) => p.pid);
  };

  beforeAll(async () => {
    sshd = await startSshd();
    dataDir = mkdtempSync(join(tmpdir(), 'td-'));
    remoteDir = mkdtempSync(join(tmpdir(), 'tdr-'));
    config = {
      hosts: [{ id: 'lo', ssh: { host: '127.0.0.1', user: 'root', port: sshd.port, identityFile: sshd.identityFile, options: sshd.options }, dataDir: remoteDir }],
      allow: [{ id: 'rbash', host: 'lo', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }],
    };
  }, 30_000);

  afterAll(async () => {
    if (!dataDir) return;
    const d = await Driver.open({ dataDir, config });
    for (const info of d.list()) if (info.state === 'live') await d.get(info.id).kill().catch(() => undefined);
    await d.close();
    await new SshHost(config.hosts![0]! as never, dataDir, 5000).stopMaster().catch(() => undefined);
    await sshd?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(remoteDir, { recursive: true, force: true });
  }, 60_000);

  it('creates, drives (keys and paste) and kills a remote drive, leaving nothing behind', async () => {
    const d = await Driver.open({ dataDir, config });
    try {
      const s = await d.create({ allowId: 'rbash', args: ['--norc', '--noprofile'], name: 'r1' });
      expect(d.list().find((i) => i.id === 'r1')).toEqual(expect.objectContaining({ backend: 'tmux', durable: true, state: 'live' }));
      expect((await s.wait({ forText: '$ ', timeoutMs: 15_000 })).outcome).toBe('text');
      await s.sendText('echo remote-$((40 + 2))', { submit: true });
      expect((await s.wait({ forText: /^remote-42$/m, timeoutMs: 15_000 })).outcome).toBe('text');
      await s.sendText("printf '%s\\n' 'pasted; $(x) `y`' \\\n  'second line'", { paste: 'always' });
      await s.sendKeys(['Enter']);
      const pasted = await s.wait({ forText: /^second line$/m, timeoutMs: 15_000 });
      expect(pasted.outcome, s.read().content).toBe('text');
      expect(s.read().content).toContain('pasted; $(x) `y`');
      expect((await s.fidelity()).equal).toBe(true);
      expect(bashes('r1').length).toBe(1);
      // The pane runs in the remote workspace, in the jail, with the curated env only.
      await s.sendText('pwd; echo env-$(env | wc -l)', { submit: true });
      expect((await s.wait({ forText: /^env-\d+$/m, timeoutMs: 15_000 })).outcome).toBe('text');
      expect(s.read().content).toContain(join(remoteDir, 'workspace'));
      const attach = s.attachCommand();
      expect(attach.slice(0, 2)).toEqual(['ssh', '-t']);
      expect(attach.at(-1)).toBe(`tmux -S ${socketOf('r1')} attach-session -t =r1:`);
      await s.kill();
      expect(processesMentioning(socketOf('r1'))).toEqual([]);
    } finally {
      await d.close();
    }
  }, 90_000);

  it('refuses a remote binary that does not exist there', async () => {
    const cfg = { ...config, allow: [...config.allow!, { id: 'nope', host: 'lo', match: { path: '/nonexistent/prog' }, consent: CONSENT }] };
    const d = await Driver.open({ dataDir, config: cfg });
    try {
      await expect(d.create({ allowId: 'nope' })).rejects.toMatchObject({ code: 'BINARY_NOT_FOUND' });
    } finally {
      await d.close();
    }
  }, 30_000);

  it('re-attaches a remote drive after the host is SIGKILLed: one copy of the program', async () => {
    const script = `
      import { Driver } from ${JSON.stringify(DIST)};
      const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(config)} });
      const s = await d.create({ allowId: 'rbash', args: ['--norc', '--noprofile'], name: 'r2' });
      await s.wait({ forText: '$ ', timeoutMs: 15000 });
      await s.sendText('echo before-$((1 + 1))', { submit: true });
      await s.wait({ forText: 'before-2', timeoutMs: 15000 });
      process.stdout.write('READY\\n');
      setInterval(() => {}, 1000);
    `;
    const host: ChildProcess = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    await new Promise<void>((ok, fail) => {
      host.stdout?.on('data', (b: Buffer) => b.toString().includes('READY') && ok());
      host.on('exit', (c) => fail(new Error(`host exited early with ${c}`)));
    });
    expect(bashes('r2').length).toBe(1);
    await new Promise<void>((ok) => {
      host.once('exit', () => ok());
      host.kill('SIGKILL');
    });
    const d = await Driver.open({ dataDir, config });
    try {
      expect(d.list().find((i) => i.id === 'r2')).toEqual(expect.objectContaining({ state: 'live', durable: true }));
      const s = d.get('r2');
      expect(s.read().content).toContain('before-2');
      await s.sendText('echo after-$((2 + 2))', { submit: true });
      expect((await s.wait({ forText: /^after-4$/m, timeoutMs: 15_000 })).outcome).toBe('text');
      expect(bashes('r2').length).toBe(1);
      await s.kill();
      expect(processesMentioning(socketOf('r2'))).toEqual([]);
    } finally {
      await d.close();
    }
  }, 90_000);

  it('loses the ssh channel mid-drive: the drive keeps running, the loss is reported, a reconnect re-attaches once', async () => {
    let d = await Driver.open({ dataDir, config });
    try {
      const s = await d.create({ allowId: 'rbash', args: ['--norc', '--noprofile'], name: 'r3' });
      await s.wait({ forText: '$ ', timeoutMs: 15_000 });
      await s.sendText('echo one-$((0 + 1))', { submit: true });
      await s.wait({ forText: /^one-1$/m, timeoutMs: 15_000 });
      const lost = new Promise<string>((ok) => s.on('lost', (reason: string) => ok(reason)));
      const master = await new SshHost(config.hosts![0]! as never, dataDir, 5000).masterPid();
      expect(master).toBeGreaterThan(0);
      process.kill(master!, 'SIGKILL');
      expect(await lost).toMatch(/^channel_lost/);
      expect(d.list().find((i) => i.id === 'r3')).toEqual(expect.objectContaining({ state: 'failed', reason: expect.stringMatching(/^channel_lost/) }));
      expect(bashes('r3').length).toBe(1); // still running remotely
      await d.close();
      d = await Driver.open({ dataDir, config });
      const again = d.get('r3');
      expect(again.read().content).toContain('one-1');
      await again.sendText('echo two-$((1 + 1))', { submit: true });
      expect((await again.wait({ forText: /^two-2$/m, timeoutMs: 15_000 })).outcome).toBe('text');
      expect(bashes('r3').length).toBe(1);
      await again.kill();
    } finally {
      await d.close();
    }
  }, 90_000);
});
