/**
 * The MCP server's stdio transport: newline-delimited JSON-RPC, framed on bytes, each line judged
 * by json-rpc-line.ts before the SDK sees it. Unlike the SDK's StdioServerTransport it never
 * closes on input (an oversize line is skipped to its newline, never buffered whole; a malformed
 * one is answered); it closes only when asked (stdin EOF and signals are the server's to handle)
 * or when stdout fails (nobody can hear the replies any more). Replies respect stdout's
 * backpressure: while stdout is full, stdin is paused, so a client that floods bad lines without
 * reading the answers cannot grow this process's memory.
 */
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { JsonLineDecoder } from '../wire/json-line.js';
import { LINE_LIMITS, judgeLineError, judgeValue, type LineVerdict } from './json-rpc-line.js';

export interface StdioLineTransportOptions {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  /** One line per refused or skipped input (no content of it), and transport failures. */
  readonly log: (message: string) => void;
}

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /**
   * The shared decoder; an oversize line is answered and skipped to its newline, never buffered
   * whole. Unlike the host's socket, stdin is not ended for it: that would end the server.
   */
  private readonly framer = new JsonLineDecoder({
    maxLineBytes: LINE_LIMITS.maxLineBytes,
    maxDepth: LINE_LIMITS.maxDepth,
    headBytes: LINE_LIMITS.headBytes,
    onValue: (value, size) => this.act(judgeValue(value, size)),
    onError: (err) => this.act(judgeLineError(err)),
  });
  /** Set while stdout is full: one wait for its 'drain', shared by every write meanwhile. */
  private draining: Promise<void> | undefined;
  private started = false;
  private closed = false;

  constructor(private readonly opts: StdioLineTransportOptions) {}

  async start(): Promise<void> {
    if (this.started) throw new Error('StdioLineTransport already started');
    this.started = true;
    this.opts.stdin.on('data', this.onData);
    this.opts.stdin.on('end', this.onEnd);
    this.opts.stdout.on('error', this.onOutputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.opts.stdin.off('data', this.onData);
    this.opts.stdin.off('end', this.onEnd);
    this.opts.stdout.off('error', this.onOutputError);
    this.framer.end();
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    this.framer.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
  };

  private readonly onEnd = (): void => {
    const size = this.framer.end();
    if (size > 0) this.opts.log(`ignored an unterminated last line of ${size} bytes at end of input`);
  };

  private readonly onOutputError = (error: Error): void => {
    this.opts.log(`stdout failed (${(error as NodeJS.ErrnoException).code ?? error.message}): closing`);
    void this.close();
  };

  private act(verdict: LineVerdict): void {
    switch (verdict.kind) {
      case 'empty':
        return;
      case 'message':
        try {
          this.onmessage?.(verdict.message);
        } catch (error) {
          this.onerror?.(error instanceof Error ? error : new Error(String(error)));
        }
        return;
      case 'drop':
        this.opts.log(verdict.log);
        return;
      case 'reply':
        this.opts.log(verdict.log);
        void this.write(verdict.reply);
        return;
    }
  }

  /** One line on stdout; while stdout is full, stdin waits (nothing is read that cannot be answered). */
  private write(message: unknown): Promise<void> {
    if (this.closed) return Promise.resolve();
    const ok = this.opts.stdout.write(`${JSON.stringify(message)}\n`);
    if (ok && !this.draining) return Promise.resolve();
    this.draining ??= new Promise((resolve) => {
      this.opts.stdin.pause();
      this.opts.stdout.once('drain', () => {
        this.draining = undefined;
        if (!this.closed) this.opts.stdin.resume();
        resolve();
      });
    });
    return this.draining;
  }
}
