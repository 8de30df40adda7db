/**
 * Each scope value materialized by a real bwrap, checked from inside a real bash: `home` writes
 * the user's home, `full` network reaches the host loopback, `listed-paths` writes only what it
 * lists, `credentialPaths` read but never write, the user's home is hidden from narrower scopes
 * (except the program itself when it lives there). A scope that cannot be materialized is refused
 * with a typed error and nothing runs; it is never replaced by a wider one.
 *
 * HOME points at a fresh directory under /var/tmp (outside the jail's /tmp mask), so the tests
 * read and write no real user's files.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, Driver, TmuxDriveError } from '../../lib/index.js';
import type { Session } from '../../lib/session/session.js';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from './probe.js';

let root: string;
let home: string;
let savedHome: string | undefined;
let listedA: string;
let listedB: string;
let token: string;
let server: Server;
let port: number;
let connections = 0;
let t: TestDriver;

beforeAll(async () => {
  root = mkdtempSync('/var/tmp/td-sec-scopes-');
  home = join(root, 'home');
  listedA = join(root, 'listed-a');
  listedB = join(root, 'listed-b');
  for (const d of [home, join(home, '.ssh'), join(home, '.config', 'tool'), join(home, '.local', 'bin'), listedA, listedB]) mkdirSync(d, { recursive: true });
  writeFileSync(join(home, '.ssh', 'id_ed25519'), 'PRIVATE-KEY-CANARY\n', { mode: 0o600 });
  token = join(home, '.config', 'tool', 'token');
  writeFileSync(token, 'TOKEN-CANARY\n', { mode: 0o600 });
  copyFileSync('/bin/bash', join(home, '.local', 'bin', 'mybash'));
  chmodSync(join(home, '.local', 'bin', 'mybash'), 0o755);
  writeFileSync(join(listedB, 'existing'), 'b\n');
  savedHome = process.env.HOME;
  process.env.HOME = home; // os.homedir() follows HOME
  server = createServer((sock) => {
    connections += 1;
    sock.end('HELLO-FROM-HOST\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  t = await openDriver([
    allow('home', '/bin/bash', { ...BASH_ENTRY, scope: { filesystem: 'home' } }),
    allow('workspace', '/bin/bash', { ...BASH_ENTRY, scope: { credentialPaths: [token] } }),
    allow('tilde-credential', '/bin/bash', { ...BASH_ENTRY, scope: { credentialPaths: ['~/.config/tool/token'] } }),
    allow('listed', '/bin/bash', { ...BASH_ENTRY, scope: { filesystem: 'listed-paths', paths: [listedA] } }),
    allow('net', '/bin/bash', { ...BASH_ENTRY, scope: { network: 'full' } }),
    allow('home-binary', join(home, '.local', 'bin', 'mybash'), BASH_ENTRY),
    allow('missing-path', '/bin/bash', { scope: { filesystem: 'listed-paths', paths: [join(root, 'nope')] } }),
    allow('missing-credential', '/bin/bash', { scope: { credentialPaths: [join(home, '.aws', 'credentials')] } }),
  ]);
});

afterAll(async () => {
  server?.close();
  await t?.cleanup();
  if (savedHome === undefined) delete process.env.HOME;
  else process.env.HOME = savedHome;
  rmSync(root, { recursive: true, force: true });
});

async function start(allowId: string): Promise<Session> {
  const s = await t.driver.create({ allowId, args: BASH_ARGS });
  await ready(s);
  return s;
}

describe('scope values, materialized', () => {
  it('filesystem home: writes the home directory, and still nothing else', async () => {
    const s = await start('home');
    const r = await probe(s, workspaceOf(t.dataDir), ['echo "HOME=$HOME"', 'echo from-jail > "$HOME/written"; echo "home=$?"', 'touch /etc/td-sec-home; echo "etc=$?"'].join('\n'));
    expect(r.out).toContain(`HOME=${home}`);
    expect(r.out).toMatch(/home=0/);
    expect(r.out).toMatch(/etc=1/);
    expect(readFileSync(join(home, 'written'), 'utf8')).toBe('from-jail\n');
    expect(existsSync('/etc/td-sec-home')).toBe(false);
    await s.kill();
  });

  it('filesystem workspace: the home directory is hidden; a credential path is readable, not writable', async () => {
    const s = await start('workspace');
    const r = await probe(
      s,
      workspaceOf(t.dataDir),
      [
        `cat ${home}/.ssh/id_ed25519; echo "key=$?"`,
        `ls -A ${home}/.ssh | wc -l`,
        `cat ${token}; echo "read=$?"`,
        `echo tampered >> ${token}; echo "append=$?"`,
        `rm -f ${token}; echo "rm=$?"`,
        `touch ${home}/.config/tool/new; echo "sibling=$?"`,
      ].join('\n'),
    );
    expect(r.out).not.toContain('PRIVATE-KEY-CANARY');
    expect(r.out).toMatch(/key=1/);
    expect(r.out).toContain('TOKEN-CANARY');
    expect(r.out).toMatch(/read=0/);
    expect(r.out).toMatch(/append=1/);
    expect(r.out).toMatch(/rm=1/);
    expect(readFileSync(token, 'utf8')).toBe('TOKEN-CANARY\n');
    expect(existsSync(join(home, '.config', 'tool', 'new'))).toBe(false);
    await s.kill();
  });

  it('a credential path written "~/…" is the host user\'s home: readable, not writable, the rest of the home hidden', async () => {
    // Issue 13: `~` in credentialPaths was refused at launch; the seed expands it to the home.
    const s = await start('tilde-credential');
    const r = await probe(s, workspaceOf(t.dataDir), [`cat ${token}; echo "read=$?"`, `echo tampered >> ${token}; echo "append=$?"`, `cat ${home}/.ssh/id_ed25519; echo "key=$?"`].join('\n'));
    expect(r.out).toContain('TOKEN-CANARY');
    expect(r.out).toMatch(/read=0/);
    expect(r.out).toMatch(/append=1/);
    expect(r.out).not.toContain('PRIVATE-KEY-CANARY');
    expect(readFileSync(token, 'utf8')).toBe('TOKEN-CANARY\n');
    await s.kill();
  });

  it('filesystem listed-paths: writes only the listed paths', async () => {
    const s = await start('listed');
    const r = await probe(
      s,
      workspaceOf(t.dataDir),
      [`echo a > ${listedA}/from-jail; echo "a=$?"`, `cat ${listedB}/existing; echo b2 > ${listedB}/from-jail; echo "b=$?"`, `cat ${home}/.ssh/id_ed25519; echo "key=$?"`].join('\n'),
    );
    expect(r.out).toMatch(/a=0/);
    expect(r.out).toMatch(/b=1/);
    expect(r.out).toMatch(/Read-only file system/);
    expect(r.out).not.toContain('PRIVATE-KEY-CANARY');
    expect(readFileSync(join(listedA, 'from-jail'), 'utf8')).toBe('a\n');
    expect(existsSync(join(listedB, 'from-jail'))).toBe(false);
    await s.kill();
  });

  it('network full: reaches a listener on the host loopback', async () => {
    const s = await start('net');
    const before = connections;
    const r = await probe(s, workspaceOf(t.dataDir), `exec 3<>/dev/tcp/127.0.0.1/${port} && cat <&3; echo "tcp=$?"`);
    expect(r.out).toContain('HELLO-FROM-HOST');
    expect(connections).toBe(before + 1);
    await s.kill();
  });

  it('a program installed in the hidden home still runs, and sees only itself there', async () => {
    const s = await start('home-binary');
    const r = await probe(s, workspaceOf(t.dataDir), `find ${home} -mindepth 1 | sort`);
    expect(r.out.trim().split('\n')).toEqual([join(home, '.local'), join(home, '.local', 'bin'), join(home, '.local', 'bin', 'mybash')]);
    await s.kill();
  });
});

describe('scopes that cannot be materialized are refused, never widened', () => {
  async function refused(allowId: string): Promise<TmuxDriveError> {
    const err = await t.driver.create({ allowId, args: BASH_ARGS }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(TmuxDriveError);
    return err as TmuxDriveError;
  }

  // A relative one is a config error now (relative-binary-paths.test.ts), never reaching launch.
  it('a listed path or credential path that does not exist', async () => {
    expect(await refused('missing-path')).toMatchObject({ code: 'SANDBOX_UNAVAILABLE', context: { path: join(root, 'nope') } });
    expect(await refused('missing-credential')).toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
  });

  it('a path inside the data dir (it would bring the journal and sockets back)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'td-'));
    const d = await Driver.open({
      dataDir,
      config: {
        allow: [
          allow('sockets', '/bin/bash', { scope: { credentialPaths: [join(dataDir, 'tmux')] } }),
          allow('data', '/bin/bash', { scope: { filesystem: 'listed-paths', paths: [dataDir] } }),
          allow('journal', '/bin/bash', { scope: { credentialPaths: [dataDir] } }),
        ],
      },
    });
    try {
      for (const allowId of ['sockets', 'data', 'journal']) await expect(d.create({ allowId })).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
      expect(processesMentioning(dataDir)).toEqual([]);
    } finally {
      await d.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('filesystem home when HOME is / or missing', async () => {
    for (const value of ['/', join(root, 'no-such-home')]) {
      process.env.HOME = value;
      try {
        expect(await refused('home')).toMatchObject({ code: 'SANDBOX_UNAVAILABLE' });
      } finally {
        process.env.HOME = home;
      }
    }
  });

  it('network listed-hosts (not implemented) is a config error', async () => {
    await expect(Driver.open({ dataDir: t.dataDir, config: { allow: [allow('x', '/bin/bash', { scope: { network: 'listed-hosts' } })] } })).rejects.toBeInstanceOf(ConfigError);
  });

  it('left nothing running', () => {
    expect(processesMentioning(t.dataDir)).toEqual([]);
    expect(readdirSync(join(t.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'))).toEqual([]);
  });
});
