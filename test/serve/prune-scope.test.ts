/**
 * The `prune` verb through a real serving host (in-process serve(), real socket, real tmux): an
 * admin token scoped to drive names prunes only the finished drives it names (its other calls are
 * refused, and a drive outside the scope is named in the error); an unscoped admin prunes the
 * rest; drive and observe tokens are refused with the typed NOT_PERMITTED; an admin token scoped
 * to allow entries prunes nothing (a finished drive has no live entry to check).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { CapabilityError } from '../../lib/wire/host-error.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
let host: ServingHost;
let owner: Client;
const finished = ['p1', 'p2', 'p3'];

async function refusedNotPermitted(p: Promise<unknown>): Promise<CapabilityError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );
  expect(err).toBeInstanceOf(CapabilityError);
  expect((err as CapabilityError).code).toBe('NOT_PERMITTED');
  return err as CapabilityError;
}

beforeAll(async () => {
  host = await serve({ dataDir, config: hostConfig() });
  owner = await Client.connect(dataDir);
  // Nonzero exits: each keeps its tmux server for an operator until pruned.
  for (const name of finished) {
    const d = await owner.create({ allowId: 'bash', name, args: BASH_ARGS });
    await d.wait({ forText: '$ ' });
    await d.sendText('exit 3', { submit: true });
    expect((await d.wait({ forExit: true, timeoutMs: 20_000 })).outcome).toBe('exit');
  }
  await (await owner.create({ allowId: 'bash', name: 'running', args: BASH_ARGS })).wait({ forText: '$ ' });
});

afterAll(async () => {
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner.prune().catch(() => undefined);
  await owner.close();
  await host.close();
  sweep(dataDir);
});

describe('prune through the serving host', () => {
  it('a scoped admin token prunes only the drives it names; drive and observe tokens, and an allow-scoped admin, are refused with NOT_PERMITTED', async () => {
    const states = async (): Promise<Record<string, string>> => Object.fromEntries((await owner.list()).map((i) => [i.id, i.state]));
    expect(await states()).toEqual({ p1: 'exited', p2: 'exited', p3: 'exited', running: 'live' });

    for (const classes of [['drive'], ['observe'], ['observe', 'drive']] as const) {
      const minted = await owner.mint({ classes: [...classes] });
      const c = await Client.connect(dataDir, { token: minted.token });
      try {
        await refusedNotPermitted(c.prune());
        await refusedNotPermitted(c.prune({ ids: ['p1'] }));
      } finally {
        await c.close();
      }
    }

    const scoped = await Client.connect(dataDir, { token: (await owner.mint({ classes: ['admin', 'observe'], drives: ['p1', 'running'] })).token });
    try {
      // All finished drives, or one outside the scope: refused, and nothing is pruned.
      await refusedNotPermitted(scoped.prune());
      const outside = await refusedNotPermitted(scoped.prune({ ids: ['p1', 'p2'] }));
      expect(outside.context).toMatchObject({ drive: 'p2' });
      expect(await states()).toEqual({ p1: 'exited', p2: 'exited', p3: 'exited', running: 'live' });

      // Its own finished drive: pruned, server and socket gone. Its live drive: never touched.
      const pruned = await scoped.prune({ ids: ['p1', 'running'] });
      expect(pruned).toEqual([expect.objectContaining({ id: 'p1', state: 'exited', pruned: true })]);
      expect(existsSync(join(dataDir, 'tmux', 'p1.sock'))).toBe(false);
      expect(await states()).toEqual({ p2: 'exited', p3: 'exited', running: 'live' });
    } finally {
      await scoped.close();
    }

    const byEntry = await Client.connect(dataDir, { token: (await owner.mint({ classes: ['admin'], allowIds: ['bash'] })).token });
    try {
      await refusedNotPermitted(byEntry.prune({ ids: ['p2'] }));
    } finally {
      await byEntry.close();
    }

    // The owner (unscoped admin) prunes what is left finished; the live drive stays.
    expect((await owner.prune()).map((p) => p.id).sort()).toEqual(['p2', 'p3']);
    expect(await states()).toEqual({ running: 'live' });
  });
});
