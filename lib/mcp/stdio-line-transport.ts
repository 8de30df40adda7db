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
import { LINE_LIMITS, judgeLine, judgeOversizeLine, type LineVerdict } from './json-rpc-line.js';

export interface StdioLineTransportOptions {
  readonly stdin: NodeJS.ReadableStream;
  readonly stdout: NodeJS.WritableStream;
  /** One line per refused or skipped input (no content of it), and transport failures. */
  readonly log: (message: string) => void;
}

const NEWLINE = 0x0a;
const CR = 0x0d;

export class StdioLineTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  /** The current line's bytes so far (while it is within the limit). */
  private parts: Buffer[] = [];
  private size = 0;
  /** Set once the current line passed the limit: its first bytes, kept to find its id. */
  private head: Buffer | undefined;
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
    this.parts = [];
    this.head = undefined;
    this.onclose?.();
  }

  private readonly onData = (chunk: Buffer | string): void => {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
    let start = 0;
    for (let nl = bytes.indexOf(NEWLINE, start); nl >= 0; nl = bytes.indexOf(NEWLINE, start)) {
      this.take(bytes.subarray(start, nl));
      this.endLine();
      start = nl + 1;
    }
    if (start < bytes.length) this.take(bytes.subarray(start));
  };

  private readonly onEnd = (): void => {
    if (this.size > 0 || this.head) this.opts.log(`ignored an unterminated last line of ${this.size} bytes at end of input`);
    this.parts = [];
    this.size = 0;
    this.head = undefined;
  };

  private readonly onOutputError = (error: Error): void => {
    this.opts.log(`stdout failed (${(error as NodeJS.ErrnoException).code ?? error.message}): closing`);
    void this.close();
  };

  /** Adds bytes of the current line, switching to skipping once it passes the limit. */
  private take(bytes: Buffer): void {
    if (bytes.length === 0) return;
    this.size += bytes.length;
    if (this.head) return;
    this.parts.push(bytes);
    if (this.size > LINE_LIMITS.maxLineBytes) {
      const whole = Buffer.concat(this.parts);
      this.head = Buffer.from(whole.subarray(0, LINE_LIMITS.headBytes));
      this.parts = [];
    }
  }

  private endLine(): void {
    const size = this.size;
    let verdict: LineVerdict;
    if (this.head) {
      verdict = judgeOversizeLine(this.head, size);
    } else {
      let line = this.parts.length === 1 ? (this.parts[0] as Buffer) : Buffer.concat(this.parts, size);
      if (line.length > 0 && line[line.length - 1] === CR) line = line.subarray(0, line.length - 1);
      verdict = judgeLine(line);
    }
    this.parts = [];
    this.size = 0;
    this.head = undefined;
    this.act(verdict);
  }

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
