/**
 * Issue 13, MCP: unknown tool arguments are a tool error naming them (the SDK stripped them, and
 * terminal_session_create with the seed's `command` launched the entry's default program);
 * terminal_session_send_text takes `settle`; a long terminal_session_wait backgrounds (seed 000: "a
 * long wait auto-backgrounds so the turn never blocks"), reports progress on the client's token
 * while it is in the call, announces its completion and is collected by its waitId. Through the
 * SDK's own Client, in process (InMemoryTransport), through the gate to a real driver, tmux and bash.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { LoggingMessageNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { createMcpServer } from '../../lib/mcp/server.js';
import { Client as GateClient } from '../../lib/client/client.js';
import { LocalConnection } from '../../lib/client/local-connection.js';
import { Gate } from '../../lib/serve/gate.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { type: string; text?: string }[];
}

let t: TestDriver;
let client: Client;
const logged: Record<string, unknown>[] = [];

beforeAll(async () => {
  t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  // The MCP tools call the gate through a Client, as `tmux-drive mcp` does when it hosts in-process.
  const server = createMcpServer(GateClient.over(new LocalConnection(new Gate({ driver: t.driver }))));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  client = new Client({ name: 'tmux-drive-test', version: '0.0.0' });
  client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logged.push(n.params.data as Record<string, unknown>));
  await client.connect(clientSide);
});

afterAll(async () => {
  await client?.close();
  await t?.cleanup();
});

async function call(name: string, args: Record<string, unknown>, opts: Parameters<Client['callTool']>[2] = {}): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, opts)) as ToolResult;
}

const textOf = (r: ToolResult): string => r.content.map((c) => c.text ?? '').join('');

async function callJson<T = Record<string, unknown>>(name: string, args: Record<string, unknown>, opts: Parameters<Client['callTool']>[2] = {}): Promise<T> {
  const r = await call(name, args, opts);
  expect(r.isError, textOf(r)).toBeFalsy();
  return JSON.parse(textOf(r)) as T;
}

async function bash(name: string): Promise<void> {
  await callJson('terminal_session_create', { allowId: 'bash', name, args: ['--norc', '--noprofile'] });
  expect((await callJson<{ outcome: string }>('terminal_session_wait', { sessionId: name, forText: '$ ', timeoutMs: 10_000 })).outcome).toBe('text');
}

describe('unknown tool arguments', () => {
  it('terminal_session_create with `command` is a tool error naming it, with what to do, and launches nothing', async () => {
    const r = await call('terminal_session_create', { allowId: 'bash', command: 'python3', name: 'cmd' });
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain('BAD_ARGUMENT');
    expect(textOf(r)).toContain('"command"');
    expect(textOf(r)).toContain('allowId');
    expect(t.driver.list().map((s) => s.id)).not.toContain('cmd');
  });

  it('every tool names each unknown argument (bounded), also a tool that takes none', async () => {
    const list = await call('terminal_session_list', { owner: 'me' });
    expect(list.isError).toBe(true);
    expect(textOf(list)).toMatch(/unknown argument\(s\) "owner" \(terminal_session_list takes no arguments\)/);
    const many = Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`k${i}${'x'.repeat(200)}`, 1]));
    const status = await call('terminal_session_status', { sessionId: 'nope', ...many });
    expect(status.isError).toBe(true);
    expect(textOf(status)).toContain('and 42 more');
    expect(textOf(status).length).toBeLessThan(2000);
  });

  it('the tools list their arguments as closed (additionalProperties: false)', async () => {
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(9);
    for (const tool of tools) expect(tool.inputSchema.additionalProperties, tool.name).toBe(false);
  });
});

describe('terminal_session_send_text settle', () => {
  it('returns once the screen has been quiet for settle ms: the reaction is on the screen', async () => {
    await bash('settle');
    const sent = await callJson('terminal_session_send_text', { sessionId: 'settle', text: 'sleep 0.4; echo settled-$((20 + 22))', submit: true, settle: 800 });
    expect(sent).toMatchObject({ submitted: true, settledMs: 800 });
    // Without settle the call returns when Enter is in: `sleep 0.4` has not printed yet.
    expect(textOf(await call('terminal_session_read', { sessionId: 'settle' }))).toMatch(/^settled-42$/m);
  });
});

describe('a long terminal_session_wait backgrounds', () => {
  it('returns "backgrounded" with a waitId, announces the completion, and the waitId collects it once', async () => {
    await bash('long');
    const started = Date.now();
    const first = await callJson<{ outcome: string; waitId: string; next: string }>('terminal_session_wait', { sessionId: 'long', forText: 'ready-7', timeoutMs: 30_000, backgroundAfterMs: 300 });
    expect(first.outcome).toBe('backgrounded');
    expect(first.waitId).toMatch(/^w-[0-9a-f]{12}$/);
    expect(Date.now() - started).toBeLessThan(5000);
    // The turn is free: the session can be driven while the wait goes on.
    await callJson('terminal_session_send_text', { sessionId: 'long', text: 'sleep 1; echo ready-$((3 + 4))', submit: true });
    // Still pending: collecting it backgrounds again, with the same id.
    expect(await callJson('terminal_session_wait', { sessionId: 'long', waitId: first.waitId, backgroundAfterMs: 50 })).toMatchObject({ outcome: 'backgrounded', waitId: first.waitId });
    const collected = await callJson<{ outcome: string }>('terminal_session_wait', { sessionId: 'long', waitId: first.waitId, backgroundAfterMs: 20_000 });
    expect(collected).toMatchObject({ sessionId: 'long', outcome: 'text' });
    await expect.poll(() => logged.find((d) => d.waitId === first.waitId), { timeout: 5000 }).toMatchObject({ event: 'wait_completed', sessionId: 'long', outcome: 'text' });
    const again = await call('terminal_session_wait', { sessionId: 'long', waitId: first.waitId });
    expect(again.isError).toBe(true);
    expect(textOf(again)).toContain('BAD_ARGUMENT');
  });

  it('a waitId with new wait arguments, or of another session, is a tool error', async () => {
    const first = await callJson<{ waitId: string }>('terminal_session_wait', { sessionId: 'long', forText: 'never-printed', timeoutMs: 5000, backgroundAfterMs: 100 });
    expect(textOf(await call('terminal_session_wait', { sessionId: 'long', waitId: first.waitId, forText: 'x' }))).toMatch(/^BAD_ARGUMENT: waitId collects a wait already running: forText/);
    expect(textOf(await call('terminal_session_wait', { sessionId: 'settle', waitId: first.waitId }))).toMatch(/^BAD_ARGUMENT: no backgrounded wait/);
  });

  it('a quick wait is answered in the call, as before', async () => {
    const r = await callJson('terminal_session_wait', { sessionId: 'long', forIdleMs: 200, timeoutMs: 5000 });
    expect(r).toMatchObject({ outcome: 'idle' });
  });

  it('reports progress on the client\'s token while the wait is in the call, then backgrounds', async () => {
    const progress: number[] = [];
    const r = await callJson<{ outcome: string }>(
      'terminal_session_wait',
      { sessionId: 'long', forText: 'never-printed', timeoutMs: 60_000, backgroundAfterMs: 12_500 },
      { onprogress: (p) => void progress.push(p.progress), resetTimeoutOnProgress: true },
    );
    expect(r.outcome).toBe('backgrounded');
    expect(progress[0]).toBe(10);
  }, 20_000);
});
