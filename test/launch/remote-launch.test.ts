/**
 * The remote launch policy (lib/launch/remote-launch.ts) through its port, implemented for real by
 * backends/ssh/ssh-launch-host.ts over a private sshd on 127.0.0.1 (the "remote" is this machine
 * with its own data dir): the probe reports facts without ever letting a caller's word reach the
 * remote shell as script, and the policy refuses what the facts do not allow.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { validateConfig } from '../../lib/policy/config.js';
import type { DriverConfigInput } from '../../lib/policy/config-schema.js';
import { planRemoteLaunch } from '../../lib/launch/remote-launch.js';
import { SshHost, type SshHostConfig } from '../../backends/ssh/ssh-host.js';
import { SshLaunchHost } from '../../backends/ssh/ssh-launch-host.js';
import { startSshd, sshdMissing, type Sshd } from '../../bench/loopback-sshd.js';
import { CONSENT } from '../helpers.js';

const missing = sshdMissing();
if (missing) console.warn(`test/launch/remote-launch.test.ts: skipped: ${missing}`);

describe.skipIf(missing !== undefined)('the remote launch policy over a real ssh host', () => {
  let sshd: Sshd;
  let localDir: string;
  let remoteDir: string;
  let hostConfig: SshHostConfig;
  let ssh: SshHost;
  let host: SshLaunchHost;
  const bash = realpathSync('/bin/bash');
  const bashSha = createHash('sha256').update(readFileSync(bash)).digest('hex');
  const config = (allow: Record<string, unknown>, more: Partial<DriverConfigInput> = {}, fromFile = false) =>
    validateConfig({ hosts: [hostConfig], allow: [{ id: 'rbash', host: 'lo', consent: CONSENT, ...allow }], ...more }, { fromFile, source: 'test' });

  beforeAll(async () => {
    sshd = await startSshd();
    localDir = mkdtempSync(join(tmpdir(), 'td-'));
    // Not created yet: the probe makes it, 0700, with tmux/ and workspace/.
    remoteDir = join(mkdtempSync(join(tmpdir(), 'tdr-')), 'data');
    hostConfig = { id: 'lo', ssh: { host: '127.0.0.1', user: 'root', port: sshd.port, identityFile: sshd.identityFile, options: sshd.options }, dataDir: remoteDir };
    ssh = new SshHost(hostConfig, localDir, 5000);
    host = new SshLaunchHost(ssh);
  }, 30_000);

  afterAll(async () => {
    await ssh?.stopMaster().catch(() => undefined);
    await sshd?.stop();
    if (localDir) rmSync(localDir, { recursive: true, force: true });
    if (remoteDir) rmSync(join(remoteDir, '..'), { recursive: true, force: true });
  }, 30_000);

  it('reports the facts of one launch in one probe, and creates the remote data dir 0700', async () => {
    const facts = await host.probeLaunch('/bin/bash', { sha256: true });
    expect(facts).toMatchObject({ binary: bash, sha256: bashSha, envWrap: true, dataDir: realpathSync(remoteDir), home: expect.stringMatching(/^\//) });
    expect(facts.tmux).toMatch(/\/tmux$/);
    expect(facts.bwrap).toMatch(/\/bwrap$/);
    for (const dir of [remoteDir, join(remoteDir, 'tmux'), join(remoteDir, 'workspace')]) expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect((await host.probeLaunch('/bin/bash', { sha256: false })).sha256).toBeUndefined();
    expect(host.id).toBe('lo');
  }, 30_000);

  it('never runs a binary path as script: a hostile path is only a word that names no file', async () => {
    const marker = join(localDir, 'ran');
    for (const path of [`/bin/bash$(touch ${marker})`, `/x'; touch ${marker}; '`, `/x\`touch ${marker}\``, `/x"; touch ${marker}; "`, '/x\nbin=/bin/bash']) {
      const facts = await host.probeLaunch(path, { sha256: true });
      expect(facts.binary, path).toBeUndefined();
      expect(facts.sha256).toBeUndefined();
    }
    expect(existsSync(marker)).toBe(false);
  }, 30_000);

  it('plans the jailed pane argv from the facts, with the pinned hash checked there', async () => {
    const plan = await planRemoteLaunch(host, config({ match: { path: '/bin/bash', hash: `sha256:${bashSha}` } }), { allowId: 'rbash', args: ['--norc'] });
    const workspace = join(realpathSync(remoteDir), 'workspace');
    expect(plan).toMatchObject({ binary: bash, sandboxed: true, workspace, cwd: workspace, env: expect.objectContaining({ HOME: workspace }) });
    expect(plan.argv.slice(0, 6)).toEqual(['/usr/bin/env', '-u', 'TMUX', '-u', 'TMUX_PANE', '--']);
    expect(plan.argv[6]).toMatch(/\/bwrap$/);
    expect(plan.argv.slice(-2)).toEqual([bash, '--norc']);
  }, 30_000);

  it('refuses what the facts or the entry do not allow, launching nothing', async () => {
    await expect(planRemoteLaunch(host, config({ match: { path: '/bin/bash', hash: `sha256:${'0'.repeat(64)}` } }), { allowId: 'rbash' })).rejects.toMatchObject({ code: 'HASH_MISMATCH' });
    await expect(planRemoteLaunch(host, config({ match: { path: '/nonexistent/prog' } }), { allowId: 'rbash' })).rejects.toMatchObject({ code: 'BINARY_NOT_FOUND' });
    await expect(planRemoteLaunch(host, config({ match: { path: '/bin/bash' }, scope: { filesystem: 'listed-paths', paths: ['/usr'] } }), { allowId: 'rbash' })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
    await expect(planRemoteLaunch(host, config({ match: { path: '/bin/bash', argsPrefix: ['-i'] } }), { allowId: 'rbash', args: ['-c', 'id'] })).rejects.toMatchObject({ code: 'NOT_ALLOWED' });
    await expect(planRemoteLaunch(host, config({ match: { path: '/bin/bash' } }), { allowId: 'rbash', project: 'p' })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
    await expect(planRemoteLaunch(host, config({ match: { path: '/bin/bash' } }), { allowId: 'other' })).rejects.toMatchObject({ code: 'NOT_ALLOWED' });
  }, 60_000);

  it('unsandboxed only by the operator file: the program runs in the remote workspace through env', async () => {
    const plan = await planRemoteLaunch(host, config({ match: { path: '/bin/bash' } }, { unsafeDisableSandbox: true }, true), { allowId: 'rbash' });
    const workspace = join(realpathSync(remoteDir), 'workspace');
    expect(plan.sandboxed).toBe(false);
    expect(plan.argv).toEqual(['/usr/bin/env', '-u', 'TMUX', '-u', 'TMUX_PANE', '-C', workspace, '--', `PWD=${workspace}`, bash]);
  }, 30_000);
});
