/**
 * The host writes the lines of one turn of the event loop together (socket-server.ts): a client
 * that reads gets every line of a burst, in order, and is judged slow only by what the kernel did
 * not take after that write — never by the burst's own size. The bounds are tiny here, so a burst
 * counted before its write (the first version of the change) drops this reader. A real host in
 * this process, a real bash drive, a raw socket client.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { readOwnerToken } from '../../lib/serve/token-store.js';
import { servePaths } from '../../lib/serve/serve-paths.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
const warnings: string[] = [];
/** Subscription items buffered past this drop a client; answers past the other pause reading it. */
const DROP_BYTES = 256;
const PAUSE_BYTES = 512;
let host: ServingHost;
let owner: Client;

interface Line {
  readonly id?: unknown;
  readonly result?: unknown;
  readonly method?: string;
}

beforeAll(async () => {
  host = await serve({ dataDir, config: hostConfig(), logger: { warn: (m) => warnings.push(m) }, socketLimits: { dropSlowClientBytes: DROP_BYTES, pauseReadingBytes: PAUSE_BYTES } });
  owner = await Client.connect(dataDir);
  await (await owner.create({ allowId: 'bash', name: 'burst', args: BASH_ARGS })).wait({ forText: '$ ' });
});

afterAll(async () => {
  await owner.drive('burst').kill().catch(() => undefined);
  await owner.close();
  await host.close();
  sweep(dataDir);
});

describe('a turn of lines in one write', () => {
  it('a client that reads gets a burst of answers and items past both bounds, in order, and is not dropped', async () => {
    const socket: Socket = connect(servePaths(dataDir).socket);
    const lines: Line[] = [];
    let itemBytes = 0;
    let buf = '';
    socket.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      const parts = buf.split('\n');
      buf = parts.pop() ?? '';
      for (const p of parts) {
        const line = JSON.parse(p) as Line;
        if (line.method === 'item') itemBytes += p.length + 1;
        lines.push(line);
      }
    });
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    const requests = [{ jsonrpc: '2.0', id: 0, method: 'hello', params: { token: readOwnerToken(servePaths(dataDir)) } }, { jsonrpc: '2.0', id: 1, method: 'subscribe', params: { id: 'burst' } }];
    // 60: under the 64 calls in flight a connection may have (past it, refusals are answered first).
    for (let id = 2; id < 62; id++) requests.push({ jsonrpc: '2.0', id, method: 'whoami', params: {} });
    // One write: the host reads the calls together and answers them in one turn.
    socket.write(requests.map((r) => `${JSON.stringify(r)}\n`).join(''));
    await expect.poll(() => lines.filter((l) => l.method === undefined).length, { timeout: 10_000 }).toBe(62);
    // The drive's stored events, replayed in one turn, are more than the drop bound: a test of it.
    await expect.poll(() => itemBytes, { timeout: 10_000 }).toBeGreaterThan(DROP_BYTES);
    const answered = lines.filter((l) => l.method === undefined).map((l) => l.id);
    expect(answered).toEqual(Array.from({ length: 62 }, (_, i) => i));
    // Still served: a call after the burst is answered on the same connection.
    socket.write(`${JSON.stringify({ jsonrpc: '2.0', id: 200, method: 'whoami', params: {} })}\n`);
    await expect.poll(() => lines.some((l) => l.id === 200), { timeout: 10_000 }).toBe(true);
    expect(warnings.filter((w) => /dropped a client/.test(w))).toEqual([]);
    expect(host.connectionCount).toBe(2);
    socket.destroy();
    await closed;
  });
});
