/**
 * A read is never served from a mirror that was not rebuilt from its drive. A call through the
 * gate for a drive still being re-attached waits for it (test/serve/adopt-window.test.ts); a
 * drive whose re-attach failed (its server gone while no host held it) had a mirror made but
 * never rebuilt, and a read of it answered a blank screen as if the program showed nothing: it
 * now fails with SESSION_CLOSED saying why (the drive is listed failed; its status is the verdict
 * published when it was found failed).
 * Real in-process hosts (serve()), a real socket, real tmux and bash; the server is SIGKILLed
 * between the two hosts.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { Client } from '../../lib/client/client.js';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { findProcesses } from '../../backends/process/process-tree.js';
import { isStartServerArgv } from '../../lib/control/tmux-commands.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDirs: string[] = [];
let host: ServingHost | undefined;
let client: Client | undefined;

afterAll(async () => {
  await client?.close();
  await host?.close();
  for (const d of dataDirs) sweep(d);
});

describe('a read of a drive whose mirror was never rebuilt', () => {
  it('fails typed, saying the drive was lost, instead of answering a blank screen', async () => {
    // A data dir per attempt (a retry starts from nothing).
    await client?.close();
    await host?.close();
    const dataDir = tempDataDir();
    dataDirs.push(dataDir);
    const config = hostConfig();
    host = await serve({ dataDir, config, logger: { warn: () => undefined } });
    client = await Client.connect(dataDir);
    for (const name of ['kept', 'gone']) await (await client.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
    await client.close();
    client = undefined;
    await host.close();
    host = undefined;

    const servers = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), join(dataDir, 'tmux', 'gone.sock')));
    expect(servers).toHaveLength(1);
    process.kill(servers[0] as number, 'SIGKILL');

    host = await serve({ dataDir, config, logger: { warn: () => undefined } });
    client = await Client.connect(dataDir);
    // The drive that was re-attached reads its rebuilt screen.
    expect((await client.drive('kept').read({ mode: 'full' })).content).toContain('$');
    const gone = client.drive('gone');
    await expect(gone.read({ mode: 'full' })).rejects.toMatchObject({ code: 'SESSION_CLOSED', message: expect.stringContaining('server_gone') });
    expect((await client.list()).find((s) => s.id === 'gone')).toMatchObject({ state: 'failed', reason: 'server_gone' });
    expect(await gone.status()).toMatchObject({ lifecycle: 'failed', reason: 'server_gone' });
  }, 60_000);
});
