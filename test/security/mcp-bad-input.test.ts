/**
 * Issue 10, item 7: the MCP server died on bad input. A request over 10 MiB made `tmux-drive mcp`
 * exit 0 with no reply and nothing on stderr (the SDK's stdio limit closed the transport, and close
 * meant shutdown); of 13 malformed JSON-RPC lines carrying ids, 11 got no reply. Here a real
 * `tmux-drive mcp` process (dist/) is fed raw lines: oversize, truncated JSON, a wrong jsonrpc
 * version, ids of every JSON type, batches, invalid UTF-8, NULs, deep nesting, wrong shapes. Every
 * line whose id can be read gets a JSON-RPC error with that id; the server never exits on input
 * and answers a valid tools/list afterwards; no reply repeats what the line carried.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { rmSync } from 'node:fs';
import { CLI, ensureBuilt, testSetup } from '../cli/dist.js';
import { TOOL_NAMES } from '../../lib/mcp/terminal-tools.js';

interface Reply {
  readonly jsonrpc?: unknown;
  readonly id?: unknown;
  readonly result?: { tools?: { name: string }[] } & Record<string, unknown>;
  readonly error?: { code: number; message: string };
}

/** A secret carried by hostile lines: no reply may repeat it. */
const CANARY = 'ghp_C4naryT0kenThatMustNeverBeEchoed0123';

class RawMcp {
  readonly child: ChildProcessWithoutNullStreams;
  /** Every line the server wrote on stdout, parsed (a line that is not JSON fails the test). */
  readonly replies: unknown[] = [];
  rawOut = '';
  stderr = '';
  exit: { code: number | null; signal: string | null } | undefined;
  private pending = '';
  private waiters: Array<() => void> = [];

  constructor(dataDir: string, config: string) {
    this.child = spawn(process.execPath, [CLI, 'mcp', '--data-dir', dataDir, '--config', config], { stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stdout.on('data', (b: Buffer) => {
      this.rawOut += b.toString('utf8');
      this.pending += b.toString('utf8');
      for (let nl = this.pending.indexOf('\n'); nl >= 0; nl = this.pending.indexOf('\n')) {
        const line = this.pending.slice(0, nl);
        this.pending = this.pending.slice(nl + 1);
        this.replies.push(JSON.parse(line));
      }
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.stderr.on('data', (b: Buffer) => {
      this.stderr += b.toString('utf8');
      for (const w of this.waiters.splice(0)) w();
    });
    this.child.on('exit', (code, signal) => {
      this.exit = { code, signal };
      for (const w of this.waiters.splice(0)) w();
    });
  }

  send(line: string | Buffer): void {
    this.child.stdin.write(line);
  }

  /** Resolves with the first reply matching `test`, or fails after `timeoutMs`. */
  async waitFor<T = unknown>(what: string, test: (r: unknown) => boolean, timeoutMs = 15_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.replies.find(test);
      if (found !== undefined) return found as T;
      if (this.exit) throw new Error(`the server exited (${JSON.stringify(this.exit)}) before ${what}; stderr: ${this.stderr.slice(-2000)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${what} within ${timeoutMs} ms; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, left);
        this.waiters.push(() => {
          clearTimeout(t);
          ok();
        });
      });
    }
  }

  async waitForStderr(pattern: RegExp, timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pattern.test(this.stderr)) {
      if (Date.now() > deadline) throw new Error(`stderr never matched ${pattern}: ${this.stderr.slice(-2000)}`);
      await new Promise<void>((ok) => {
        const t = setTimeout(ok, 200);
        this.waiters.push(() => {
          clearTimeout(t);
          ok();
        });
      });
    }
  }

  /** The error reply with this id. */
  errorFor(id: unknown, timeoutMs?: number): Promise<Reply> {
    return this.waitFor<Reply>(`an error reply with id ${JSON.stringify(id)}`, (r) => isObject(r) && 'error' in r && Object.is(r.id, id), timeoutMs);
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

let dir: string;
let mcp: RawMcp;
let probes = 0;

/** A valid tools/list, answered with the nine tools: the server is alive and serving. */
async function stillServes(): Promise<void> {
  const id = `alive-${++probes}`;
  mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`);
  const r = await mcp.waitFor<Reply>(`the tools/list reply ${id}`, (x) => isObject(x) && x.id === id);
  expect(r.error, JSON.stringify(r.error)).toBeUndefined();
  expect(r.result?.tools?.map((t) => t.name).sort()).toEqual([...TOOL_NAMES].sort());
}

const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const METHOD_NOT_FOUND = -32601;
const INVALID_PARAMS = -32602;

beforeAll(async () => {
  ensureBuilt();
  const setup = testSetup();
  dir = setup.dir;
  mcp = new RawMcp(setup.dataDir, setup.config);
  mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '0' } } })}\n`);
  await mcp.waitFor('the initialize reply', (r) => isObject(r) && r.id === 'init' && 'result' in r);
  mcp.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
});

afterAll(async () => {
  if (mcp && !mcp.exit) {
    const exited = new Promise<void>((ok) => mcp.child.once('exit', () => ok()));
    mcp.child.stdin.end();
    await exited;
  }
  rmSync(dir, { recursive: true, force: true });
});

describe('tmux-drive mcp fed raw hostile lines', () => {
  it('an oversize request (11 MiB) is answered with its id, logged on stderr, and the server lives on', async () => {
    const payload = 'A'.repeat(11 * 1024 * 1024);
    mcp.send(`{"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"name":"terminal_session_send_text","arguments":{"sessionId":"x","text":"${payload}${CANARY}"}}}\n`);
    const r = await mcp.errorFor('big-1', 30_000);
    expect(r.error?.code).toBe(INVALID_REQUEST);
    expect(r.error?.message).toMatch(/too large/);
    await mcp.waitForStderr(/oversize|too large/);
    await stillServes();
  });

  it('an oversize line whose id cannot be read cheaply (after the payload) is skipped with a log line', async () => {
    const before = mcp.stderr.length;
    mcp.send(`{"jsonrpc":"2.0","method":"tools/call","params":{"blob":"${'B'.repeat(9 * 1024 * 1024)}"},"id":"late"}\n`);
    await stillServes();
    await mcp.waitForStderr(/skipped/);
    expect(mcp.stderr.slice(before)).toMatch(/skipped/);
    expect(mcp.replies.some((r) => isObject(r) && r.id === 'late')).toBe(false);
  });

  it('truncated JSON: a parse error carrying the id when it was readable', async () => {
    mcp.send('{"jsonrpc":"2.0","id":7,"method":"tools/li\n');
    expect((await mcp.errorFor(7)).error?.code).toBe(PARSE_ERROR);
    mcp.send('{"jsonrpc":"2.0","id":"t-8","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2\n');
    expect((await mcp.errorFor('t-8')).error?.code).toBe(PARSE_ERROR);
    mcp.send('{"jsonrpc":"2.0","method":"tools/list","id":\n');
    await mcp.waitFor('a parse error without an id', (r) => isObject(r) && isObject(r.error) && r.error.code === PARSE_ERROR && !('id' in r));
    await stillServes();
  });

  it('a wrong or missing jsonrpc version, a method that is not a string, extra members: invalid request with the id', async () => {
    const cases: Array<[unknown, string]> = [
      ['v1', JSON.stringify({ jsonrpc: '1.0', id: 'v1', method: 'tools/list' })],
      ['v-none', JSON.stringify({ id: 'v-none', method: 'tools/list' })],
      ['v-num', JSON.stringify({ jsonrpc: 2.0, id: 'v-num', method: 'tools/list' })],
      ['m-num', JSON.stringify({ jsonrpc: '2.0', id: 'm-num', method: 5 })],
      ['extra', JSON.stringify({ jsonrpc: '2.0', id: 'extra', method: 'tools/list', surprise: true })],
      ['both', JSON.stringify({ jsonrpc: '2.0', id: 'both', method: 'tools/list', result: {} })],
      ['nothing', JSON.stringify({ jsonrpc: '2.0', id: 'nothing' })],
    ];
    for (const [, line] of cases) mcp.send(`${line}\n`);
    for (const [id] of cases) expect((await mcp.errorFor(id)).error?.code, String(id)).toBe(INVALID_REQUEST);
    await stillServes();
  });

  it('ids of every JSON type: strings and numbers are answered with that id, other types with an error and no id', async () => {
    const hugeId = `id-${'x'.repeat(100_000)}`;
    for (const id of ['s-1', '', hugeId, 101, 0, -3]) {
      mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/list' })}\n`);
      const r = await mcp.waitFor<Reply>(`a reply with id ${String(id).slice(0, 20)}`, (x) => isObject(x) && Object.is(x.id, id));
      expect(r.result?.tools?.length, String(id).slice(0, 20)).toBe(TOOL_NAMES.length);
    }
    // A fractional id is readable: answered, with that id, as an invalid request (MCP ids are integers).
    mcp.send('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}\n');
    expect((await mcp.errorFor(1.5)).error?.code).toBe(INVALID_REQUEST);
    const idless = mcp.replies.filter((r) => isObject(r) && 'error' in r && !('id' in r)).length;
    for (const id of ['null', 'true', 'false', '{"a":1}', '[1]']) mcp.send(`{"jsonrpc":"2.0","id":${id},"method":"tools/list"}\n`);
    await mcp.waitFor('five id-less invalid-request errors', () => mcp.replies.filter((r) => isObject(r) && isObject(r.error) && !('id' in r)).length >= idless + 5);
    for (const r of mcp.replies.filter((x) => isObject(x) && isObject(x.error) && !('id' in x)).slice(idless)) expect((r as Reply).error?.code).toBe(INVALID_REQUEST);
    await stillServes();
  });

  it('batches: one error per request in an array reply (MCP has no batches), none for notifications; [] is an invalid request', async () => {
    mcp.send(`${JSON.stringify([{ jsonrpc: '2.0', id: 'b-1', method: 'tools/list' }, { jsonrpc: '2.0', method: 'notifications/initialized' }, { jsonrpc: '2.0', id: 'b-2', method: 'ping' }, 7])}\n`);
    const batch = await mcp.waitFor<Reply[]>('the batch reply', (r) => Array.isArray(r));
    expect(batch.map((r) => r.id)).toEqual(['b-1', 'b-2', undefined]);
    for (const r of batch) expect(r.error?.code).toBe(INVALID_REQUEST);
    const before = mcp.replies.length;
    mcp.send('[]\n');
    await mcp.waitFor('the empty batch error', (r) => mcp.replies.indexOf(r) >= before && isObject(r) && isObject(r.error) && !('id' in r));
    await stillServes();
  });

  it('invalid UTF-8, a raw NUL, control characters: a parse error with the id', async () => {
    mcp.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"utf","method":"tools/list","params":{"x":"'), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from('"}}\n')]));
    expect((await mcp.errorFor('utf')).error?.code).toBe(PARSE_ERROR);
    mcp.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"nul","method":"tools/li'), Buffer.from([0]), Buffer.from('st"}\n')]));
    expect((await mcp.errorFor('nul')).error?.code).toBe(PARSE_ERROR);
    mcp.send(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":"nul2",'), Buffer.from([0]), Buffer.from('"method":"tools/list"}\n')]));
    expect((await mcp.errorFor('nul2')).error?.code).toBe(PARSE_ERROR);
    mcp.send(`{"jsonrpc":"2.0","id":"ctl","method":"tools/list","params":{"x":"a\tb\u0001"}}\n`);
    expect((await mcp.errorFor('ctl')).error?.code).toBe(PARSE_ERROR);
    await stillServes();
  });

  it('deep nesting is refused before it is parsed or validated (no stack to overflow)', async () => {
    const depth = 200_000;
    mcp.send(`{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"terminal_session_list","arguments":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}}\n`);
    expect((await mcp.errorFor('deep')).error?.code).toBe(INVALID_REQUEST);
    mcp.send(`${'['.repeat(depth)}\n`);
    await stillServes();
  });

  it('not an object (a number, a string, null, true): an invalid request without an id', async () => {
    const before = mcp.replies.length;
    for (const line of ['42', '"tools/list"', 'null', 'true']) mcp.send(`${line}\n`);
    await mcp.waitFor('four errors', () => mcp.replies.slice(before).filter((r) => isObject(r) && isObject(r.error) && r.error.code === INVALID_REQUEST).length >= 4);
    await stillServes();
  });

  it('params of the wrong shape are invalid params; an unknown method is method not found', async () => {
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'p-arr', method: 'tools/list', params: [1, 2] })}\n`);
    expect((await mcp.errorFor('p-arr')).error?.code).toBe(INVALID_PARAMS);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'p-str', method: 'tools/call', params: 'terminal_session_list' })}\n`);
    expect((await mcp.errorFor('p-str')).error?.code).toBe(INVALID_PARAMS);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'p-name', method: 'tools/call', params: { arguments: {} } })}\n`);
    expect((await mcp.errorFor('p-name')).error?.code).toBe(INVALID_PARAMS);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'p-init', method: 'initialize', params: { protocolVersion: 5 } })}\n`);
    expect((await mcp.errorFor('p-init')).error?.code).toBe(INVALID_PARAMS);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'nope', method: 'no/such/method' })}\n`);
    expect((await mcp.errorFor('nope')).error?.code).toBe(METHOD_NOT_FOUND);
    // A tool's own arguments are the tool's to refuse: a tool error result (isError), still a reply.
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'p-args', method: 'tools/call', params: { name: 'terminal_session_read', arguments: { sessionId: 5, maxBytes: CANARY } } })}\n`);
    const r = await mcp.waitFor<Reply>('the tool error', (x) => isObject(x) && x.id === 'p-args');
    expect(r.result?.isError).toBe(true);
    // Every string and list a tool takes is bounded: refused before the driver is called.
    const oversize: Array<[string, Record<string, unknown>]> = [
      ['cwd', { allowId: 'bash', cwd: `/${'c'.repeat(5000)}` }],
      ['env', { allowId: 'bash', env: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`V${i}`, 'x'])) }],
      ['env-value', { allowId: 'bash', env: { V: 'v'.repeat(20_000) } }],
      ['arg', { allowId: 'bash', args: ['a'.repeat(20_000)] }],
      ['project', { allowId: 'bash', project: 'p'.repeat(65) }],
    ];
    for (const [what, args] of oversize) mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: `big-arg-${what}`, method: 'tools/call', params: { name: 'terminal_session_create', arguments: args } })}\n`);
    for (const [what] of oversize) {
      const t = await mcp.waitFor<Reply>(`the ${what} refusal`, (x) => isObject(x) && x.id === `big-arg-${what}`);
      expect(t.result?.isError, what).toBe(true);
      expect(JSON.stringify(t.result), what).toMatch(/Input validation error|too_big|Too big|at most/);
    }
    expect(mcp.replies.some((x) => isObject(x) && typeof x.id === 'string' && x.id.startsWith('big-arg') && !JSON.stringify(x).includes('isError'))).toBe(false);
    await stillServes();
  });

  it('malformed notifications and stray responses get no reply (JSON-RPC) and do not stop the server', async () => {
    const before = mcp.replies.length;
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', method: 7 })}\n`);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: 'x' })}\n`);
    mcp.send(`${JSON.stringify({ jsonrpc: '2.0', id: 'never-asked', result: {} })}\n`);
    mcp.send('\n   \r\n');
    await stillServes();
    expect(mcp.replies.slice(before).filter((r) => !(isObject(r) && typeof r.id === 'string' && r.id.startsWith('alive-')))).toEqual([]);
  });

  it('a client that floods bad lines without reading the replies is answered in full once it reads (stdin waits meanwhile)', async () => {
    const before = mcp.replies.length;
    const lines = 20_000; // ~1.6 MB of replies: far beyond a pipe's 64 KiB
    mcp.child.stdout.pause();
    mcp.send(Array.from({ length: lines }, (_, i) => `{"jsonrpc":"1.0","id":"flood-${i}","method":"tools/list"}\n`).join(''));
    await new Promise((ok) => setTimeout(ok, 1000));
    mcp.child.stdout.resume();
    await mcp.waitFor('the last flood reply', (r) => isObject(r) && r.id === `flood-${lines - 1}`, 60_000);
    const ids = mcp.replies.slice(before).filter((r) => isObject(r) && typeof r.id === 'string' && r.id.startsWith('flood-')).map((r) => (r as Reply).id);
    expect(ids).toEqual(Array.from({ length: lines }, (_, i) => `flood-${i}`));
    await stillServes();
  });

  it('after everything: alive, every reply is one JSON-RPC 2.0 object (or batch) per line, and none repeats the canary', async () => {
    await stillServes();
    expect(mcp.exit).toBeUndefined();
    for (const r of mcp.replies.flatMap((x) => (Array.isArray(x) ? x : [x]))) expect(isObject(r) && r.jsonrpc === '2.0').toBe(true);
    expect(mcp.rawOut).not.toContain(CANARY);
    expect(mcp.rawOut).not.toContain('AAAAAAAAAAAAAAAA');
  });

  it('stdin EOF still ends the server cleanly (exit 0)', async () => {
    const exited = new Promise<{ code: number | null }>((ok) => mcp.child.once('exit', (code) => ok({ code })));
    mcp.child.stdin.end();
    expect((await exited).code).toBe(0);
  });
});
