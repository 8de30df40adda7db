/**
 * The default scope (filesystem: workspace, network: none) against a real bwrap and a real bash:
 * the program runs and is driven normally, and nothing it does reaches past its workspace: not
 * the host filesystem, not the data dir (journal, other drives' sockets), not the host's loopback,
 * not the mounts that make the jail (also when the host runs as root).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Session } from '../../lib/session/session.js';
import { allow, openDriver, processesMentioning, type TestDriver } from '../helpers.js';
import { BASH_ARGS, BASH_ENTRY, probe, ready, workspaceOf } from './probe.js';

const CANARY = `journal-canary-${randomBytes(6).toString('hex')}`;
const tag = randomBytes(4).toString('hex');

let t: TestDriver;
let s: Session;
let other: Session;
let ws: string;
let server: Server;
let port: number;
let connections = 0;

beforeAll(async () => {
  t = await openDriver([allow('bash', '/bin/bash', BASH_ENTRY)]);
  // What the jail must not see: the journal, and the sockets of this and other drives.
  writeFileSync(join(t.dataDir, 'journal.sqlite3'), CANARY, { mode: 0o600 });
  other = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'other' });
  s = await t.driver.create({ allowId: 'bash', args: BASH_ARGS, name: 'jailed' });
  ws = workspaceOf(t.dataDir);
  await ready(s);
  server = createServer((sock) => {
    connections += 1;
    sock.end('HELLO-FROM-HOST\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  server?.close();
  await t?.cleanup();
  for (const p of [`/etc/td-sec-${tag}`, `/etc/td-sec-remount-${tag}`, `/var/tmp/td-sec-${tag}`]) rmSync(p, { force: true });
});

describe('a jailed bash (workspace, network none)', () => {
  it('runs and is driven normally', async () => {
    await s.sendText('echo $((6 * 7)); pwd', { submit: true });
    expect((await s.wait({ forText: /^42$/m, timeoutMs: 10_000 })).outcome).toBe('text');
    expect(s.read().content).toContain(ws);
    const r = await probe(s, ws, 'echo inside > made-in-jail.txt && cat made-in-jail.txt && id -u');
    expect(r.rc).toBe(0);
    expect(existsSync(join(ws, 'made-in-jail.txt'))).toBe(true);
  });

  it('cannot write outside its workspace', async () => {
    const parent = dirname(t.dataDir);
    const r = await probe(
      s,
      ws,
      [
        `touch /etc/td-sec-${tag}; echo "etc=$?"`,
        `touch /var/tmp/td-sec-${tag}; echo "vartmp=$?"`,
        `touch "$HOME/../escape-${tag}"; echo "home-parent=$?"`,
        `touch "${t.dataDir}/escape-${tag}" "${t.dataDir}/tmux/escape-${tag}"`,
        `mkdir -p "${parent}" && touch "${parent}/escape-${tag}"`,
        'echo done',
      ].join('\n'),
    );
    expect(r.out).toMatch(/etc=1/);
    expect(r.out).toMatch(/vartmp=1/);
    expect(r.out).toMatch(/Read-only file system/);
    // Whatever succeeded inside landed in the jail's own tmpfs, never on the host.
    expect(existsSync(`/etc/td-sec-${tag}`)).toBe(false);
    expect(existsSync(`/var/tmp/td-sec-${tag}`)).toBe(false);
    expect(existsSync(join(t.dataDir, `escape-${tag}`))).toBe(false);
    expect(existsSync(join(t.dataDir, 'tmux', `escape-${tag}`))).toBe(false);
    expect(existsSync(join(parent, `escape-${tag}`))).toBe(false);
  });

  it('sees neither the journal nor any drive socket in the data dir', async () => {
    const sockets = readdirSync(join(t.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'));
    expect(sockets).toEqual(expect.arrayContaining(['other.sock', 'jailed.sock']));
    const r = await probe(
      s,
      ws,
      [
        `cat "${t.dataDir}/journal.sqlite3"; echo "journal=$?"`,
        `ls -a "${t.dataDir}" "${t.dataDir}/tmux"`,
        `for sock in other jailed; do`,
        `  python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print("CONNECTED")' "${t.dataDir}/tmux/$sock.sock"`,
        `  tmux -S "${t.dataDir}/tmux/$sock.sock" list-sessions; echo "tmux-$sock=$?"`,
        'done',
      ].join('\n'),
    );
    expect(r.out).not.toContain(CANARY);
    expect(r.out).toMatch(/journal=1/);
    expect(r.out).not.toMatch(/^(other|jailed)\.sock$/m);
    expect(r.out).not.toContain('CONNECTED');
    expect(r.out).toMatch(/tmux-other=1/);
    expect(r.out).toMatch(/tmux-jailed=1/);
  });

  it('cannot undo the jail: no capabilities, no unmounting the masks, no remounting / writable', async () => {
    const r = await probe(
      s,
      ws,
      [
        'grep -E "^Cap(Eff|Prm|Bnd):" /proc/self/status',
        'umount -l /tmp; umount -l ' + JSON.stringify(t.dataDir),
        `cat "${t.dataDir}/journal.sqlite3"`,
        `mount -o remount,bind,rw / ; touch /etc/td-sec-remount-${tag}; echo "remount-write=$?"`,
        // A nested user namespace has capabilities of its own, but over mounts it cannot unlock.
        `unshare -Urm sh -c 'umount -l /tmp; umount -l ${JSON.stringify(t.dataDir)}; cat ${JSON.stringify(join(t.dataDir, 'journal.sqlite3'))}'`,
        `unshare -Um sh -c 'umount -l /tmp; cat ${JSON.stringify(join(t.dataDir, 'journal.sqlite3'))}'`,
        'echo done',
      ].join('\n'),
    );
    expect(r.out).toMatch(/^CapEff:\s+0+$/m);
    expect(r.out).toMatch(/^CapPrm:\s+0+$/m);
    expect(r.out).toMatch(/^CapBnd:\s+0+$/m);
    expect(r.out).not.toContain(CANARY);
    expect(r.out).toMatch(/remount-write=1/);
    expect(existsSync(`/etc/td-sec-remount-${tag}`)).toBe(false);
  });

  it('cannot reach a listener on the host loopback', async () => {
    const r = await probe(
      s,
      ws,
      [
        `(exec 3<>/dev/tcp/127.0.0.1/${port} && echo TCP-CONNECTED && cat <&3) ; echo "devtcp=$?"`,
        `python3 -c 'import socket; socket.create_connection(("127.0.0.1", ${port}), timeout=3); print("PY-CONNECTED")'; echo "python=$?"`,
        'cat /proc/net/tcp | wc -l; ip -brief link 2>/dev/null || cat /proc/net/dev',
      ].join('\n'),
    );
    expect(r.out).not.toContain('CONNECTED');
    expect(r.out).not.toContain('HELLO-FROM-HOST');
    expect(r.out).toMatch(/devtcp=1/);
    expect(r.out).toMatch(/python=1/);
    expect(connections).toBe(0);
  });

  it('cannot reach a unix socket a host service listens on under /run', async () => {
    const path = `/run/td-sec-${tag}.sock`;
    const unix = createServer((sock) => {
      connections += 1;
      sock.end('HELLO-FROM-HOST\n');
    });
    try {
      await new Promise<void>((resolve, reject) => {
        unix.once('error', reject);
        unix.listen(path, resolve);
      });
    } catch {
      return; // /run is not writable for this user: nothing to prove here
    }
    try {
      const r = await probe(s, ws, `python3 -c 'import socket,sys; c=socket.socket(socket.AF_UNIX); c.connect(sys.argv[1]); print("UNIX-CONNECTED", c.recv(64))' ${path}; echo "unix=$?"`);
      expect(r.out).not.toContain('UNIX-CONNECTED');
      expect(r.out).toMatch(/unix=1/);
    } finally {
      await new Promise((resolve) => unix.close(resolve));
    }
    expect(connections).toBe(0);
  });

  it('is still a working shell after all of that, and killing it leaves nothing', async () => {
    await s.sendText('echo still-$((1 + 1))', { submit: true });
    expect((await s.wait({ forText: 'still-2', timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
    await other.kill();
    expect(processesMentioning(t.dataDir)).toEqual([]);
  });
});
