/**
 * The composition root: config, launch policy, backends, the journal and sessions wired together.
 * This file is the Driver facade (open, create, get, list, close); the rooms beside it do the work:
 * driver-options (what the verbs accept), backend-factory (which backend a drive gets),
 * session-factory + journal-binding (a session wired to this host and recorded), lease-book,
 * reconcile and orphans (what open() finds in the data dir), adoption-tracker (what a standby's
 * takeover still re-attaches). README.md has the map.
 */
import type { Clock } from '../common/clock.js';
import type { Disposable } from '../common/disposable.js';
import { PolicyError, SessionError, UsageError } from '../common/errors.js';
import type { ExitInfo } from '../common/exit-info.js';
import type { DriverConfig } from '../policy/config-schema.js';
import type { ProfileSet } from '../perceive/profile.js';
import { redactArgv } from '../policy/redact.js';
import type { Session } from '../session/session.js';
import { AuditLog } from '../../journal/audit-log.js';
import { Journal, NON_TERMINAL_STATES, hashOf } from '../../journal/journal.js';
import { BackendFactory, clientEnv } from './backend-factory.js';
import { checkDataDir, makeDataDir } from './data-dir.js';
import { checkCreateOptions, checkOpenOptions, type CreateOptions, type DriverOptions, type Logger, type OpenSetup } from './driver-options.js';
import { AdoptionTracker } from './adoption-tracker.js';
import { approveLaunch } from './approve-launch.js';
import type { LoadedConfig } from './load-config.js';
import { LeaseBook } from './lease-book.js';
import { reclaimOrphans } from './orphans.js';
import { pruneDrives, type PrunedDrive } from './prune.js';
import { reconcile, reconcileTargets } from './reconcile.js';
import { PreparedStandby, StandbyObservers, type PreparedTakeover } from './standby.js';
import { SessionFactory, profileOf } from './session-factory.js';
import { systemClock } from '../../backends/process/system-clock.js';

export type { CreateApprovalRequest, CreateOptions, DriverOptions, Logger } from './driver-options.js';
export type { PrunedDrive } from './prune.js';
/** A Driver not opened yet whose drives are already observed (Driver.standby()). */
export type DriverStandby = PreparedStandby<Driver>;

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
  /** Pid of the live process that holds this drive, when it is not this one. */
  readonly heldBy?: number;
}

export class Driver {
  private readonly sessions = new Map<string, Session>();
  /** create() calls under way: close() lets each finish (or give up) before the journal closes. */
  private readonly creating = new Set<Promise<unknown>>();
  private readonly leases: LeaseBook;
  private readonly backends: BackendFactory;
  private readonly sessionFactory: SessionFactory;
  private closed = false;
  /** A standby's takeover serves while it re-attaches (PreparedTakeover.serving): the drives not re-attached yet. */
  private readonly adoptions = new AdoptionTracker();
  private readonly createdListeners = new Set<(session: Session) => void>();

  private constructor(
    private readonly journal: Journal,
    private readonly audit: AuditLog | undefined,
    private readonly loaded: LoadedConfig,
    private readonly clock: Clock,
    backends: BackendFactory,
    profiles: ProfileSet,
    readonly logger: Logger,
    private readonly approveCreate: DriverOptions['approveCreate'],
  ) {
    this.backends = backends;
    this.leases = new LeaseBook(journal);
    this.sessionFactory = new SessionFactory({ config: loaded.config, profiles, clock, journal, leases: this.leases, audit, backends });
  }

  static open(opts: DriverOptions = {}): Promise<Driver> {
    return Driver.openWith(opts, undefined);
  }

  /**
   * A hot standby for a data dir another process drives: every live local drive is observed now
   * (a read-only control client sent no output; drives created later are seen through an inotify
   * watch on the socket directory), and `takeOver()` opens the Driver adopting those clients, so
   * the takeover starts no `tmux -C` for them. Call takeOver() only once this process may drive
   * the data dir (the serving host's lock); the leases stay the fence either way.
   */
  static async standby(opts: DriverOptions = {}): Promise<DriverStandby> {
    const setup = checkOpenOptions(opts);
    const dataDir = makeDataDir(checkDataDir(setup.loaded.dataDir));
    const backends = new BackendFactory({ config: setup.loaded.config, dataDir, clock: opts.clock ?? systemClock, tmuxTimeoutMs: setup.tmuxTimeoutMs });
    const journal = Journal.open(dataDir, { onError: (e) => setup.logger.warn(`journal write failed: ${e.message}`, { code: e.code }) });
    try {
      // The options, config and profiles checked now are the takeover's (not checked again on its clock).
      const standby = new PreparedStandby<Driver>(StandbyObservers.start(journal, backends), journal, (prepared) => Driver.openWith(opts, prepared, setup));
      // The live drives' own profile objects (few: one per allow entry in use) and a /proc walk of
      // this process's tree, rehearsed with the emulator (standby-rehearsal.ts).
      const { config } = setup.loaded;
      const allowIds = new Set(journal.listSessions({ states: NON_TERMINAL_STATES }).map((r) => r.allowId));
      const profiles = new Set([...allowIds].map((allowId) => profileOf(config, setup.profiles, allowId)));
      standby.rehearse(config.defaults, { profiles: [...profiles], sampleActivity: () => backends.sampleActivity(process.pid) });
      return standby;
    } catch (err) {
      journal.close();
      throw err;
    }
  }

  private static async openWith(opts: DriverOptions, prepared: PreparedTakeover<Driver> | undefined, checked?: OpenSetup): Promise<Driver> {
    // Everything is validated (config, profile references, options, the data dir itself) before
    // anything is created on disk: a refused open leaves nothing behind.
    const setup = checked ?? checkOpenOptions(opts);
    const { logger } = setup;
    const plan = checkDataDir(setup.loaded.dataDir);
    const loaded = { ...setup.loaded, dataDir: makeDataDir(plan) };
    const clock = opts.clock ?? systemClock;
    const backends = prepared?.backends ?? new BackendFactory({ config: loaded.config, dataDir: loaded.dataDir, clock, tmuxTimeoutMs: setup.tmuxTimeoutMs });
    backends.sweepSocketDir();
    if (loaded.config.unsafeDisableSandbox) {
      logger.warn('SANDBOX DISABLED by unsafeDisableSandbox in the operator config: drives run without bwrap, with the host filesystem and network', { source: loaded.source });
    }
    const journal = prepared?.journal ?? Journal.open(loaded.dataDir, { onError: (e) => logger.warn(`journal write failed: ${e.message}`, { code: e.code }) });
    let audit: AuditLog | undefined;
    try {
      if (loaded.config.audit.enabled) audit = AuditLog.open(loaded.dataDir);
    } catch (err) {
      journal.close();
      throw err;
    }
    const driver = new Driver(journal, audit, loaded, clock, backends, setup.profiles, logger, setup.approveCreate);
    try {
      await reclaimOrphans({ journal, backends, dataDir: loaded.dataDir, logger }, setup.adoptOrphans);
      const records = reconcileTargets(journal, setup.reattach);
      const settled = prepared?.serving ? driver.adoptions.track(records.map((r) => r.id)) : undefined;
      try {
        await prepared?.serving?.(driver);
        await reconcile(
          { journal, leases: driver.leases, backends, sessions: driver.sessionFactory, defaults: loaded.config.defaults, register: (s) => void driver.sessions.set(s.id, s), ...(prepared ? { observers: prepared.observers, earlier: prepared.earlier } : {}) },
          records,
          settled,
        );
      } finally {
        settled?.finish();
      }
    } catch (err) {
      await driver.close();
      throw err;
    }
    return driver;
  }

  /**
   * While a standby's takeover re-attaches (it serves meanwhile): a promise settled once drive
   * `id` is re-attached or failed, or, without an id, once every drive is; undefined when there is
   * nothing to wait for (the common case: no await on the call path).
   */
  adoption(id?: string): Promise<void> | undefined {
    return this.adoptions.adoption(id);
  }

  get config(): DriverConfig {
    return this.loaded.config;
  }

  /** The journal's content-free events of a drive (machine tags only), in order. */
  events(id: string, opts: { readonly afterSeq?: number; readonly limit?: number } = {}): ReturnType<Journal['events']> {
    return this.journal.events(id, opts);
  }

  get dataDir(): string {
    return this.loaded.dataDir;
  }

  /** True when the operator's file turned the sandbox off. */
  get sandboxDisabled(): boolean {
    return this.loaded.config.unsafeDisableSandbox;
  }

  async create(opts: CreateOptions): Promise<Session> {
    // A takeover still re-attaching (it serves meanwhile): the caps count its drives once all are back.
    const adopting = this.adoptions.adoption();
    if (adopting) await adopting;
    if (this.closed) throw new SessionError('DRIVER_CLOSED', 'this driver was closed; open a new one');
    const creating = this.createDrive(opts);
    this.creating.add(creating);
    try {
      return await creating;
    } finally {
      this.creating.delete(creating);
    }
  }

  private async createDrive(opts: CreateOptions): Promise<Session> {
    const { config } = this.loaded;
    const { name, cols, rows } = checkCreateOptions(opts, config);
    const previous = this.sessions.get(name);
    if (previous && previous.lifecycle === 'live') throw new SessionError('NAME_IN_USE', `a session named "${name}" is already open in this driver`, { name });
    // A clean exit's server is being ended (and its socket removed): that finishes first, or the
    // new drive's socket would be the one removed.
    if (previous?.exit?.code === 0) await previous.kill().catch(() => undefined);
    if (this.liveSessions().length >= config.worker.maxSessions) {
      throw new PolicyError('LIMIT_REACHED', `worker.maxSessions (${config.worker.maxSessions}) sessions are live: kill one first`, { cap: 'worker.maxSessions' });
    }
    const existing = this.journal.getSession(name);
    if (existing && NON_TERMINAL_STATES.includes(existing.state)) {
      throw new SessionError('NAME_IN_USE', `a drive named "${name}" is still ${existing.state} (held by another host or detached); pick another name`, { name });
    }
    // A finished drive of that name keeps its history (answered prompts, outcome, events) under a
    // retired id: a new drive never inherits what another one answered or concluded.
    if (existing) {
      // A nonzero end keeps its server for an operator: the name is free only once that is gone
      // (retiring the row first would leave the server to no row prune could reach).
      if (existing.backend === 'tmux' && (await this.backends.localServerAnswers(existing.socketPath))) {
        throw new SessionError('NAME_IN_USE', `drive "${name}" has ${existing.state} but its tmux server is kept for inspection; prune or kill it first`, { name });
      }
      this.journal.retireSession(name);
    }
    const placed = await this.backends.plan(opts);
    const { plan, placement } = placed;
    // A remote plan is a round trip: the driver may have been closed meanwhile.
    if (this.closed) throw new SessionError('DRIVER_CLOSED', 'this driver was closed while the drive was being planned; nothing was launched');
    const entryCap = plan.entry.limits.maxSessions;
    if (entryCap !== undefined && this.liveSessions().filter((s) => s.allowId === plan.entry.id).length >= entryCap) {
      throw new PolicyError('LIMIT_REACHED', `allow entry "${plan.entry.id}" allows ${entryCap} live session(s) (limits.maxSessions): kill one first`, { cap: 'limits.maxSessions' });
    }
    if (plan.entry.approveOnCreate) {
      await approveLaunch(this.approveCreate, { allowId: plan.entry.id, name, argv: [plan.binary, ...(opts.args ?? plan.entry.match.argsPrefix)], ...(opts.project !== undefined ? { project: opts.project } : {}) });
      if (this.closed) throw new SessionError('DRIVER_CLOSED', 'this driver was closed while the launch waited for approval; nothing was launched');
    }
    // `backend: spawn` on the entry, or tmux missing here: the program runs on a host-owned pty
    // (non-durable, said loudly) rather than the request failing.
    if (placement.kind === 'spawn' && placement.fallback) {
      this.logger.warn(`tmux is not installed: drive "${name}" runs on the spawn backend and is not durable (it ends with this host; no re-attach, no operator attach)`, { name });
    }
    const spawned = placement.kind === 'spawn';
    this.leases.acquire(name);
    // Journaled before the launch: a crash in between leaves a row whose server is gone, which the
    // next host reports as failed, never a second copy.
    this.journal.upsertSession({
      id: name,
      name,
      socketPath: this.backends.journalSocket(placement, name),
      allowId: plan.entry.id,
      argvHash: hashOf([plan.binary, ...(opts.args ?? [])]),
      objectiveHash: opts.objective === undefined ? null : hashOf(opts.objective),
      backend: spawned ? 'spawn' : 'tmux',
      durable: !spawned,
      state: 'live',
      exit: null,
      failureReason: null,
      interactions: 0,
    });
    this.journal.appendEvent(name, 'create', { sandboxed: plan.sandboxed, spawned });
    const { session, binding } = this.sessionFactory.make({ id: name, allowId: plan.entry.id, cols, rows, createdAt: Date.now(), firstSeq: this.journal.lastSeq(name) + 1 });
    try {
      session.bind(await this.backends.launch(placed, { name, cols, rows }, session));
    } catch (err) {
      this.journal.markFailed(name, 'launch_failed');
      this.leases.release(name);
      // Never handed out: its mirror and timers go now (the journal already says why).
      binding.dispose();
      await session.detach().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      // close() ran while the program started: it is let go like every other drive of this driver
      // (a durable one keeps running, detached, for the next host), and the caller is told.
      await session.detach().catch(() => undefined);
      throw new SessionError('DRIVER_CLOSED', `this driver was closed while drive "${name}" was starting; it was detached (a durable drive keeps running for the next Driver.open)`, { name });
    }
    this.sessions.set(name, session); // replaces an ended session of the same name
    for (const listener of this.createdListeners) {
      try {
        listener(session);
      } catch {
        /* a watcher's failure is its own: the drive was created */
      }
    }
    // Matched as one command line: a flag and its value are two words (`-u user:pass`).
    const argv = [plan.binary, ...(opts.args ?? [])];
    const redactedArgv = config.redactSecrets ? redactArgv(argv).argv : argv;
    this.audit?.record({ sessionId: name, kind: 'create', payload: JSON.stringify(redactedArgv), tags: { allowId: plan.entry.id, sandboxed: plan.sandboxed } });
    const wall = plan.entry.limits.wallClockMs;
    if (wall !== undefined) {
      // One timer per capped drive, armed once at creation: it evicts, it never polls.
      const timer = this.clock.after(wall, () => void session.evict('limits.wallClockMs').catch(() => undefined));
      session.on('closed', () => timer.cancel());
    }
    return session;
  }

  /** Tells `listener` of each drive create() makes from now on, once it is listed (the console's table). */
  onCreated(listener: (session: Session) => void): Disposable {
    this.createdListeners.add(listener);
    return { dispose: () => void this.createdListeners.delete(listener) };
  }

  private liveSessions(): Session[] {
    return [...this.sessions.values()].filter((s) => s.lifecycle === 'live');
  }

  get(id: string): Session {
    const s = this.sessions.get(id);
    if (s) return s;
    const rec = this.journal.getSession(id);
    if (rec && NON_TERMINAL_STATES.includes(rec.state)) {
      const pid = this.journal.lease(id)?.holder?.pid;
      throw new SessionError('LEASE_HELD', `drive "${id}" is driven by another process${pid ? ` (pid ${pid})` : ''}; only one process may drive it`, { id });
    }
    if (rec) {
      const how = rec.state === 'exited' ? `exited${rec.exit ? ` (code ${rec.exit.code ?? 'none'}, signal ${rec.exit.signal ?? 'none'})` : ''}` : `failed (${rec.failureReason ?? 'unknown'})`;
      throw new SessionError('SESSION_NOT_FOUND', `drive "${id}" has ${how}; it is not open in this driver (driver.prune() forgets it)`, { id, state: rec.state });
    }
    throw new SessionError('SESSION_NOT_FOUND', `no session "${id}" in this driver (see driver.list())`, { id });
  }

  /**
   * The drives of this driver, and the durable drives of the journal that another live process
   * holds (state `live`, `heldBy` its pid: only that process may drive them).
   */
  list(): SessionInfo[] {
    const held: SessionInfo[] = this.journal
      .listSessions({ states: NON_TERMINAL_STATES })
      .filter((r) => !this.sessions.has(r.id))
      .map((r) => ({
        id: r.id,
        name: r.name,
        allowId: r.allowId,
        backend: r.backend,
        durable: r.durable,
        state: 'live' as const,
        ...(this.journal.lease(r.id)?.holder ? { heldBy: this.journal.lease(r.id)?.holder?.pid } : { reason: 'detached: not attached by this host' }),
        createdAt: new Date(r.createdAt).toISOString(),
      }));
    return [...[...this.sessions.values()].map((s) => ({
      id: s.id,
      name: s.id,
      allowId: s.allowId,
      backend: s.backendKind,
      durable: s.durable,
      state: s.lifecycle,
      ...(s.lostBecause ? { reason: s.lostBecause } : {}),
      ...(s.exit ? { exit: s.exit } : {}),
      createdAt: new Date(s.createdAt).toISOString(),
    })), ...held];
  }

  /**
   * Ends and forgets finished drives (exited or failed; `ids` limits it to some): a tmux server
   * still up is killed and verified gone with its socket, the session leaves this driver and its
   * journal row goes (events, answered prompts, incidents). Live drives are never touched.
   */
  async prune(opts: { readonly ids?: readonly string[] } = {}): Promise<PrunedDrive[]> {
    if (this.closed) throw new SessionError('DRIVER_CLOSED', 'this driver was closed; open a new one');
    if (opts.ids !== undefined && (!Array.isArray(opts.ids) || !opts.ids.every((id) => typeof id === 'string'))) {
      throw new UsageError('BAD_ARGUMENT', 'prune: ids must be an array of drive ids');
    }
    return pruneDrives({ journal: this.journal, leases: this.leases, backends: this.backends, sessions: this.sessions }, opts.ids);
  }

  /** Detaches from every session; durable drives keep running. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    // A create() under way finishes first: its drive is detached by it, recorded in the journal
    // while the journal is still open (each launch is bounded by the tmux deadline).
    await Promise.allSettled([...this.creating]);
    await Promise.all([...this.sessions.values()].map((s) => s.detach().catch(() => undefined)));
    this.audit?.close();
    this.journal.close(); // releases this process's leases: the next host takes the drives over
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The environment tmux clients run with: no host variables reach a drive through them. */
  static clientEnv(): Record<string, string> {
    return clientEnv();
  }
}
