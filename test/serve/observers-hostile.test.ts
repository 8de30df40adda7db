/**
 * Through a real host socket: any number of observers stream a drive's events with no lease of
 * their own while another client drives it; and a hostile client (garbage, invalid UTF-8, batches,
 * nesting, a 9 MiB line (answered, then its connection ends), calls before hello, a wrong token, silence, a flood of calls and
 * subscribes, a reader that stops reading) gets typed answers or is cut off, and never takes the
 * host down nor slows the others. The host runs in this process with small socket bounds so the
 * limits are quick to reach.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect, type Socket } from 'node:net';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { readOwnerToken } from '../../lib/serve/token-store.js';
import { servePaths } from '../../lib/serve/serve-paths.js';
import { BASH_ARGS, hostConfig, leaseHolder, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
const warnings: string[] = [];
let host: ServingHost;
let owner: Client;

interface Line {
  id?: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { code: string } };
  method?: string;
  params?: unknown;
}

/** A raw connection: writes what it is told, collects the lines the host sends, tells when it closed. */
class Raw {
  readonly socket: Socket;
  readonly lines: Line[] = [];
  readonly closed: Promise<void>;
  private buf = '';

  constructor() {
    this.socket = connect(servePaths(dataDir).socket);
    this.socket.on('data', (d: Buffer) => {
      this.buf += d.toString('utf8');
      const parts = this.buf.split('\n');
      this.buf = parts.pop() ?? '';
      for (const p of parts) this.lines.push(JSON.parse(p) as Line);
    });
    this.socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => this.socket.once('close', () => resolve()));
  }

  send(text: string | Buffer): void {
    this.socket.write(text);
  }

  call(id: number, method: string, params: Record<string, unknown> = {}): void {
    this.send(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
  }

  async answer(id: unknown): Promise<Line> {
    await expect.poll(() => this.lines.some((l) => l.id === id && l.method === undefined), { timeout: 10_000 }).toBe(true);
    return this.lines.find((l) => l.id === id && l.method === undefined) as Line;
  }

  async hello(): Promise<void> {
    this.call(0, 'hello', { token: readOwnerToken(servePaths(dataDir)) });
    expect((await this.answer(0)).result).toBeDefined();
  }
}

beforeAll(async () => {
  host = await serve({
    dataDir,
    config: hostConfig(),
    logger: { warn: (m) => warnings.push(m) },
    socketLimits: { helloTimeoutMs: 500, dropSlowClientBytes: 32 * 1024, pauseReadingBytes: 64 * 1024 },
  });
  owner = await Client.connect(dataDir);
  for (const name of ['watched', 'noisy']) await (await owner.create({ allowId: 'bash', name, args: BASH_ARGS })).wait({ forText: '$ ' });
});

afterAll(async () => {
  for (const i of await owner.list().catch(() => [])) if (i.state === 'live') await owner.drive(i.id).kill().catch(() => undefined);
  await owner.close();
  await host.close();
  sweep(dataDir);
});

describe('observers', () => {
  it('eight observers stream one drive while the owner drives it: each gets the marks and every journal event once; none holds a lease', async () => {
    const token = (await owner.mint({ classes: ['observe'], drives: ['watched'] })).token;
    const observers = await Promise.all(Array.from({ length: 8 }, () => Client.connect(dataDir, { token, reconnect: false })));
    try {
      const got = observers.map(() => ({ journal: [] as number[], marks: 0, states: 0 }));
      observers.forEach((o, i) => {
        const g = got[i] as (typeof got)[number];
        o.drive('watched').on('journal', (e) => g.journal.push(e.seq));
        o.drive('watched').on('output', () => (g.marks += 1));
        o.drive('watched').on('state', () => (g.states += 1));
      });
      const w = owner.drive('watched');
      await w.sendText('for i in 1 2 3; do echo tick-$i; sleep 0.05; done', { submit: true });
      await w.wait({ forText: 'tick-3' });
      await w.wait({ forIdleMs: 200 });
      const stored = (await w.events({ limit: 1000 })).map((e) => e.seq);
      for (const g of got) {
        await expect.poll(() => g.journal.length, { timeout: 5000 }).toBe(stored.length);
        expect(g.journal).toEqual(stored);
        expect(g.marks).toBeGreaterThan(0);
      }
      // The host holds the drive; eight readers changed nothing about that.
      expect(leaseHolder(dataDir, 'watched')).toBe(process.pid);
      expect((await observers[0]?.drive('watched').read())?.content).toContain('tick-3');
    } finally {
      for (const o of observers) await o.close();
    }
  });
});

describe('a hostile client', () => {
  it('gets a JSON-RPC error for each malformed line and keeps its connection', async () => {
    const raw = new Raw();
    raw.send('not json\n');
    raw.send(Buffer.from([0xff, 0xfe, 0x7b, 0x0a]));
    raw.send('[{"jsonrpc":"2.0","id":1,"method":"list"}]\n');
    raw.send('{"jsonrpc":"2.0","id":2}\n');
    raw.send('{"jsonrpc":"1.0","id":3,"method":"list"}\n');
    raw.send(`{"jsonrpc":"2.0","id":4,"method":"list","params":${'['.repeat(100)}${']'.repeat(100)}}\n`);
    raw.send('{"jsonrpc":"2.0","id":{"x":1},"method":"list"}\n');
    raw.send('{"jsonrpc":"2.0","id":5,"method":"list","params":[1]}\n');
    raw.send('\n\n   \n');
    await expect.poll(() => raw.lines.length, { timeout: 5000 }).toBe(8);
    expect(raw.lines.map((l) => l.error?.code)).toEqual([-32700, -32700, -32600, -32600, -32600, -32600, -32600, -32602]);
    expect(raw.lines.map((l) => l.id)).toEqual([null, null, null, 2, 3, 4, null, 5]);
    for (const l of raw.lines) expect(l.error?.data?.code).toBe('PROTOCOL_ERROR');
    // A call before hello is refused with a typed error; after hello the same connection works.
    raw.call(6, 'list');
    expect((await raw.answer(6)).error?.data?.code).toBe('TOKEN_INVALID');
    await raw.hello();
    raw.call(7, 'list');
    expect((await raw.answer(7)).result).toMatchObject({ sessions: expect.any(Array) });
    raw.call(8, 'frobnicate');
    expect((await raw.answer(8)).error?.data?.code).toBe('PROTOCOL_ERROR');
    raw.call(9, 'read', { id: 'watched', _identity: { tokenId: 'x' }, extra: 1 });
    expect((await raw.answer(9)).error?.data?.code).toBe('BAD_ARGUMENT');
    raw.socket.destroy();
  });

  it('a 9 MiB line is answered by id and ends its connection (nothing of it reaches the drive); other connections are served', async () => {
    const raw = new Raw();
    await raw.hello();
    // No newline yet: the host answers as soon as the line passes the limit, not at its end.
    raw.send(`{"jsonrpc":"2.0","id":41,"method":"sendText","params":{"id":"watched","text":"${'x'.repeat(9 * 1024 * 1024)}`);
    const big = await raw.answer(41);
    expect(big.error?.code).toBe(-32600);
    expect(big.error?.message).toMatch(/too large/);
    expect(big.error?.data?.code).toBe('PROTOCOL_ERROR');
    await raw.closed;
    // Nothing of it reached the drive, and the host serves the next connection.
    expect((await owner.drive('watched').read()).content).not.toContain('xxxxxxxx');
    const next = new Raw();
    await next.hello();
    next.call(42, 'status', { id: 'watched' });
    expect((await next.answer(42)).result).toMatchObject({ id: 'watched' });
    next.socket.destroy();
  });

  it('a wrong token ends the connection; a silent one is cut after the hello deadline', async () => {
    const wrong = new Raw();
    wrong.call(1, 'hello', { token: 'tdk_guess' });
    expect((await wrong.answer(1)).error?.data?.code).toBe('TOKEN_INVALID');
    await wrong.closed;
    const silent = new Raw();
    const t0 = Date.now();
    await silent.closed;
    expect(Date.now() - t0).toBeLessThan(5000);
  });

  it('a flood of calls in flight is capped per connection; a flood of subscribes to one drive is one subscription', async () => {
    const raw = new Raw();
    await raw.hello();
    for (let i = 100; i < 200; i++) raw.call(i, 'wait', { id: 'watched', forText: 'never-printed-xyz', timeoutMs: 60_000 });
    await expect.poll(() => raw.lines.filter((l) => l.error?.data?.code === 'LIMIT_REACHED').length, { timeout: 5000 }).toBe(36);
    for (let i = 100; i < 164; i++) raw.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'cancel', params: { id: i } })}\n`);
    await expect.poll(() => raw.lines.filter((l) => typeof l.id === 'number' && l.id < 164 && l.id >= 100).length, { timeout: 10_000 }).toBe(64);

    for (let i = 300; i < 700; i++) raw.call(i, 'subscribe', { id: 'watched' });
    await expect.poll(() => raw.lines.filter((l) => typeof l.id === 'number' && l.id >= 300).length, { timeout: 10_000 }).toBe(400);
    const answers = raw.lines.filter((l) => typeof l.id === 'number' && l.id >= 300);
    // Past the calls-in-flight cap some are refused; every one that went through got the same subscription.
    expect(answers.filter((l) => l.error).every((l) => l.error?.data?.code === 'LIMIT_REACHED')).toBe(true);
    const subs = new Set(answers.filter((l) => l.result).map((l) => (l.result as { subscription: number }).subscription));
    expect(subs.size).toBe(1);
    // Subscribing to drives that do not exist makes nothing.
    raw.call(800, 'subscribe', { id: 'ghost' });
    expect((await raw.answer(800)).error?.data?.code).toBe('SESSION_NOT_FOUND');
    raw.socket.destroy();
  });

  it('a client that stops reading its subscription is dropped; the host and the other clients go on', async () => {
    const slow = new Raw();
    await slow.hello();
    slow.call(1, 'subscribe', { id: 'noisy', output: true });
    await slow.answer(1);
    slow.socket.pause();
    const noisy = owner.drive('noisy');
    await noisy.sendText('head -c 40000000 /dev/urandom | base64 -w 200; echo noisy-done', { submit: true });
    const dropped = (): boolean => warnings.some((w) => /dropped a client \d+ bytes behind/.test(w));
    // Meanwhile another client is served as usual.
    const started = Date.now();
    while (!dropped() && Date.now() - started < 60_000) {
      expect((await owner.drive('watched').status()).id).toBe('watched');
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(dropped()).toBe(true);
    // A reader that stopped reading sees the end only once it reads again.
    slow.socket.resume();
    await slow.closed;
    expect(host.connectionCount).toBe(1);
    await noisy.kill();
    expect((await owner.list()).filter((i) => i.state === 'live').map((i) => i.id)).toEqual(['watched']);
  });
});
