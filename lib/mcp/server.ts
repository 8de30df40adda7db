/**
 * `tmux-drive mcp`: an MCP server on stdio exposing the nine terminal_session_* tools. Its calls go
 * to the gate of the data dir: through the serving host when one serves (it reconnects to a
 * standby that takes over), else one long-lived Driver in this process, opened at start
 * (re-attaching the live drives by name) and closed when stdin ends or on SIGTERM/SIGINT
 * (detaching: the drives keep running for the next server). Never closed because of what a
 * client sent (StdioLineTransport answers or skips bad lines). The allowlist and every other
 * setting come from the operator's config file (or the built-in default); no tool can widen them.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { Client } from '../client/client.js';
import { openGate, type OpenGateOptions } from '../client/open-gate.js';
import { registerTerminalTools, SERVER_INSTRUCTIONS } from './terminal-tools.js';
import { StdioLineTransport } from './stdio-line-transport.js';

export interface McpServerOptions {
  /** How to reach the gate (data dir, config file, token, socket); logger and owner are set here. */
  readonly gate: Omit<OpenGateOptions, 'logger'>;
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  /** Where warnings go (never stdout: it carries the protocol). */
  readonly stderr?: { write(text: string): unknown };
}

function packageVersion(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg)) return String((JSON.parse(readFileSync(pkg, 'utf8')) as { version?: unknown }).version ?? '0.0.0');
    const up = dirname(dir);
    if (up === dir) return '0.0.0';
    dir = up;
  }
}

/** An McpServer with the nine tools over `client` (not connected to a transport). */
export function createMcpServer(client: Client): McpServer {
  // logging: a backgrounded wait announces its completion as a log notification.
  const server = new McpServer({ name: 'tmux-drive', version: packageVersion() }, { instructions: SERVER_INSTRUCTIONS, capabilities: { logging: {} } });
  registerTerminalTools(server, client);
  return server;
}

/** Serves until stdin ends or SIGTERM/SIGINT; then lets go of the gate (in-process: detaches every drive) and resolves. */
export async function runMcpServer(opts: McpServerOptions): Promise<void> {
  const stderr = opts.stderr ?? process.stderr;
  const gate = await openGate({
    ...opts.gate,
    logger: { warn: (message) => stderr.write(`tmux-drive mcp: warning: ${message.replace(/\s*\n\s*/g, ' ')}\n`) },
  });
  const server = createMcpServer(gate.client);
  let stopping = false;
  const note = (message: string): void => void stderr.write(`tmux-drive mcp: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  gate.client.on('disconnected', (reason) => note(`the serving host went away (${reason}); waiting for one to serve again`));
  gate.client.on('reconnected', (host) => note(`serving host pid ${host.pid} answers again`));
  gate.client.on('closed', (reason) => {
    if (!stopping) note(`no serving host: ${reason}; tool calls fail until this server is restarted`);
  });
  const stdin = (opts.stdin ?? process.stdin) as NodeJS.ReadStream;
  const log = (message: string): void => void stderr.write(`tmux-drive mcp: ${message.replace(/\s*\n\s*/g, ' ')}\n`);
  const transport = new StdioLineTransport({ stdin, stdout: opts.stdout ?? process.stdout, log });
  let finish: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => {
    finish = resolve;
  });
  let closing: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    // server.close() calls transport.onclose, which calls shutdown again: the flag is set before.
    if (stopping) return closing ?? Promise.resolve();
    stopping = true;
    closing = (async () => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      await server.close().catch(() => undefined);
      await gate.close();
      finish();
    })();
    return closing;
  };
  const onSignal = (): void => void shutdown();
  const onEnd = (): void => void shutdown();
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  stdin.on('end', onEnd);
  stdin.on('close', onEnd);
  transport.onclose = () => void shutdown();
  // A handler that throws, a response to nothing: logged, never fatal. The SDK's messages append
  // the offending message after a colon: only the part before it is logged (no client content).
  server.server.onerror = (error) => log(`protocol: ${error.message.split(':')[0]?.slice(0, 120) ?? 'error'}`);
  try {
    await server.connect(transport);
  } catch (err) {
    await shutdown();
    throw err;
  }
  await finished;
}
