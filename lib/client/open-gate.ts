/**
 * How the CLI and the MCP server reach the gate of a data dir: through the serving host when one
 * serves (its socket answers: no lease of their own, no LEASE_HELD for a person's read or status),
 * else by hosting in-process as before (a Driver opened here, the same gate in this process),
 * holding the host lock shared meanwhile so that no host starts and reconciles without the drives
 * this process holds. A scoped token (TMUX_DRIVE_TOKEN) never falls back to in-process: that would
 * be the owner's authority.
 */
import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Logger } from '../driver/driver.js';
import { HostError } from '../wire/host-error.js';
import { ensureServeDir, servePaths } from '../serve/serve-paths.js';
import { HostLock } from '../serve/host-lock.js';
import { readOwnerToken } from '../serve/token-store.js';
import { Client } from './client.js';
import { SocketWatch } from './socket-watch.js';

export interface OpenGateOptions {
  /** --data-dir (wins over the config's dataDir). */
  readonly dataDir?: string;
  /** --config: read to find the data dir; in-process, the Driver's config too. */
  readonly config?: string;
  /** A scoped token: then only a serving host will do. */
  readonly token?: string;
  /** A host's socket elsewhere (an ssh forward); implies a host. */
  readonly socket?: string;
  /** In-process only: which drives the Driver re-attaches (Driver.open's `reattach`). */
  readonly reattach: 'all' | readonly string[];
  readonly owner: string;
  readonly logger?: Logger;
  readonly adoptOrphans?: boolean;
  /** How long to wait for a host that holds the lock but has not opened its socket yet (default 30 s). */
  readonly waitForHostMs?: number;
  /** A long-lived surface (the MCP server): through a host, reconnect to its successor when it goes. */
  readonly persistent?: boolean;
}

export interface GateAccess {
  readonly client: Client;
  /** `host`: through a serving host; `in-process`: a Driver opened here. */
  readonly mode: 'host' | 'in-process';
  /** Closes the client (and, in-process, detaches the Driver and lets the lock go). */
  close(): Promise<void>;
}

const DEFAULT_WAIT_FOR_HOST_MS = 30_000;

/** The data dir the command means, without loading more than needed (a --config only when it must say). */
async function dataDirOf(opts: OpenGateOptions): Promise<string> {
  if (opts.dataDir !== undefined) return resolve(opts.dataDir);
  const { loadConfig } = await import('../driver/load-config.js');
  return loadConfig(opts.config).dataDir;
}

function canonical(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** A client of the host on `socket`, or undefined when nobody answers there. */
async function connectHost(where: { readonly dataDir: string } | { readonly socket: string }, token: string | undefined, persistent = false): Promise<Client | undefined> {
  try {
    // One-shot commands do not wait for a successor host: a lost host is their error to report.
    return await Client.connect({ ...where, ...(token !== undefined ? { token } : {}), reconnect: persistent });
  } catch (err) {
    if (err instanceof HostError && err.code === 'NOT_SERVING') return undefined;
    throw err;
  }
}

export async function openGate(opts: OpenGateOptions): Promise<GateAccess> {
  const viaHost = (client: Client): GateAccess => ({ client, mode: 'host', close: () => client.close() });
  if (opts.socket !== undefined) {
    const client = await connectHost({ socket: opts.socket }, opts.token, opts.persistent);
    if (!client) throw new HostError('NOT_SERVING', `no host answers on ${opts.socket} (TMUX_DRIVE_SOCKET)`, { socket: opts.socket });
    return viaHost(client);
  }
  const dataDir = canonical(await dataDirOf(opts));
  const paths = servePaths(dataDir);
  const token = opts.token ?? readOwnerTokenQuietly(paths);
  const first = await connectHost({ dataDir }, token, opts.persistent);
  if (first) return viaHost(first);
  if (opts.token !== undefined) {
    throw new HostError('NOT_SERVING', `no host serves ${dataDir}: a token (TMUX_DRIVE_TOKEN) is presented only to a serving host (tmux-drive serve)`, { dataDir });
  }
  const { checkDataDir, makeDataDir } = await import('../driver/data-dir.js');
  const made = makeDataDir(checkDataDir(dataDir));
  const lock = await HostLock.tryAcquire(ensureServeDir(made).lock, 'shared');
  if (!lock) {
    // A host holds the lock but has not opened its socket yet (it is re-attaching its drives).
    const client = await waitForHost(dataDir, opts.waitForHostMs ?? DEFAULT_WAIT_FOR_HOST_MS, opts.persistent);
    return viaHost(client);
  }
  try {
    return await hostInProcess(made, opts, lock);
  } catch (err) {
    lock.release();
    throw err;
  }
}

function readOwnerTokenQuietly(paths: ReturnType<typeof servePaths>): string | undefined {
  try {
    return readOwnerToken(paths);
  } catch {
    return undefined; // another user's data dir, or a broken file: the host will say TOKEN_INVALID
  }
}

async function waitForHost(dataDir: string, ms: number, persistent: boolean | undefined): Promise<Client> {
  const paths = servePaths(dataDir);
  const watch = new SocketWatch(paths.socket, true);
  const deadline = Date.now() + ms;
  try {
    for (;;) {
      const seen = watch.seen;
      // The owner token may be made by this very host on its first start: read it each time.
      const client = await connectHost({ dataDir }, readOwnerTokenQuietly(paths), persistent);
      if (client) return client;
      if (!(await watch.next(seen, deadline))) throw new HostError('NOT_SERVING', `a host holds the lock of ${dataDir} but did not open its socket within ${ms} ms`, { dataDir });
    }
  } finally {
    watch.close();
  }
}

async function hostInProcess(dataDir: string, opts: OpenGateOptions, lock: HostLock): Promise<GateAccess> {
  const [{ Driver }, { Gate }, { LocalConnection }, { AuditLog }] = await Promise.all([
    import('../driver/driver.js'),
    import('../serve/gate.js'),
    import('./local-connection.js'),
    import('../../journal/audit-log.js'),
  ]);
  const driver = await Driver.open({
    dataDir,
    ...(opts.config !== undefined ? { config: opts.config } : {}),
    owner: opts.owner,
    reattach: opts.reattach,
    ...(opts.logger ? { logger: opts.logger } : {}),
    ...(opts.adoptOrphans ? { adoptOrphans: true } : {}),
  });
  const audit = driver.config.audit.enabled ? AuditLog.open(driver.dataDir) : undefined;
  const gate = new Gate({ driver, ...(audit ? { audit } : {}) });
  const connection = new LocalConnection(gate);
  const client = Client.over(connection);
  let closing: Promise<void> | undefined;
  return {
    client,
    mode: 'in-process',
    close: () =>
      (closing ??= (async () => {
        await client.close();
        gate.close();
        await driver.close();
        audit?.close();
        lock.release();
      })()),
  };
}
