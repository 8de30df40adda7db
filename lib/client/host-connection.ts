/**
 * One connection to a gate: the host's socket (SocketConnection), or the gate itself in this
 * process when no host serves (LocalConnection, local-connection.ts). Both speak the same verbs
 * and return the same JSON shapes, so the Client above them cannot tell, and neither can a test.
 */
import { connect, type Socket } from 'node:net';
import { TmuxDriveError } from '../common/errors.js';
import { JsonLineDecoder, type LineError } from '../wire/json-line.js';
import { CANCEL_NOTIFICATION, ENDED_NOTIFICATION, ITEM_NOTIFICATION, WIRE_LIMITS, isWireId, type HelloResult, type ItemParams, type WireResponse } from '../wire/protocol.js';
import { fromWireError } from '../wire/wire-error.js';
import { HostError } from '../wire/host-error.js';

export interface HostConnection {
  readonly hello: HelloResult;
  call(method: string, params: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<unknown>;
  /** Subscription items, as they come. */
  onItem: ((params: ItemParams) => void) | undefined;
  /** The connection ended, not by close(): the host went away, or ended it (`reason`). */
  onClose: ((reason: string) => void) | undefined;
  close(): void;
}

/** How long a host has to answer hello: a socket that accepts and says nothing is a wedged host. */
export const HELLO_TIMEOUT_MS = 10_000;

interface Pending {
  readonly method: string;
  resolve(value: unknown): void;
  reject(err: TmuxDriveError): void;
}

/** Answers and items nest a few levels (journal tags, dialogs); far deeper is not a host of ours. */
const MAX_RESPONSE_DEPTH = 64;

export class SocketConnection implements HostConnection {
  onItem: ((params: ItemParams) => void) | undefined;
  onClose: ((reason: string) => void) | undefined;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closedByUs = false;
  private ended = false;
  private endReason = 'the host closed the connection';
  private helloResult: HelloResult | undefined;
  /** Lines are held for this turn's single write (writeLine). */
  private corked = false;

  private constructor(private readonly socket: Socket) {
    const decoder = new JsonLineDecoder({
      // A response is bounded by the host; a line past that is not from a host of ours.
      maxLineBytes: WIRE_LIMITS.maxResponseBytes + 1024,
      maxDepth: MAX_RESPONSE_DEPTH,
      headBytes: WIRE_LIMITS.headBytes,
      onValue: (msg) => this.onMessage(msg),
      onError: (err) => this.onBadLine(err),
    });
    socket.on('data', (chunk: Buffer) => decoder.push(chunk));
    socket.on('error', () => undefined);
    socket.on('close', () => this.onSocketClose());
  }

  get hello(): HelloResult {
    if (!this.helloResult) throw new HostError('PROTOCOL_ERROR', 'no hello yet');
    return this.helloResult;
  }

  /** Connects to `path` and says hello with `token`; the host's refusal is a typed error. */
  static open(path: string, token: string | undefined, helloTimeoutMs = HELLO_TIMEOUT_MS): Promise<SocketConnection> {
    return new Promise((resolve, reject) => {
      const socket = connect(path);
      const fail = (err: NodeJS.ErrnoException): void => {
        socket.destroy();
        reject(new HostError('NOT_SERVING', `no host answers on ${path} (${err.code ?? err.message})`, { socket: path, errno: err.code }));
      };
      socket.once('error', fail);
      socket.once('connect', () => {
        socket.off('error', fail);
        const c = new SocketConnection(socket);
        const timer = setTimeout(() => {
          c.close();
          reject(new HostError('HOST_LOST', `the host on ${path} did not answer hello within ${helloTimeoutMs} ms`, { socket: path }));
        }, helloTimeoutMs);
        c.call('hello', token === undefined ? {} : { token }).then(
          (result) => {
            clearTimeout(timer);
            c.helloResult = result as HelloResult;
            resolve(c);
          },
          (err: unknown) => {
            clearTimeout(timer);
            c.close();
            reject(err);
          },
        );
      });
    });
  }

  call(method: string, params: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<unknown> {
    if (this.ended) return Promise.reject(new HostError('HOST_LOST', `${this.endReason}; the call was not sent`, { delivery: 'not-sent' }));
    if (signal?.aborted) return Promise.reject(new TmuxDriveError('ABORTED', `${method} was aborted before it was sent`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const onAbort = (): void => void this.notify(CANCEL_NOTIFICATION, { id });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.pending.set(id, {
        method,
        resolve: (v) => {
          signal?.removeEventListener('abort', onAbort);
          resolve(v);
        },
        reject: (e) => {
          signal?.removeEventListener('abort', onAbort);
          reject(e);
        },
      });
      this.writeLine(JSON.stringify({ jsonrpc: '2.0', id, method, params }));
    });
  }

  /**
   * The lines of one turn of the event loop go out in one write: a harness that drives 20 drives
   * at once sends 20 calls in a turn, which were 20 writes and 20 wake-ups of the host.
   */
  private writeLine(line: string): void {
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      setImmediate(() => {
        this.corked = false;
        this.socket.uncork();
      });
    }
    this.socket.write(`${line}\n`);
  }

  close(): void {
    this.closedByUs = true;
    this.socket.destroy();
  }

  private notify(method: string, params: Record<string, unknown>): void {
    if (!this.ended) this.writeLine(JSON.stringify({ jsonrpc: '2.0', method, params }));
  }

  private settle(id: number, result: unknown, err: TmuxDriveError | undefined): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (err) p.reject(err);
    else p.resolve(result);
  }

  /** A line that is not a value fails the call it names; one past the limit ends the connection too. */
  private onBadLine(err: LineError): void {
    if (typeof err.id === 'number') this.settle(err.id, undefined, new HostError('PROTOCOL_ERROR', `the host's answer was refused: ${err.message}`, { fault: err.fault }));
    if (err.fault !== 'too_large') return;
    this.endReason = 'the host sent a line past the size limit';
    this.socket.destroy();
  }

  private onMessage(value: unknown): void {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return; // not from a host of ours: ignored
    const msg = value as Partial<WireResponse> & { method?: unknown; params?: unknown };
    if (typeof msg.method === 'string') {
      if (msg.method === ITEM_NOTIFICATION && typeof msg.params === 'object' && msg.params !== null) this.onItem?.(msg.params as ItemParams);
      if (msg.method === ENDED_NOTIFICATION) {
        const reason = (msg.params as { reason?: unknown } | undefined)?.reason;
        this.endReason = `the host ended the connection (${typeof reason === 'string' ? reason : 'ended'})`;
      }
      return;
    }
    if (!isWireId(msg.id) || typeof msg.id !== 'number') return;
    if (msg.error) this.settle(msg.id, undefined, fromWireError(msg.error));
    else this.settle(msg.id, msg.result, undefined);
  }

  private onSocketClose(): void {
    if (this.ended) return;
    this.ended = true;
    for (const [id, p] of [...this.pending]) {
      this.pending.delete(id);
      p.reject(new HostError('HOST_LOST', `${this.endReason} before answering ${p.method}: whether it took effect is unknown`, { method: p.method, delivery: 'unknown' }));
    }
    if (!this.closedByUs) this.onClose?.(this.endReason);
  }
}
