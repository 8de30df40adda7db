/**
 * The composition root: config, launch policy, backends and sessions wired together. The only
 * module that knows every layer.
 */
import { mkdirSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from './clock.js';
import { systemClock } from './system-clock.js';
import { PolicyError, SessionError, TmuxDriveError, UsageError } from './errors.js';
import { loadConfig, type LoadedConfig } from './load-config.js';
import type { DriverConfig, DriverConfigInput } from './policy/config-schema.js';
import { CURATED_PATH } from './policy/child-env.js';
import { findExecutable, planLaunch, type CreateRequest } from './launch.js';
import { Session } from './session.js';
import type { ExitInfo } from './backend.js';
import { TmuxBackend } from '../backends/tmux/tmux-backend.js';

export interface DriverOptions {
  /** Overrides the config's dataDir. */
  readonly dataDir?: string;
  /** A config object, or a path to an operator's YAML/JSON file. Absent: allow only `shell`. */
  readonly config?: DriverConfigInput | string;
  /** Who drives (for logs). */
  readonly owner?: string;
  readonly logger?: Logger;
  /** Deadline for each tmux call, in ms (default 5000). */
  readonly tmuxTimeoutMs?: number;
  readonly clock?: Clock;
}

export interface Logger {
  warn(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
}

export interface CreateOptions extends CreateRequest {
  /** Stable name; also the tmux session and socket name. Default: a random id. */
  readonly name?: string;
  readonly cols?: number;
  readonly rows?: number;
  /** A free-text objective (kept only as a hash in the journal). */
  readonly objective?: string;
}

export interface SessionInfo {
  readonly id: string;
  readonly name: string;
  readonly allowId: string;
  readonly backend: 'tmux' | 'spawn';
  readonly durable: boolean;
  readonly state: 'live' | 'exited' | 'failed';
  readonly reason?: string;
  readonly exit?: ExitInfo;
  readonly createdAt: string;
}

const CREATE_KEYS: ReadonlySet<string> = new Set(['allowId', 'args', 'project', 'cwd', 'env', 'name', 'cols', 'rows', 'objective']);
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const DEFAULT_TMUX_TIMEOUT_MS = 5000;

const silentLogger: Logger = { warn: () => undefined };

export class Driver {
  private readonly sessions = new Map<string, Session>();
  private closed = false;

  private constructor(
    private readonly loaded: LoadedConfig,
    private readonly tmuxPath: string | undefined,
    private readonly bwrapPath: string | undefined,
    private readonly clock: Clock,
    private readonly tmuxTimeoutMs: number,
    readonly logger: Logger,
  ) {}

  static async open(opts: DriverOptions = {}): Promise<Driver> {
    const loaded = loadConfig(opts.config, opts.dataDir);
    mkdirSync(join(loaded.dataDir, 'tmux'), { recursive: true, mode: 0o700 });
    const canonical = { ...loaded, dataDir: realpathSync(loaded.dataDir) };
    const logger = opts.logger ?? silentLogger;
    if (canonical.config.unsafeDisableSandbox) {
      logger.warn('SANDBOX DISABLED by unsafeDisableSandbox in the operator config: drives run without bwrap, with the host filesystem and network', { source: loaded.source });
    }
    const timeout = opts.tmuxTimeoutMs ?? DEFAULT_TMUX_TIMEOUT_MS;
    if (!Number.isFinite(timeout) || timeout <= 0) throw new UsageError('BAD_ARGUMENT', 'tmuxTimeoutMs must be a positive number');
    return new Driver(canonical, findExecutable('tmux'), findExecutable('bwrap'), opts.clock ?? systemClock, timeout, logger);
  }

  get config(): DriverConfig {
    return this.loaded.config;
  }

  get dataDir(): string {
    return this.loaded.dataDir;
  }

  /** True when the operator's file turned the sandbox off. */
  get sandboxDisabled(): boolean {
    return this.loaded.config.unsafeDisableSandbox;
  }

  async create(opts: CreateOptions): Promise<Session> {
    if (this.closed) throw new SessionError('DRIVER_CLOSED', 'this driver was closed; open a new one');
    if (typeof opts !== 'object' || opts === null) throw new UsageError('BAD_ARGUMENT', 'create takes an options object with at least allowId');
    const unknown = Object.keys(opts).filter((k) => !CREATE_KEYS.has(k));
    if (unknown.length > 0) throw new UsageError('BAD_ARGUMENT', `unknown create option(s): ${unknown.join(', ')} (known: ${[...CREATE_KEYS].join(', ')})`);
    if (typeof opts.allowId !== 'string') throw new UsageError('BAD_ARGUMENT', 'create needs allowId, the id of an allow entry in the config');
    const { config } = this.loaded;
    const cols = opts.cols ?? config.defaults.cols;
    const rows = opts.rows ?? config.defaults.rows;
    for (const [label, n] of [['cols', cols], ['rows', rows]] as const) {
      if (!Number.isInteger(n) || n < 2 || n > 1000) throw new UsageError('BAD_SIZE', `${label} must be an integer from 2 to 1000 (got ${String(n)})`);
    }
    const name = opts.name ?? `td-${randomBytes(5).toString('hex')}`;
    if (!SESSION_NAME.test(name)) throw new UsageError('BAD_ARGUMENT', `name "${name}" must be 1-48 letters, digits, "_" or "-", starting with a letter or digit`);
    if (this.sessions.has(name)) throw new SessionError('NAME_IN_USE', `a session named "${name}" is already open in this driver`, { name });
    const live = [...this.sessions.values()].filter((s) => s.lifecycle === 'live').length;
    if (live >= config.worker.maxSessions) {
      throw new PolicyError('LIMIT_REACHED', `worker.maxSessions (${config.worker.maxSessions}) sessions are live: kill one first`, { cap: 'worker.maxSessions' });
    }
    const plan = planLaunch({ config, dataDir: this.loaded.dataDir, bwrapPath: this.bwrapPath }, opts);
    if (!this.tmuxPath) throw new TmuxDriveError('TMUX_NOT_FOUND', 'tmux is not installed on this host: apt-get install tmux');
    const session = new Session({
      id: name,
      allowId: plan.entry.id,
      cols,
      rows,
      scrollback: config.defaults.scrollback,
      ringBytes: config.worker.ringBytes,
      clock: this.clock,
      createdAt: Date.now(),
    });
    const backend = await TmuxBackend.launch(
      {
        tmuxPath: this.tmuxPath,
        socketDir: join(this.loaded.dataDir, 'tmux'),
        name,
        clock: this.clock,
        timeoutMs: this.tmuxTimeoutMs,
        env: plan.env,
        cols,
        rows,
        scrollback: config.defaults.scrollback,
        cwd: plan.cwd,
        argv: plan.argv,
      },
      session.listener,
    );
    session.bind(backend);
    this.sessions.set(name, session);
    return session;
  }

  get(id: string): Session {
    const s = this.sessions.get(id);
    if (!s) throw new SessionError('SESSION_NOT_FOUND', `no session "${id}" in this driver (see driver.list())`, { id });
    return s;
  }

  list(): SessionInfo[] {
    return [...this.sessions.values()].map((s) => ({
      id: s.id,
      name: s.id,
      allowId: s.allowId,
      backend: s.backendKind,
      durable: s.durable,
      state: s.lifecycle,
      ...(s.lostBecause ? { reason: s.lostBecause } : {}),
      ...(s.exit ? { exit: s.exit } : {}),
      createdAt: new Date(s.createdAt).toISOString(),
    }));
  }

  /** Detaches from every session; durable drives keep running. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.sessions.values()].map((s) => s.detach().catch(() => undefined)));
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The environment tmux clients run with: no host variables reach a drive through them. */
  static clientEnv(): Record<string, string> {
    return { PATH: CURATED_PATH, LANG: 'C.UTF-8' };
  }
}
