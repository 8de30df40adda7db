/**
 * `tmux-drive serve --http` as the operator runs it (the built CLI, its own process): the ready
 * line names the console, which answers 401 without a token and serves the table with one; a
 * non-loopback address is refused unless the config lists it; SIGTERM stops the console too.
 * Uses dist/ (npm run build first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, runCli, testSetup } from '../cli/dist.js';
import { killServe, startServe } from '../serve/harness.js';
import { parseConsoleAddress } from '../../lib/console/console-address.js';
import { serve } from '../../lib/serve/serve.js';
import { ConsoleServer } from '../../lib/console/console-server.js';
import { createServer } from 'node:http';

let dir: string;
let dataDir: string;
let config: string;

beforeAll(() => {
  ensureBuilt();
  ({ dir, dataDir, config } = testSetup());
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('tmux-drive serve --http', () => {
  it('serves the console on the loopback: 401 without a token, the table with one; SIGTERM stops it', async () => {
    const host = startServe(['--data-dir', dataDir, '--config', config], ['--http', '127.0.0.1:0']);
    try {
      const ready = (await host.ready) as { console?: string };
      expect(ready.console).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const url = ready.console as string;
      expect((await fetch(url)).status).toBe(401);
      const token = readFileSync(join(dataDir, 'serve', 'owner.token'), 'utf8').trim();
      const page = await fetch(url, { headers: { Authorization: `Bearer ${token}` } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<table id="drives">');
      host.child.kill('SIGTERM');
      expect((await host.exited).code).toBe(0);
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      await killServe(host);
    }
  }, 30_000);

  it('refuses a non-loopback address unless the config lists it in console.addresses', async () => {
    const refused = await runCli(['--data-dir', dataDir, '--config', config, 'serve', '--http', '192.0.2.7:0']);
    expect(refused.status).not.toBe(0);
    expect(refused.stderr).toMatch(/BAD_ARGUMENT: .*console\.addresses/);
    const malformed = await runCli(['--data-dir', dataDir, '--config', config, 'serve', '--http', 'localhost:80']);
    expect(malformed.stderr).toMatch(/BAD_ARGUMENT: --http takes an IP address and a port/);
    const everywhere = await runCli(['--data-dir', dataDir, '--config', config, 'serve', '--http', '0.0.0.0:0']);
    expect(everywhere.stderr).toMatch(/BAD_ARGUMENT: --http names one address/);
    // Listed in the config, the address is taken (parsed; nothing listens on an address this machine lacks).
    expect(parseConsoleAddress('192.0.2.7:8080', ['192.0.2.7'])).toEqual({ host: '192.0.2.7', port: 8080 });
    expect(parseConsoleAddress('[::1]:0')).toEqual({ host: '::1', port: 0 });
    expect(() => parseConsoleAddress('[::]:80', ['::'])).toThrow(/one address/);
  }, 30_000);

  it('an address in use fails the start with CONSOLE_LISTEN_FAILED and holds nothing: the next serve starts', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
    const port = (blocker.address() as { port: number }).port;
    try {
      const err = (await serve({ dataDir, config, console: ConsoleServer.at(`127.0.0.1:${port}`) }).then(
        () => undefined,
        (e: unknown) => e,
      )) as { code?: string; message?: string } | undefined;
      expect(err?.code).toBe('CONSOLE_LISTEN_FAILED');
      expect(err?.message).toContain('EADDRINUSE');
      const host = await serve({ dataDir, config });
      expect(host.console).toBeUndefined();
      await host.close();
    } finally {
      blocker.close();
    }
  }, 30_000);
});
