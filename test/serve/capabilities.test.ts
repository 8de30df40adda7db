/**
 * Capability tokens at the gate, through a real host socket: a token scoped to its own drive sees
 * and touches nothing else (and cannot tell whether another drive exists); a caller-supplied
 * identity is ignored; classes, allow-entry scopes, minting within one's own scope, expiry and
 * revocation (which ends the token's live connections); typed errors keep their class through
 * the socket; the store keeps hashes, never tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { CapabilityError } from '../../lib/wire/host-error.js';
import { PolicyError, SessionError, UsageError } from '../../lib/common/errors.js';
import { readAudit } from '../../journal/audit-log.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
let host: ServingHost;
let owner: Client;

async function refused(p: Promise<unknown>, code: string): Promise<CapabilityError | Error> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err, `expected ${code}`).toBeInstanceOf(Error);
  expect((err as { code?: string }).code).toBe(code);
  return err as Error;
}

beforeAll(async () => {
  host = await serve({ dataDir, config: hostConfig() });
  owner = await Client.connect(dataDir);
  for (const name of ['mine', 'theirs']) {
    const d = await owner.create({ allowId: 'bash', name, args: BASH_ARGS });
    await d.wait({ forText: '$ ' });
  }
});

afterAll(async () => {
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner.close();
  await host.close();
  sweep(dataDir);
});

describe('capability tokens at the gate', () => {
  it('a drive token for its own drive cannot read, list or touch any other; an unknown drive looks the same as a foreign one', async () => {
    const minted = await owner.mint({ classes: ['observe', 'drive'], drives: ['mine'], label: 'agent' });
    const agent = await Client.connect(dataDir, { token: minted.token });
    try {
      expect(agent.identity).toMatchObject({ tokenId: minted.id, scope: { classes: ['observe', 'drive'], drives: ['mine'] } });
      expect((await agent.list()).map((i) => i.id)).toEqual(['mine']);
      const mine = agent.drive('mine');
      await mine.sendText('echo agent-$((3 * 3))', { submit: true });
      expect((await mine.wait({ forText: 'agent-9' })).outcome).toBe('text');
      expect((await mine.read()).content).toContain('agent-9');

      const theirs = agent.drive('theirs');
      for (const call of [theirs.read(), theirs.status(), theirs.sendText('x'), theirs.sendKeys('C-c'), theirs.transcript(), theirs.events(), theirs.wait({ timeoutMs: 10 })]) {
        const err = await refused(call, 'NOT_PERMITTED');
        expect(err).toBeInstanceOf(CapabilityError);
      }
      const ghost = await refused(agent.drive('ghost').read(), 'NOT_PERMITTED');
      expect(ghost.message).not.toMatch(/not found|no session/i);
      await refused(owner.drive('ghost').read(), 'SESSION_NOT_FOUND');

      // Admin verbs, on its own drive too.
      await refused(mine.kill(), 'NOT_PERMITTED');
      await refused(mine.attachCommand(), 'NOT_PERMITTED');
      await refused(agent.create({ allowId: 'bash', name: 'mine2' }), 'NOT_PERMITTED');
      await refused(agent.mint({ classes: ['observe'], drives: ['mine'] }), 'NOT_PERMITTED');
      await refused(agent.tokens(), 'NOT_PERMITTED');
      // Subscriptions are scoped the same way.
      let ended: string | undefined;
      agent.on('subscriptionError', (drive, e) => (ended = `${drive}:${e.code}`));
      agent.drive('theirs').on('state', () => undefined);
      await expect.poll(() => ended, { timeout: 5000 }).toBe('theirs:NOT_PERMITTED');
    } finally {
      await agent.close();
    }
  });

  it('ignores a caller-supplied identity: `_`-prefixed fields are stripped, the token decides, the audit names the real token', async () => {
    const minted = await owner.mint({ classes: ['observe'], drives: ['mine'] });
    const agent = await Client.connect(dataDir, { token: minted.token });
    try {
      const forged = { _identity: { tokenId: 'owner', scope: { classes: ['observe', 'drive', 'admin'] } }, _tokenId: 'owner', _scope: { classes: ['admin'] } };
      await refused(agent.call('read', { id: 'theirs', ...forged }), 'NOT_PERMITTED');
      await refused(agent.call('sendText', { id: 'mine', text: 'x', ...forged }), 'NOT_PERMITTED');
      // A forged field under its own name (not `_`) is an unknown param, refused by the verb's schema.
      await refused(agent.call('read', { id: 'mine', identity: { tokenId: 'owner' } }), 'BAD_ARGUMENT');
      const read = (await agent.call('read', { id: 'mine', ...forged })) as { content: string };
      expect(read.content).toContain('$');
      const calls = readAudit(dataDir).filter((r) => r.kind === 'call' && r.tags.token === minted.id);
      expect(calls).toContainEqual(expect.objectContaining({ sessionId: 'theirs', tags: { verb: 'read', token: minted.id, ok: false, code: 'NOT_PERMITTED' } }));
      expect(calls).toContainEqual(expect.objectContaining({ sessionId: 'mine', tags: { verb: 'read', token: minted.id, ok: true } }));
      expect(readAudit(dataDir).some((r) => r.tags.token === 'owner' && r.sessionId === 'theirs' && r.tags.verb === 'read')).toBe(false);
    } finally {
      await agent.close();
    }
  });

  it('an observe token reads and waits but types nothing; an allow-scoped admin creates only its entry and mints only within its scope', async () => {
    const observer = await Client.connect(dataDir, { token: (await owner.mint({ classes: ['observe'] })).token });
    try {
      expect((await observer.list()).map((i) => i.id).sort()).toEqual(['mine', 'theirs']);
      expect((await observer.drive('theirs').status()).state).toBe('awaiting-input');
      await refused(observer.drive('theirs').sendText('x'), 'NOT_PERMITTED');
      await refused(observer.drive('theirs').resize(90, 30), 'NOT_PERMITTED');
      await refused(observer.drive('theirs').signal('interrupt'), 'NOT_PERMITTED');
    } finally {
      await observer.close();
    }
    const py = await owner.mint({ classes: ['admin', 'observe'], allowIds: ['python3'] });
    const pyAdmin = await Client.connect(dataDir, { token: py.token });
    try {
      await refused(pyAdmin.create({ allowId: 'bash', name: 'b2' }), 'NOT_PERMITTED');
      const d = await pyAdmin.create({ allowId: 'python3', name: 'py1', args: ['-q'] });
      expect(d.info).toMatchObject({ id: 'py1', allowId: 'python3', state: 'live' });
      expect((await pyAdmin.list()).map((i) => i.id)).toEqual(['py1']);
      await refused(pyAdmin.drive('mine').read(), 'NOT_PERMITTED');
      await refused(pyAdmin.mint({ classes: ['observe'] }), 'NOT_PERMITTED'); // wider: every allow entry
      await refused(pyAdmin.mint({ classes: ['drive'], allowIds: ['python3'] }), 'NOT_PERMITTED'); // a class it lacks
      const narrower = await pyAdmin.mint({ classes: ['observe'], allowIds: ['python3'], drives: ['py1'], ttlMs: 60_000 });
      expect(narrower.scope).toMatchObject({ classes: ['observe'], allowIds: ['python3'], drives: ['py1'] });
      // It sees the tokens within its scope (its own included), not the others.
      expect((await pyAdmin.tokens()).map((t) => t.id).sort()).toEqual([narrower.id, py.id].sort());
      await pyAdmin.revoke(narrower.id);
      await refused(pyAdmin.revoke('owner'), 'BAD_ARGUMENT');
      await d.kill();
    } finally {
      await pyAdmin.close();
    }
  });

  it('revoking a token ends its live connections (subscriptions end token_revoked) and it is refused from then on', async () => {
    const minted = await owner.mint({ classes: ['observe'], drives: ['mine'] });
    const agent = await Client.connect(dataDir, { token: minted.token, reconnectTimeoutMs: 2000 });
    const ended: string[] = [];
    agent.drive('mine').on('ended', (reason) => ended.push(reason));
    const closed = new Promise<string>((resolve) => agent.on('closed', resolve));
    await agent.drive('mine').status();
    await owner.revoke(minted.id);
    expect(await closed).toMatch(/refused the token|ended/);
    expect(ended).toEqual(['token_revoked']);
    await refused(Client.connect(dataDir, { token: minted.token }), 'TOKEN_INVALID');
    await refused(owner.revoke(minted.id), 'NOT_PERMITTED'); // gone: unknown reads as refused
  });

  it('an expired token is refused: at its next call and at hello', async () => {
    const minted = await owner.mint({ classes: ['observe'], ttlMs: 1000 });
    const agent = await Client.connect(dataDir, { token: minted.token, reconnect: false });
    expect((await agent.list()).length).toBeGreaterThan(0);
    // The expiry is a wall-clock time (the token's scope), so this test waits for it.
    await new Promise((r) => setTimeout(r, Math.max(0, (minted.scope.expiresAt ?? 0) - Date.now() + 20)));
    await refused(agent.list(), 'TOKEN_INVALID');
    await refused(Client.connect(dataDir, { token: minted.token }), 'TOKEN_INVALID');
    await agent.close();
  });

  it('errors keep their class and code through the socket', async () => {
    const err = await refused(owner.create({ allowId: 'vim' }), 'NOT_ALLOWED');
    expect(err).toBeInstanceOf(PolicyError);
    expect(await refused(owner.drive('mine').sendKeys(['Frob']), 'UNKNOWN_KEY_NAME')).toBeInstanceOf(UsageError);
    expect(await refused(owner.drive('mine').resize(1, 1), 'BAD_ARGUMENT')).toBeInstanceOf(UsageError);
    expect(await refused(owner.drive('nope').status(), 'SESSION_NOT_FOUND')).toBeInstanceOf(SessionError);
    // A caller's regular expression runs on the host: only a provably tame one.
    expect((await refused(owner.drive('mine').wait({ forText: /(a+)+$/, timeoutMs: 100 }), 'BAD_ARGUMENT')).message).toContain('regex refused');
  });

  it('keeps hashes, never tokens: the store and the owner token are 0600, tokens.json holds no token', async () => {
    const minted = await owner.mint({ classes: ['observe'] });
    const store = readFileSync(join(dataDir, 'serve', 'tokens.json'), 'utf8');
    expect(store).not.toContain(minted.token);
    expect(store).not.toContain(minted.token.slice(4));
    expect(store).toContain(minted.id);
    for (const f of ['tokens.json', 'owner.token', 'host.sock']) expect(statSync(join(dataDir, 'serve', f)).mode & 0o777, f).toBe(0o600);
    expect(statSync(join(dataDir, 'serve')).mode & 0o777).toBe(0o700);
    expect(readFileSync(join(dataDir, 'audit.jsonl'), 'utf8')).not.toContain(minted.token);
  });
});
