/**
 * lib/serve: the serving host of a data dir. It owns the drives (one Driver, every live drive
 * re-attached, every lease held), answers on `<dataDir>/serve/host.sock` through the single gate
 * (gate.ts: capability tokens, the verb table, audit), streams drive feeds to subscribers, and
 * holds the host lock for its whole life: one host per data dir, and a standby (`standby: true`)
 * blocked in the kernel on that lock takes over the moment the host dies, SIGKILL included.
 *
 * Rooms: serve-paths (files), host-lock (flock), host-record (who serves), serving-prep (a
 * standby's serving made while it waits), token-store and
 * capabilities (tokens, scopes), verbs (the table), gate (the decision), drive-feed
 * (subscriptions), socket-server (the wire). Imports: the public Driver/Session API, lib/wire,
 * journal/audit-log and journal/process-identity, the data dir checks; nothing of a drive's inside.
 */
import { rmSync } from 'node:fs';
import { Driver, type DriverOptions, type DriverStandby, type Logger } from '../driver/driver.js';
import { checkDataDir, makeDataDir } from '../driver/data-dir.js';
import { loadConfig } from '../driver/load-config.js';
import type { DriverConfig, DriverConfigInput } from '../policy/config-schema.js';
import { AuditLog } from '../../journal/audit-log.js';
import { HostError } from '../wire/host-error.js';
import type { HostInfo } from '../wire/protocol.js';
import { ensureServeDir, type ServePaths } from './serve-paths.js';
import { HostLock, lockHolders } from './host-lock.js';
import { readHostRecord, removeHostRecord, writeHostRecord, type HostRecord } from './host-record.js';
import { TokenStore } from './token-store.js';
import { Gate } from './gate.js';
import { PreparedServing } from './serving-prep.js';
import { startTakeoverMarks, takeoverMark } from '../driver/takeover-marks.js';
import { SOCKET_LIMITS, SocketServer, type SocketLimits } from './socket-server.js';

/** A web surface served over the host's gate (the console): its address, and how to close it. */
export interface HostSurface {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * How serve() starts a web surface (the console: `ConsoleServer.at` in lib/console, given by the
 * CLI for `--http`; this room does not import it). Called with the config before anything is taken
 * or opened (a refused address fails the start at once); what it returns starts the surface over
 * the gate, before the socket listens (an address in use fails the start).
 */
export type SurfaceStarter<S extends HostSurface> = (config: DriverConfig) => (gate: Gate) => Promise<S>;

export interface ServeOptions<S extends HostSurface = HostSurface> {
  readonly dataDir?: string;
  /** A config object, or a path to the operator's YAML/JSON file (as Driver.open takes it). */
  readonly config?: DriverConfigInput | string;
  /** Wait while another host serves, and take over the moment it ends (dies or stops). */
  readonly standby?: boolean;
  readonly logger?: Logger;
  readonly tmuxTimeoutMs?: number;
  readonly profileDirs?: readonly string[];
  readonly adoptOrphans?: boolean;
  /** Aborts a standby's wait (then ABORTED); after the host serves, use close(). */
  readonly signal?: AbortSignal;
  /** A standby is about to wait: who serves now (undefined: in-process commands hold the data dir). */
  readonly onWaiting?: (holder: HostRecord | undefined) => void;
  /** A web surface to serve too (the console: `ConsoleServer.at('HOST:PORT')` from lib/console). */
  readonly console?: SurfaceStarter<S>;
  /** Other bounds for the socket (tests make a slow client's drop quick to reach). @internal */
  readonly socketLimits?: Partial<SocketLimits>;
}

const silent: Logger = { warn: () => undefined };

/** Connections a closing host gives to flush their last lines before they are cut. */
const CLOSE_FLUSH_MS = 1000;

export class ServingHost<S extends HostSurface = HostSurface> {
  private closing: Promise<void> | undefined;
  private resolveClosed!: () => void;
  /** Resolves once the host has closed (close() was called). */
  readonly closed: Promise<void> = new Promise((resolve) => {
    this.resolveClosed = resolve;
  });

  /** @internal */
  constructor(
    readonly driver: Driver,
    readonly info: HostInfo,
    readonly paths: ServePaths,
    private readonly gate: Gate,
    private readonly server: SocketServer,
    private readonly lock: HostLock,
    private readonly audit: AuditLog | undefined,
    private readonly ownsDriver: boolean,
    /** The web surface, when serve() was given one (the console, --http). */
    readonly console?: S,
  ) {}

  get socketPath(): string {
    return this.paths.socket;
  }

  get connectionCount(): number {
    return this.server.connectionCount;
  }

  /**
   * Stops serving: subscriptions end (`host_closing`), connections close, the Driver detaches
   * (durable drives keep running; when the host opened it), the socket goes, and the lock is let
   * go last, so a standby opens the data dir only once this host has let go of every drive.
   */
  close(): Promise<void> {
    this.closing ??= (async () => {
      this.gate.close();
      await this.console?.close();
      const flushed = this.server.close();
      await Promise.race([flushed, new Promise((r) => setTimeout(r, CLOSE_FLUSH_MS).unref())]);
      if (this.ownsDriver) await this.driver.close();
      this.audit?.close();
      removeHostRecord(this.paths, process.pid);
      this.lock.release();
      this.resolveClosed();
    })();
    return this.closing;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/**
 * The exclusive host lock, now (HOST_HELD naming who holds it) or, for a standby, once it is free.
 * A standby observes the live drives while it waits (`hot`), so its takeover starts no control
 * client for them.
 */
async function takeHostLock(paths: ServePaths, opts: ServeOptions, hot?: () => Promise<DriverStandby>, prepare?: () => Promise<PreparedServing>): Promise<{ lock: HostLock; standby?: DriverStandby; prepared?: PreparedServing }> {
  const lock = await HostLock.tryAcquire(paths.lock, 'exclusive');
  if (lock) return { lock };
  const holder = readHostRecord(paths);
  if (!opts.standby) {
    if (holder) {
      throw new HostError('HOST_HELD', `pid ${holder.pid} serves ${paths.dataDir} (since ${new Date(holder.startedAt).toISOString()}); one host per data dir: stop it, or start this one with --standby to take over when it ends`, { pid: holder.pid, dataDir: paths.dataDir });
    }
    const pids = lockHolders(paths.lock).filter((p) => p !== process.pid);
    throw new HostError('HOST_HELD', `in-process tmux-drive commands hold ${paths.dataDir}${pids.length > 0 ? ` (pid ${pids.join(', ')})` : ''}: let them finish, or start with --standby to take over when they do`, { pids, dataDir: paths.dataDir });
  }
  let standby: DriverStandby | undefined;
  try {
    standby = await hot?.();
  } catch (err) {
    // Observing is an optimisation: without it the takeover re-attaches cold, as it always could.
    opts.logger?.warn(`standby: the live drives are not observed while waiting (${(err as Error).message}); the takeover re-attaches them cold`);
  }
  // Told, not waited for: the lock wait starts now (a drive that does not answer holds only this line).
  void standby?.hot.then((n) => opts.logger?.info?.(`standby: ${n} live drive(s) observed, their takeover prepared`));
  // prepare() never rejects (each of its steps falls back to the takeover's own).
  const prepared = await prepare?.();
  opts.onWaiting?.(holder);
  try {
    const lock = await HostLock.acquire(paths.lock, 'exclusive', opts.signal);
    startTakeoverMarks();
    return { lock, ...(standby ? { standby } : {}), ...(prepared ? { prepared } : {}) };
  } catch (err) {
    await prepared?.close();
    await standby?.close();
    throw err;
  }
}

/**
 * Serves a data dir: takes the host lock (or waits for it, as a standby), opens the Driver
 * (re-attaching every live drive; nothing is relaunched) and answers on its socket.
 */
export async function serve<S extends HostSurface = HostSurface>(opts: ServeOptions<S> = {}): Promise<ServingHost<S>> {
  const loaded = loadConfig(opts.config, opts.dataDir);
  // A bad console address is refused before anything is taken or opened.
  const startSurface = opts.console?.(loaded.config);
  const dataDir = makeDataDir(checkDataDir(loaded.dataDir));
  const paths = ensureServeDir(dataDir);
  const driverOptions: DriverOptions = {
    dataDir,
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    owner: `tmux-drive serve (pid ${process.pid})`,
    reattach: 'all',
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.tmuxTimeoutMs !== undefined ? { tmuxTimeoutMs: opts.tmuxTimeoutMs } : {}),
    ...(opts.profileDirs ? { profileDirs: opts.profileDirs } : {}),
    ...(opts.adoptOrphans !== undefined ? { adoptOrphans: opts.adoptOrphans } : {}),
  };
  const logger = opts.logger ?? silent;
  const limits = { ...SOCKET_LIMITS, ...opts.socketLimits };
  const prepare = (): Promise<PreparedServing> => PreparedServing.prepare(paths, loaded.config.audit.enabled, { warn: (m) => logger.warn(m) }, limits);
  const { lock, standby, prepared } = await takeHostLock(paths, opts, () => Driver.standby(driverOptions), prepare);
  try {
    // A host killed with SIGKILL left its socket: nobody answers on it any more (a prepared
    // standby's socket is renamed over it instead: the path is never without a file).
    if (!prepared) rmSync(paths.socket, { force: true });
    if (standby) return await takeOverServing(standby, lock, paths, logger, limits, startSurface, prepared);
    const driver = await Driver.open(driverOptions);
    try {
      return await startServing(driver, lock, paths, true, logger, limits, startSurface);
    } catch (err) {
      await driver.close();
      throw err;
    }
  } catch (err) {
    await prepared?.close();
    lock.release();
    throw err;
  }
}

/**
 * A standby's takeover: the socket serves as soon as the Driver exists, before its drives are
 * re-attached (clients reconnect and resubscribe meanwhile; a call for a drive waits for that
 * drive alone, a call naming none for all: Gate, Driver.adoption). Resolves once every drive is
 * re-attached or failed; a takeover that fails closes what it started (the host, its socket).
 */
async function takeOverServing<S extends HostSurface>(standby: DriverStandby, lock: HostLock, paths: ServePaths, logger: Logger, limits: SocketLimits, startSurface: ((gate: Gate) => Promise<S>) | undefined, prepared: PreparedServing | undefined): Promise<ServingHost<S>> {
  let host: ServingHost<S> | undefined;
  try {
    await standby.takeOver(async (driver) => {
      host = await startServing(driver, lock, paths, true, logger, limits, startSurface, prepared);
      takeoverMark('listening');
    });
  } catch (err) {
    await host?.close();
    throw err;
  }
  takeoverMark('ready');
  if (!host) throw new HostError('NOT_SERVING', 'the takeover opened the drives without serving them'); // serving() runs before any drive is re-attached
  return host;
}

/**
 * Serves an already open Driver (the library's `serve(driver)`): HOST_HELD when another host
 * serves its data dir. Closing the host leaves the Driver open (it is the caller's).
 */
export async function serveDriver(driver: Driver, opts: { readonly logger?: Logger } = {}): Promise<ServingHost> {
  const paths = ensureServeDir(driver.dataDir);
  const { lock } = await takeHostLock(paths, {});
  try {
    rmSync(paths.socket, { force: true });
    return await startServing(driver, lock, paths, false, opts.logger ?? silent, SOCKET_LIMITS);
  } catch (err) {
    lock.release();
    throw err;
  }
}

/** Serves `driver` on the socket: through what a standby prepared while waiting, when given. */
async function startServing<S extends HostSurface>(driver: Driver, lock: HostLock, paths: ServePaths, ownsDriver: boolean, logger: Logger, limits: SocketLimits, startSurface?: (gate: Gate) => Promise<S>, prepared?: PreparedServing): Promise<ServingHost<S>> {
  const tokens = prepared ? prepared.tokens() : TokenStore.open(paths);
  const audit = driver.config.audit.enabled ? (prepared ? prepared.takeAudit() : AuditLog.open(paths.dataDir)) : undefined;
  try {
    const gate = new Gate({ driver, tokens, ...(audit ? { audit } : {}) });
    // It listens first: an address in use fails the start before the host record names this process.
    const web = await startSurface?.(gate);
    const info: HostInfo = { pid: process.pid, startedAt: Date.now(), dataDir: paths.dataDir };
    let server: SocketServer;
    try {
      if (prepared) prepared.writeHostRecord(info);
      else writeHostRecord(paths, info);
      server = prepared?.serve(gate, info) ?? (await SocketServer.listen(paths.socket, gate, info, { warn: (m) => logger.warn(m) }, limits));
    } catch (err) {
      await web?.close();
      throw err;
    }
    return new ServingHost(driver, info, paths, gate, server, lock, audit, ownsDriver, web);
  } catch (err) {
    audit?.close();
    throw err;
  }
}
