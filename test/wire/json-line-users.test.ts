/**
 * The shared decoder as its users meet it, over real Unix sockets: the host's client
 * (SocketConnection) reading a host that splits its lines anywhere, ends them with CRLF and sends
 * a line that is not UTF-8; and the MCP stdio transport (StdioLineTransport, here on a socket as
 * its stdin and stdout) fed split, invalid and oversize lines. The host's own socket is covered in
 * test/serve/observers-hostile.test.ts (a 9 MiB line answered by id, then the connection ends).
 * The "host" here is a plain net server written in the test: the point is the client's decoding
 * of bytes no real host sends.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SocketConnection } from '../../lib/client/host-connection.js';
import { StdioLineTransport } from '../../lib/mcp/stdio-line-transport.js';
import { LINE_LIMITS } from '../../lib/mcp/json-rpc-line.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { TmuxDriveError } from '../../lib/common/errors.js';

const dirs: string[] = [];
const servers: Server[] = [];

afterEach(() => {
  for (const s of servers.splice(0)) s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function listen(onSocket: (s: Socket) => void): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'tdw-'));
  dirs.push(dir);
  const path = join(dir, 's.sock');
  const server = createServer(onSocket);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(path, resolve));
  return path;
}

/** Writes `bytes` one small piece at a time, each its own write (its own chunk at the reader, mostly). */
async function dribble(s: Socket, bytes: Buffer, piece = 1): Promise<void> {
  for (let i = 0; i < bytes.length; i += piece) {
    s.write(bytes.subarray(i, i + piece));
    await new Promise((r) => setImmediate(r));
  }
}

/** The request lines a fake host has read, as they arrive. */
function requests(s: Socket, onRequest: (r: { id: number; method: string }) => void): void {
  let buf = '';
  s.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop() ?? '';
    for (const l of lines) onRequest(JSON.parse(l) as { id: number; method: string });
  });
}

describe('the host client (SocketConnection) on a real socket', () => {
  it('reads answers split at every byte, inside UTF-8 and CRLF; a line that is not UTF-8 fails its own call only', async () => {
    const path = await listen((s) => {
      requests(s, (r) => {
        const hello = { jsonrpc: '2.0', id: r.id, result: { protocol: 1, host: { pid: 1, startedAt: 1, dataDir: '/x' }, identity: { tokenId: 'owner ✓', scope: { classes: ['observe'] } } } };
        if (r.method === 'hello') void dribble(s, Buffer.from(`${JSON.stringify(hello)}\r\n`));
        else if (r.method === 'bad') s.write(Buffer.concat([Buffer.from(`{"jsonrpc":"2.0","id":${r.id},"result":"`), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]));
        else void dribble(s, Buffer.from(`\n\n${JSON.stringify({ jsonrpc: '2.0', id: r.id, result: { text: '日本 𝄞 é' } })}\r\n`), 3);
      });
    });
    const c = await SocketConnection.open(path, 'tdk_x');
    try {
      expect(c.hello.identity.tokenId).toBe('owner ✓');
      const bad = await c.call('bad', {}).catch((e: unknown) => e);
      expect(bad).toBeInstanceOf(TmuxDriveError);
      expect((bad as TmuxDriveError).code).toBe('PROTOCOL_ERROR');
      // The connection lives on: the next call is answered.
      expect(await c.call('good', {})).toEqual({ text: '日本 𝄞 é' });
    } finally {
      c.close();
    }
  });
});

describe('the MCP stdio transport on a real socket', () => {
  it('delivers split requests, answers invalid and oversize lines by id without closing, and serves the next line', async () => {
    const messages: JSONRPCMessage[] = [];
    const logs: string[] = [];
    let transport: StdioLineTransport | undefined;
    const path = await listen((s) => {
      transport = new StdioLineTransport({ stdin: s, stdout: s, log: (m) => logs.push(m) });
      transport.onmessage = (m) => messages.push(m);
      void transport.start();
    });
    const peer = connect(path);
    const replies: { id?: unknown; error?: { code: number; message: string } }[] = [];
    requests(peer, (r) => replies.push(r as never));
    await new Promise((r) => peer.once('connect', r));
    await dribble(peer, Buffer.from('{"jsonrpc":"2.0","id":"ü1","method":"ping"}\r\n'));
    peer.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":"'), Buffer.from([0xff]), Buffer.from('"}}\n')]));
    // Past the cap, with the rest still to come: answered at once, by id.
    peer.write(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"x","arguments":{"t":"${'x'.repeat(LINE_LIMITS.maxLineBytes)}`);
    await expect.poll(() => replies.length, { timeout: 10_000 }).toBe(2);
    peer.write('"}}}\n{"jsonrpc":"2.0","id":4,"method":"ping"}\n');
    await expect.poll(() => messages.length, { timeout: 10_000 }).toBe(2);
    expect(messages.map((m) => (m as { id: unknown }).id)).toEqual(['ü1', 4]);
    expect(replies.map((r) => [r.id, r.error?.code])).toEqual([
      [2, -32700],
      [3, -32600],
    ]);
    expect(logs.some((l) => l.includes('too large'))).toBe(true);
    await transport?.close();
    peer.destroy();
  });
});
