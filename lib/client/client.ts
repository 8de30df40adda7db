/**
 * lib/client: the library's client of a serving host, with the Session-shaped API
 * (`Client.connect(dataDir, { token })`, `client.drive(id)`, `client.create(…)`): a harness, the
 * CLI and the MCP server drive what a host holds through it, without a lease of their own.
 *
 * When the host goes away (it was stopped, or killed and a standby takes over) the client
 * reconnects by itself: it waits for the socket to reappear (woken by the kernel, see
 * socket-watch.ts), says hello again, and resumes each subscription after the last journal seq it
 * delivered (drive-feeds.ts), so a listener sees every stored journal event exactly once; the
 * holds it had are asked for again first (`holdLost` when one cannot be). Calls made meanwhile
 * wait for the new host; a call that was in flight when the host went is sent again only if it
 * changes nothing (read, status, list, …); any other fails with HOST_LOST (`delivery: 'unknown'`).
 *
 * Imports: lib/wire, the public types of the library; the socket and (for in-process commands)
 * the gate through a HostConnection.
 */
import { EventEmitter } from 'node:events';
import type { Disposable } from '../common/disposable.js';
import { TmuxDriveError } from '../common/errors.js';
import type { CreateOptions, PrunedDrive, SessionInfo } from '../driver/driver.js';
import { HostError } from '../wire/host-error.js';
import { IDEMPOTENT_VERBS, type HostInfo, type Identity, type Scope } from '../wire/protocol.js';
import { servePaths } from '../serve/serve-paths.js';
import { readOwnerToken } from '../serve/token-store.js';
import { DriveFeeds } from './drive-feeds.js';
import { SocketConnection, type HostConnection } from './host-connection.js';
import { RemoteDrive, type DriveChannel, type JournalItem, type RemoteDriveEvents } from './remote-drive.js';
import { SocketWatch } from './socket-watch.js';

export interface ClientOptions {
  /** The data dir a host serves (its socket and, by default, its owner token are found there). */
  readonly dataDir?: string;
  /** The host's socket, when it is not under a data dir here (an ssh-forwarded socket). */
  readonly socket?: string;
  /** The capability token; default: the data dir's owner token (readable only by its user). */
  readonly token?: string;
  /** Reconnect when the host goes away (default true). */
  readonly reconnect?: boolean;
  /** How long to wait for a host to serve again before giving up (default 30 s). */
  readonly reconnectTimeoutMs?: number;
  readonly helloTimeoutMs?: number;
}

export type ClientEvents = {
  /** The host went away; the client is waiting for one to serve again. */
  disconnected: [reason: string];
  /** Serving again (`host.startedAt` tells a new host from the same one). */
  reconnected: [host: HostInfo];
  /** For good: close() was called, or no host came back in time. */
  closed: [reason: string];
  /** A subscription could not be (re)made for a drive. */
  subscriptionError: [drive: string, error: TmuxDriveError];
  /**
   * A hold this client had could not be taken again on the host that took over: another caller
   * holds the drive now (OPERATOR_HOLD naming it), the drive is gone (SESSION_NOT_FOUND), or the
   * token may no longer hold it. Emitted before `reconnected`; the drive is no longer held by us.
   */
  holdLost: [drive: string, error: TmuxDriveError];
};

export interface MintOptions {
  readonly classes: Scope['classes'];
  readonly drives?: readonly string[];
  readonly allowIds?: readonly string[];
  readonly ttlMs?: number;
  readonly label?: string;
}

export interface TokenInfo {
  readonly id: string;
  readonly scope: Scope;
  readonly label?: string;
  readonly createdAt: number;
  readonly mintedBy: string;
}

const DEFAULT_RECONNECT_TIMEOUT_MS = 30_000;

type Waiter = { resolve(): void; reject(err: TmuxDriveError): void };

export class Client implements DriveChannel {
  private state: 'open' | 'reconnecting' | 'closed' = 'open';
  /** The subscriptions, one per drive listened to (drive-feeds.ts). */
  private readonly feeds = new DriveFeeds({
    call: (method, params) => this.call(method, params),
    unsubscribe: (subscription) => {
      if (this.state === 'open') void this.connection.call('unsubscribe', { subscription }).catch(() => undefined);
    },
    holdEnded: (drive, since) => {
      if (this.holds.get(drive) === since) this.holds.delete(drive);
    },
    subscriptionError: (drive, error) => this.emitter.emit('subscriptionError', drive, error),
  });
  /** The drives this client holds (hold() answered, no release() or hold end since), by the hold's `since`: taken again on the next host. */
  private readonly holds = new Map<string, number>();
  private readonly emitter = new EventEmitter<ClientEvents>();
  private waiters: Waiter[] = [];
  private helloInfo: { host: HostInfo; identity: Identity };

  private constructor(
    private connection: HostConnection,
    private readonly reopen: (() => Promise<HostConnection>) | undefined,
    private readonly watchTarget: { readonly path: string; readonly fileEvents: boolean } | undefined,
    private readonly reconnectTimeoutMs: number,
  ) {
    this.helloInfo = { host: connection.hello.host, identity: connection.hello.identity };
    this.wire(connection);
  }

  /** Connects to the host serving `dataDir` (or the socket in `opts`), presenting the token. */
  static async connect(target: string | ClientOptions, opts: ClientOptions = {}): Promise<Client> {
    const o: ClientOptions = typeof target === 'string' ? { ...opts, dataDir: target } : { ...target, ...opts };
    const paths = o.dataDir !== undefined ? servePaths(o.dataDir) : undefined;
    const socket = o.socket ?? paths?.socket;
    if (socket === undefined) throw new TmuxDriveError('BAD_ARGUMENT', 'Client.connect needs a data dir or a socket');
    const token = o.token ?? (paths ? readOwnerToken(paths) : undefined);
    const open = (): Promise<HostConnection> => SocketConnection.open(socket, token, o.helloTimeoutMs);
    const first = await open();
    const reconnect = o.reconnect ?? true;
    return new Client(first, reconnect ? open : undefined, { path: socket, fileEvents: o.socket === undefined }, o.reconnectTimeoutMs ?? DEFAULT_RECONNECT_TIMEOUT_MS);
  }

  /** A client over a connection made elsewhere (in-process commands). @internal */
  static over(connection: HostConnection): Client {
    return new Client(connection, undefined, undefined, 0);
  }

  get host(): HostInfo {
    return this.helloInfo.host;
  }

  get identity(): Identity {
    return this.helloInfo.identity;
  }

  get connected(): boolean {
    return this.state === 'open';
  }

  on<E extends keyof ClientEvents>(event: E, listener: (...args: ClientEvents[E]) => void): Disposable {
    this.emitter.on(event, listener as never);
    return { dispose: () => void this.emitter.off(event, listener as never) };
  }

  drive(id: string): RemoteDrive {
    return new RemoteDrive(this, id);
  }

  async list(): Promise<SessionInfo[]> {
    return ((await this.call('list', {})) as { sessions: SessionInfo[] }).sessions;
  }

  /** Ends and forgets finished drives (exited, failed): all, or these ids (an admin token). */
  async prune(opts: { readonly ids?: readonly string[] } = {}): Promise<PrunedDrive[]> {
    return ((await this.call('prune', opts.ids !== undefined ? { ids: [...opts.ids] } : {})) as { pruned: PrunedDrive[] }).pruned;
  }

  /** Launches a drive through the host's gate (the token needs admin, and the allow entry in its scope). */
  async create(opts: CreateOptions): Promise<RemoteDrive & { readonly info: SessionInfo & { readonly cols: number; readonly rows: number } }> {
    const info = (await this.call('create', { ...opts })) as SessionInfo & { cols: number; rows: number };
    return Object.assign(new RemoteDrive(this, info.id, info.allowId), { info });
  }

  /** The drives this client holds as an operator (taken again after a reconnect). */
  get heldDrives(): readonly string[] {
    return [...this.holds.keys()];
  }

  /** RemoteDrive.hold: the host's hold, remembered so that the next host is asked for it again. @internal */
  async hold(drive: string): Promise<void> {
    const r = (await this.call('hold', { id: drive })) as { since: number };
    this.holds.set(drive, r.since);
  }

  /** RemoteDrive.release. Forgotten first: a release that fails with the host (HOST_LOST) must not be taken again on the next. @internal */
  async release(drive: string): Promise<boolean> {
    this.holds.delete(drive);
    return ((await this.call('release', { id: drive })) as { released: boolean }).released;
  }

  async events(id: string, opts: { afterSeq?: number; limit?: number } = {}): Promise<JournalItem[]> {
    return this.drive(id).events(opts);
  }

  /** A new token within this client's own scope; the token itself is shown only here. */
  async mint(opts: MintOptions): Promise<TokenInfo & { readonly token: string }> {
    return (await this.call('mint', { ...opts })) as TokenInfo & { token: string };
  }

  async revoke(id: string): Promise<void> {
    await this.call('revoke', { id });
  }

  async tokens(): Promise<TokenInfo[]> {
    return ((await this.call('tokens', {})) as { tokens: TokenInfo[] }).tokens;
  }

  /** One call of the gate. @internal (the methods above and RemoteDrive's are the API) */
  async call(method: string, params: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<unknown> {
    await this.ready();
    try {
      return await this.connection.call(method, params, signal);
    } catch (err) {
      // In flight when the host went: a call that changes nothing is asked again of the next host.
      if (err instanceof HostError && err.code === 'HOST_LOST' && this.reopen && IDEMPOTENT_VERBS.has(method) && this.state !== 'closed') {
        return this.call(method, params, signal);
      }
      throw err;
    }
  }

  listen<E extends keyof RemoteDriveEvents>(drive: string, event: E, listener: (...args: RemoteDriveEvents[E]) => void): Disposable {
    return this.feeds.listen(drive, event, listener);
  }

  /** Closes the connection; subscriptions end. Idempotent. */
  async close(): Promise<void> {
    this.finish('closed by the client');
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private wire(connection: HostConnection): void {
    connection.onItem = (p) => this.feeds.onItem(p);
    connection.onClose = (reason) => this.onLost(reason);
  }

  private ready(): Promise<void> {
    if (this.state === 'open') return Promise.resolve();
    if (this.state === 'closed') return Promise.reject(new HostError('HOST_LOST', 'the client is closed', { delivery: 'not-sent' }));
    return new Promise((resolve, reject) => this.waiters.push({ resolve, reject }));
  }

  private onLost(reason: string): void {
    if (this.state !== 'open') return;
    if (!this.reopen || !this.watchTarget) return this.finish(reason);
    this.state = 'reconnecting';
    this.feeds.lost();
    this.emitter.emit('disconnected', reason);
    void this.reconnect(reason);
  }

  private async reconnect(reason: string): Promise<void> {
    const target = this.watchTarget as NonNullable<Client['watchTarget']>;
    const reopen = this.reopen as NonNullable<Client['reopen']>;
    const watch = new SocketWatch(target.path, target.fileEvents);
    const deadline = Date.now() + this.reconnectTimeoutMs;
    try {
      for (;;) {
        if (this.state !== 'reconnecting') return;
        const seen = watch.seen;
        try {
          const connection = await reopen();
          if (this.state !== 'reconnecting') {
            connection.close();
            return;
          }
          this.adopt(connection);
          return;
        } catch (err) {
          // A refused token will not get better by waiting.
          if (err instanceof TmuxDriveError && err.code === 'TOKEN_INVALID') return this.finish(`the host refused the token: ${err.message}`);
        }
        if (!(await watch.next(seen, deadline))) return this.finish(`no host served again within ${this.reconnectTimeoutMs} ms (${reason})`);
      }
    } finally {
      watch.close();
    }
  }

  private adopt(connection: HostConnection): void {
    this.connection = connection;
    this.helloInfo = { host: connection.hello.host, identity: connection.hello.identity };
    this.wire(connection);
    this.state = 'open';
    // Holds first: they are the first requests the new host gets from this client, ahead of the
    // resubscribes and the calls that waited, so the window in which another caller's input can
    // reach a drive a person holds is this client's reconnect alone (lib/client/README.md).
    const retakes = [...this.holds.keys()].map((drive) => this.retake(connection, drive));
    this.feeds.resume();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.resolve();
    if (retakes.length === 0) return void this.emitter.emit('reconnected', this.helloInfo.host);
    // `reconnected` once every hold is settled: a listener of it knows which it still has.
    void Promise.all(retakes).then(() => {
      if (this.connection === connection && this.state === 'open') this.emitter.emit('reconnected', this.helloInfo.host);
    });
  }

  /** Takes `drive`'s hold again on a new host; a refusal is told (holdLost), never dropped silently. */
  private async retake(connection: HostConnection, drive: string): Promise<void> {
    try {
      const r = (await connection.call('hold', { id: drive })) as { since: number };
      if (this.holds.has(drive)) this.holds.set(drive, r.since);
    } catch (err) {
      // This host went too: the next one is asked (the hold stays remembered).
      if (err instanceof HostError && err.code === 'HOST_LOST') return;
      if (!this.holds.delete(drive)) return; // released meanwhile
      this.emitter.emit('holdLost', drive, err instanceof TmuxDriveError ? err : new HostError('PROTOCOL_ERROR', String(err)));
    }
  }

  private finish(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.connection.close();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w.reject(new HostError('HOST_LOST', `no host: ${reason}`, { delivery: 'not-sent' }));
    this.feeds.close();
    this.holds.clear();
    this.emitter.emit('closed', reason);
  }
}
