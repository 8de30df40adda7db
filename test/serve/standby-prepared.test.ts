/**
 * A standby prepares its serving host while it waits (lib/serve/serving-prep.ts): its socket is
 * bound at a private name in the serve dir (0600) and serves nobody until the takeover renames it
 * over host.sock; the token store read while waiting is read again at takeover when the holder
 * changed it meanwhile; a standby that stops waiting takes its private socket with it, and one
 * SIGKILLed leaves one that the next standby removes. The holder is a real `tmux-drive serve`
 * (dist/) SIGKILLed; the standby is this process's (`serve({ standby: true })`), or a real
 * `serve --standby` for the SIGKILLed one. Real sockets, real clients.
 */
import { describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import { appendFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { AuditLog } from '../../journal/audit-log.js';
import { join } from 'node:path';
import { Client } from '../../lib/client/client.js';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { killServe, serveSuite, standbyWaiting } from './harness.js';

let standbyHost: ServingHost | undefined;
const suite = serveSuite({ beforeEnd: () => standbyHost?.close() });

const serveDir = (): string => join(suite.dataDir, 'serve');
const privateSockets = (): string[] => readdirSync(serveDir()).filter((n) => /^\.standby-\d+\.sock$/.test(n));

/** What a raw connection to `path` gets after saying hello: the bytes answered, once the host closes it (or `ms` pass). */
function helloOn(path: string, token: string, ms = 3000): Promise<{ answer: string; closed: boolean }> {
  return new Promise((resolve) => {
    let answer = '';
    const socket = connect(path);
    const timer = setTimeout(() => {
      socket.destroy();
      resolve({ answer, closed: false });
    }, ms);
    socket.on('data', (d: Buffer) => (answer += d.toString()));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearTimeout(timer);
      resolve({ answer, closed: true });
    });
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'hello', params: { token } })}\n`);
  });
}

describe('a standby prepared while it waits', () => {
  it('binds a private 0600 socket that serves nobody, renames it over host.sock at takeover, and honours tokens revoked and minted meanwhile', async () => {
    const holder = suite.serve();
    await holder.ready;
    const owner = await suite.connect({ reconnectTimeoutMs: 20_000 });
    const revokedLater = await owner.mint({ classes: ['observe'] });
    const keptAcross = await owner.mint({ classes: ['observe'] });

    const waiting = new Promise<void>((resolve) => {
      const served = serve({ dataDir: suite.dataDir, config: suite.config, standby: true, logger: { warn: () => undefined }, onWaiting: () => resolve() });
      served.then((h) => (standbyHost = h)).catch(() => undefined);
    });
    await waiting;
    const privateName = `.standby-${process.pid}.sock`;
    expect(privateSockets()).toEqual([privateName]);
    const privatePath = join(serveDir(), privateName);
    const st = statSync(privatePath);
    expect(st.isSocket()).toBe(true);
    expect(st.mode & 0o777).toBe(0o600);
    // Nothing answers on the private socket before the takeover, and host.sock is still the holder's.
    const ownerToken = readFileSync(join(serveDir(), 'owner.token'), 'utf8').trim();
    expect(await helloOn(privatePath, ownerToken)).toEqual({ answer: '', closed: true });
    expect(owner.host.pid).toBe(holder.pid);
    expect(statSync(join(serveDir(), 'host.sock')).ino).not.toBe(st.ino);

    // The holder changes the store while the standby waits (it read it already).
    await owner.revoke(revokedLater.id);
    const mintedWhileWaiting = await owner.mint({ classes: ['observe'] });

    const lost = new Promise<void>((resolve) => owner.on('disconnected', () => resolve()));
    await killServe(holder);
    await lost;
    await expect.poll(() => standbyHost !== undefined, { timeout: 20_000 }).toBe(true);

    // The private socket is now host.sock (same inode); the dead holder's file went with the rename.
    expect(privateSockets()).toEqual([]);
    const sock = statSync(join(serveDir(), 'host.sock'));
    expect(sock.ino).toBe(st.ino);
    expect(sock.mode & 0o777).toBe(0o600);
    const fresh = await suite.connect({ reconnect: false });
    expect(fresh.host.pid).toBe(process.pid);

    const revoked = await Client.connect(suite.dataDir, { token: revokedLater.token, reconnect: false }).then(
      () => undefined,
      (e: unknown) => e as { code?: string },
    );
    expect(revoked?.code).toBe('TOKEN_INVALID');
    for (const t of [keptAcross, mintedWhileWaiting]) {
      const agent = await suite.connect({ token: t.token, reconnect: false });
      expect(agent.identity.tokenId).toBe(t.id);
    }
    await standbyHost?.close();
    standbyHost = undefined;
    expect(existsSync(join(serveDir(), 'host.sock'))).toBe(false);
  }, 60_000);

  it('a standby that stops waiting removes its private socket; a SIGKILLed one leaves it to the next standby, which removes it', async () => {
    const holder = suite.serve();
    await holder.ready;

    const abort = new AbortController();
    let served!: Promise<ServingHost>;
    await new Promise<void>((resolve) => {
      served = serve({ dataDir: suite.dataDir, config: suite.config, standby: true, signal: abort.signal, logger: { warn: () => undefined }, onWaiting: () => resolve() });
      served.catch(() => undefined);
    });
    expect(privateSockets()).toEqual([`.standby-${process.pid}.sock`]);
    abort.abort();
    await expect(served).rejects.toMatchObject({ code: 'ABORTED' });
    expect(privateSockets()).toEqual([]);

    const killed = suite.serve(['--standby']);
    await standbyWaiting(killed);
    expect(privateSockets()).toEqual([`.standby-${killed.pid}.sock`]);
    await killServe(killed);
    expect(privateSockets()).toEqual([`.standby-${killed.pid}.sock`]);

    const next = suite.serve(['--standby']);
    await standbyWaiting(next);
    expect(privateSockets()).toEqual([`.standby-${next.pid}.sock`]);
    // The holder still answers on host.sock.
    const c = await suite.connect({ reconnect: false });
    expect(c.host.pid).toBe(holder.pid);
  }, 60_000);

  it('the audit log opened while waiting leaves a torn last line (the holder may be writing it) until the takeover ends it', () => {
    const auditDir = join(suite.dir, 'audit-torn');
    mkdirSync(auditDir, { mode: 0o700 });
    appendFileSync(join(auditDir, 'audit.jsonl'), '{"half a line', { mode: 0o600 });
    const log = AuditLog.open(auditDir, { deferTornLine: true });
    try {
      expect(readFileSync(join(auditDir, 'audit.jsonl'), 'utf8')).toBe('{"half a line');
      log.endTornLine();
      log.endTornLine(); // once ended, nothing more
      expect(readFileSync(join(auditDir, 'audit.jsonl'), 'utf8')).toBe('{"half a line\n');
    } finally {
      log.close();
    }
  });
});
