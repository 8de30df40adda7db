/**
 * The host's Unix socket: newline-delimited JSON-RPC 2.0, one gate session per connection.
 * Nothing a client sends can stop the host or grow it without bound: every line is bounded (one
 * past the limit is answered, by id when its first bytes hold one, and the connection ends: a
 * peer that never sends a newline holds at most the limit), every malformed one
 * answered with a JSON-RPC error, calls in flight per connection are capped, a client that stops
 * reading is not read either (its requests wait while its answers are buffered), and a client too
 * slow for its subscriptions' items is dropped instead of buffered for.
 *
 * Who may connect is the OS's decision: the socket is 0600 in a 0700 directory of the data dir's
 * user (Node exposes no SO_PEERCRED to check the peer's uid itself). What a connection may do is
 * the token's, presented in `hello`.
 */
import { createServer, type Server, type Socket } from 'node:net';
import { chmodSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { JsonLineDecoder, type LineError } from '../wire/json-line.js';
import { CANCEL_NOTIFICATION, ENDED_NOTIFICATION, ITEM_NOTIFICATION, JSON_RPC, PROTOCOL_VERSION, WIRE_LIMITS, isWireId, type FeedEndReason, type HelloResult, type HostInfo, type WireId } from '../wire/protocol.js';
import { toWireError } from '../wire/wire-error.js';
import { CapabilityError, HostError } from '../wire/host-error.js';
import { TmuxDriveError } from '../common/errors.js';
import type { Gate, GateSession } from './gate.js';
import { takeoverMark } from '../driver/takeover-marks.js';

export const SOCKET_LIMITS = {
  /** Connections at once; each holds a socket descriptor and a gate session. */
  maxConnections: 1024,
  /** Calls one connection has in flight (waits included); more is LIMIT_REACHED. */
  callsInFlight: 64,
  /** A connection must say hello within this: a socket that never does holds a descriptor for nothing. */
  helloTimeoutMs: 10_000,
  /** Answers buffered for a client before its requests are no longer read (until it drains). */
  pauseReadingBytes: 1024 * 1024,
  /** Subscription items buffered for a client past this: it cannot keep up, and is dropped. */
  dropSlowClientBytes: 8 * 1024 * 1024,
  /** A closing host waits this long for a connection to take its last lines. */
  endFlushMs: 1000,
  /** Refusals logged per connection (the rest only counted at its end): a flood is not a log flood. */
  loggedRefusals: 3,
} as const;

export type SocketLimits = { readonly [K in keyof typeof SOCKET_LIMITS]: number };

export interface ServerLog {
  warn(message: string): void;
}

/** What a connection is served by: set when the socket starts serving (a bound standby socket has none yet). */
interface Served {
  readonly gate: Gate;
  readonly host: HostInfo;
}

export class SocketServer {
  private closing = false;
  private served: Served | undefined;

  private constructor(
    private readonly server: Server,
    private readonly connections: Set<Connection>,
    private where: { path: string; ino: number },
  ) {}

  /** Where it listens now: its private name until it serves, then the host's socket. */
  get path(): string {
    return this.where.path;
  }

  /**
   * Listens on `path`: bound under a private name, made 0600, then renamed into place, so the
   * path appears (a client watching the directory is woken) only once the socket is ready.
   */
  static async listen(path: string, gate: Gate, host: HostInfo, log: ServerLog, limits: SocketLimits = SOCKET_LIMITS): Promise<SocketServer> {
    const server = await SocketServer.bind(join(dirname(path), `.host-${process.pid}.sock`), log, limits);
    try {
      server.serveAt(path, gate, host);
    } catch (err) {
      await server.close();
      throw err;
    }
    return server;
  }

  /**
   * Binds a socket (0600) at the private `staging` path that serves nobody yet: a connection made
   * to it before serveAt() is closed at once. A standby binds its socket so while it waits; its
   * takeover then only names it (serveAt) instead of binding one on the takeover's clock.
   */
  static async bind(staging: string, log: ServerLog, limits: SocketLimits = SOCKET_LIMITS): Promise<SocketServer> {
    rmSync(staging, { force: true });
    const connections = new Set<Connection>();
    let self: SocketServer | undefined;
    const server = createServer({ allowHalfOpen: false }, (socket) => {
      takeoverMark('accept');
      const served = self?.served;
      if (!served) return void socket.destroy();
      if (connections.size >= limits.maxConnections) {
        socket.end(`${JSON.stringify({ jsonrpc: '2.0', id: null, error: toWireError(new TmuxDriveError('LIMIT_REACHED', `the host serves at most ${limits.maxConnections} connections`)) })}\n`);
        return;
      }
      const c = new Connection(socket, served.gate, served.host, log, limits, () => connections.delete(c));
      connections.add(c);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', (err) => reject(new HostError('NOT_SERVING', `cannot listen on ${staging} (${(err as NodeJS.ErrnoException).code ?? err.message})`, { path: staging })));
      server.listen(staging, () => {
        server.removeAllListeners('error');
        resolve();
      });
    });
    try {
      chmodSync(staging, 0o600);
      self = new SocketServer(server, connections, { path: staging, ino: statSync(staging).ino });
    } catch (err) {
      server.close();
      rmSync(staging, { force: true });
      throw new HostError('NOT_SERVING', `cannot make ${staging} private (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path: staging });
    }
    server.on('error', (err) => log.warn(`socket: ${err.message}`));
    return self;
  }

  /**
   * Serves `gate` and names the socket `path`: rename(2) over whatever is there (a dead host's
   * socket goes in the same step), so a client connecting to `path` reaches this socket, or the
   * file it replaced, never no file. Once.
   */
  serveAt(path: string, gate: Gate, host: HostInfo): void {
    if (this.served || this.closing) throw new HostError('NOT_SERVING', 'this socket already serves, or is closed');
    try {
      renameSync(this.where.path, path);
    } catch (err) {
      throw new HostError('NOT_SERVING', `cannot put the socket at ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path });
    }
    this.where = { path, ino: this.where.ino };
    this.served = { gate, host };
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Stops accepting, ends every connection, removes the socket (if it is still ours). */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const c of [...this.connections]) c.end();
    try {
      if (statSync(this.where.path).ino === this.where.ino) rmSync(this.where.path, { force: true });
    } catch {
      /* already gone */
    }
    await closed;
  }
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class Connection {
  private readonly decoder: JsonLineDecoder;
  private session: GateSession | undefined;
  private hello: Promise<void> | undefined;
  private readonly inflight = new Map<WireId, AbortController>();
  private helloTimer: NodeJS.Timeout | undefined;
  private refusals = 0;
  private paused = false;
  /** Lines are held for this turn's single write (send, flushTurn). */
  private corked = false;
  /** Subscription items are among them (a client behind on items is dropped). */
  private itemsThisTurn = false;
  /** A line past the limit ended the connection: nothing more of it is served. */
  private ending = false;
  private gone = false;

  constructor(
    private readonly socket: Socket,
    private readonly gate: Gate,
    private readonly host: HostInfo,
    private readonly log: ServerLog,
    private readonly limits: SocketLimits,
    private readonly onGone: () => void,
  ) {
    this.decoder = new JsonLineDecoder({
      maxLineBytes: WIRE_LIMITS.maxRequestBytes,
      maxDepth: WIRE_LIMITS.maxDepth,
      headBytes: WIRE_LIMITS.headBytes,
      onValue: (msg) => this.onMessage(msg),
      onError: (err) => this.onBadLine(err),
    });
    socket.on('data', (chunk: Buffer) => this.decoder.push(chunk));
    socket.on('drain', () => {
      if (this.paused && !this.gone && !this.ending) {
        this.paused = false;
        socket.resume();
      }
    });
    socket.on('error', () => undefined); // 'close' follows; a reset peer is not the host's problem
    socket.on('close', () => this.cleanup());
    this.helloTimer = setTimeout(() => this.destroy(), this.limits.helloTimeoutMs);
  }

  destroy(): void {
    this.socket.destroy();
    this.cleanup();
  }

  /** Ends the connection after what is buffered for it (the host is closing); cut after a second. */
  end(): void {
    if (this.gone) return;
    for (const c of this.inflight.values()) c.abort();
    this.socket.end();
    setTimeout(() => this.destroy(), this.limits.endFlushMs).unref();
  }

  private cleanup(): void {
    if (this.gone) return;
    this.gone = true;
    if (this.helloTimer) clearTimeout(this.helloTimer);
    for (const c of this.inflight.values()) c.abort();
    this.inflight.clear();
    this.session?.dispose();
    if (this.refusals > this.limits.loggedRefusals) this.log.warn(`socket: a connection ended after ${this.refusals} refused lines`);
    this.onGone();
  }

  private write(message: unknown, item: boolean): void {
    let line: string;
    try {
      line = JSON.stringify(message);
    } catch {
      return;
    }
    this.send(line, item);
  }

  /**
   * One line to the client. The lines of one turn of the event loop go out in one write (20
   * drives' answers or feed items in a turn were 20 write syscalls, each waking the client:
   * docs/scaling.md, 2026-12-02 13:35); what the kernel did not take then decides whether to pause
   * reading the client or drop it (flushTurn).
   */
  private send(line: string, item: boolean): void {
    if (this.gone) return;
    if (!this.corked) {
      this.corked = true;
      this.socket.cork();
      setImmediate(() => this.flushTurn());
    }
    if (item) this.itemsThisTurn = true;
    this.socket.write(`${line}\n`);
  }

  /** Writes this turn's lines; what is still buffered after that is how far behind the client is. */
  private flushTurn(): void {
    this.corked = false;
    this.socket.uncork();
    const items = this.itemsThisTurn;
    this.itemsThisTurn = false;
    if (this.gone) return;
    const backlog = this.socket.writableLength;
    if (items && backlog > this.limits.dropSlowClientBytes) {
      this.log.warn(`socket: dropped a client ${backlog} bytes behind on its subscriptions (too slow to read them)`);
      this.destroy();
      return;
    }
    if (!this.paused && backlog > this.limits.pauseReadingBytes) {
      this.paused = true;
      this.socket.pause();
    }
  }

  private respond(id: WireId | null, result: unknown): void {
    let line: string;
    try {
      line = JSON.stringify({ jsonrpc: '2.0', id, result });
    } catch {
      return this.fail(id, new HostError('PROTOCOL_ERROR', 'the answer could not be encoded as JSON'));
    }
    if (line.length > WIRE_LIMITS.maxResponseBytes) {
      return this.fail(id, new TmuxDriveError('LIMIT_REACHED', `the answer is ${line.length} bytes, past the ${WIRE_LIMITS.maxResponseBytes} a response may take: ask for less (a smaller limit or maxBytes)`));
    }
    this.send(line, false);
  }

  private fail(id: WireId | null, err: unknown): void {
    this.write({ jsonrpc: '2.0', id, error: toWireError(err) }, false);
  }

  private refuse(code: number, message: string, id: WireId | undefined): void {
    this.refusals += 1;
    if (this.refusals <= this.limits.loggedRefusals) this.log.warn(`socket: refused a line: ${message}`);
    const err = new HostError('PROTOCOL_ERROR', message);
    this.write({ jsonrpc: '2.0', id: id ?? null, error: { ...toWireError(err), code } }, false);
  }

  private onBadLine(err: LineError): void {
    if (this.gone || this.ending) return;
    const id = err.id !== undefined && isWireId(err.id) ? err.id : undefined;
    if (err.fault !== 'too_large') return this.refuse(err.fault === 'too_deep' ? JSON_RPC.InvalidRequest : JSON_RPC.ParseError, err.message, id);
    // Answered, then the connection ends: nothing more of it is read (a line that long is not a
    // client of ours, and skipping it would keep reading a peer that may never send a newline).
    this.refuse(JSON_RPC.InvalidRequest, `request too large (over ${WIRE_LIMITS.maxRequestBytes} bytes): the connection ends`, id);
    this.ending = true;
    for (const c of this.inflight.values()) c.abort();
    this.socket.pause();
    this.socket.end();
    setTimeout(() => this.destroy(), this.limits.endFlushMs).unref();
  }

  private onMessage(msg: unknown): void {
    if (this.gone || this.ending) return;
    if (!isPlainObject(msg)) return this.refuse(JSON_RPC.InvalidRequest, Array.isArray(msg) ? 'batches are not supported: one request per line' : 'not a JSON-RPC object', undefined);
    const id = isWireId(msg.id) ? msg.id : undefined;
    if (msg.jsonrpc !== '2.0') return this.refuse(JSON_RPC.InvalidRequest, 'jsonrpc must be "2.0"', id);
    if (typeof msg.method !== 'string') return this.refuse(JSON_RPC.InvalidRequest, 'not a request (no method)', id);
    if ('params' in msg && !isPlainObject(msg.params)) return this.refuse(JSON_RPC.InvalidParams, 'params must be an object', id);
    const params = (msg.params as Record<string, unknown> | undefined) ?? {};
    if (!('id' in msg)) return this.onNotification(msg.method, params);
    if (id === undefined) return this.refuse(JSON_RPC.InvalidRequest, 'id must be a string or an integer', undefined);
    if (msg.method === 'hello') return this.onHello(id, params);
    this.onCall(id, msg.method, params);
  }

  private onNotification(method: string, params: Record<string, unknown>): void {
    if (method !== CANCEL_NOTIFICATION) return; // notifications are answered by nobody: unknown ones are dropped
    const id = params.id;
    if (isWireId(id)) this.inflight.get(id)?.abort();
  }

  private onHello(id: WireId, params: Record<string, unknown>): void {
    if (this.session || this.hello) return this.fail(id, new HostError('PROTOCOL_ERROR', 'hello was already said on this connection'));
    if (this.helloTimer) clearTimeout(this.helloTimer);
    this.helloTimer = undefined;
    try {
      const identity = this.gate.verify(params.token);
      this.session = this.gate.open(
        identity,
        (subscription, drive, item) => this.write({ jsonrpc: '2.0', method: ITEM_NOTIFICATION, params: { subscription, drive, item } }, true),
        (reason: FeedEndReason) => this.endedByGate(reason),
      );
      const result: HelloResult = { protocol: PROTOCOL_VERSION, host: this.host, identity };
      this.respond(id, result);
      takeoverMark('hello');
    } catch (err) {
      // One attempt per connection: a wrong token ends it (no guessing loop on one socket).
      this.fail(id, err);
      this.socket.end();
    }
  }

  private endedByGate(reason: FeedEndReason): void {
    if (reason === 'host_closing') return; // the server ends the socket itself
    this.write({ jsonrpc: '2.0', method: ENDED_NOTIFICATION, params: { reason } }, false);
    this.socket.end();
  }

  private onCall(id: WireId, method: string, params: Record<string, unknown>): void {
    const session = this.session;
    if (!session) return this.fail(id, new CapabilityError('TOKEN_INVALID', 'no token yet: send hello with a token first'));
    if (this.inflight.has(id)) return this.refuse(JSON_RPC.InvalidRequest, 'a request with this id is already in flight', id);
    if (this.inflight.size >= this.limits.callsInFlight) return this.fail(id, new TmuxDriveError('LIMIT_REACHED', `at most ${this.limits.callsInFlight} calls in flight per connection`, { cap: 'callsInFlight' }));
    const controller = new AbortController();
    this.inflight.set(id, controller);
    session.call(method, params, controller.signal).then(
      (result) => {
        this.inflight.delete(id);
        this.respond(id, result ?? null);
      },
      (err: unknown) => {
        this.inflight.delete(id);
        if (!(err instanceof TmuxDriveError)) this.log.warn(`socket: ${method} failed unexpectedly: ${err instanceof Error ? err.message.slice(0, 200) : 'error'}`);
        this.fail(id, err);
      },
    );
  }
}
