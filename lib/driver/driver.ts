/**
 * The composition root: config, launch policy, backends and sessions wired together. The only
 * module that knows every layer.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { systemClock } from './system-clock.js';
import { ConfigError, PolicyError, SessionError, TmuxDriveError, UsageError } from '../common/errors.js';
import { loadConfig, type LoadedConfig } from './load-config.js';
import { checkDataDir, makeDataDir } from './data-dir.js';
import { killServerArgv } from '../control/tmux-commands.js';
import { ADOPTED_ALLOW_ID, type DriverConfig, type DriverConfigInput } from '../policy/config-schema.js';
import { CURATED_PATH } from '../policy/child-env.js';
import { findExecutable, planLaunch, type CreateRequest } from '../launch/plan-launch.js';
import { planRemoteLaunch } from '../launch/remote-launch.js';
import { Session } from '../session/session.js';
import type { ExitInfo } from '../session/backend.js';
import { SpawnBackend } from '../../backends/spawn/spawn-backend.js';
import { TmuxBackend, type TmuxTarget, endUnfinishedLaunch, removeLegacyPasteFiles, socketAnswers, socketPathFor } from '../../backends/tmux/tmux-backend.js';
import { SshHost, checkHosts, hostIdOfJournalSocket, journalSocketFor, remoteSocketDir } from '../../backends/ssh/ssh-host.js';
import { SshLaunchHost } from '../../backends/ssh/ssh-launch-host.js';
import { AuditLog } from '../../journal/audit-log.js';
import { builtinProfilesDir, loadProfileFiles } from './profile-files.js';
import type { ProfileSet } from '../perceive/profile.js';
import { sampleProcessActivity } from '../../backends/tmux/process-activity.js';
import { redactArgv, redactTerminalText } from '../policy/redact.js';
import { Journal, JournalError, LeaseError, NON_TERMINAL_STATES, currentHolder, hashOf, type SessionRecord } from '../../journal/journal.js';
import { findProcesses, isAlive, readStat } from '../../backends/tmux/process-tree.js';

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
  /**
   * Which durable drives of the journal to re-attach on open: 'all' (default: a daemon), or the
   * names of the drives this host needs (a CLI invocation), leaving the others to other hosts.
   */
  readonly reattach?: 'all' | readonly string[];
  readonly clock?: Clock;
  /** Extra profile directories loaded after the built-in one (ids stay unique across them). */
  readonly profileDirs?: readonly string[];
  /**
   * Live tmux servers of the data dir that the journal does not know (it was emptied or deleted)
   * make open() fail with JOURNAL_ORPHANS naming them; true adopts them instead (a `detached` row
   * with allowId `adopted` and an `orphan_adopted` incident each), unless a live process drives them.
   */
  readonly adoptOrphans?: boolean;
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
  /** Pid of the live process that holds this drive, when it is not this one. */
  readonly heldBy?: number;
}

const CREATE_KEYS: ReadonlySet<string> = new Set(['allowId', 'args', 'project', 'cwd', 'env', 'name', 'cols', 'rows', 'objective']);
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const DEFAULT_TMUX_TIMEOUT_MS = 5000;
/** A tmux call slower than 10 minutes is a wedged server; Node timers also overflow past 24.8 days. */
const MAX_TMUX_TIMEOUT_MS = 600_000;

/** A dialog digest as the journal stores it (hex, with a kind prefix). */
function toDigest(digest: string): string {
  return /^[0-9a-f]{16,128}$/.test(digest) ? `dialog:${digest}` : `dialog:${hashOf(digest).slice(0, 32)}`;
}
/** Drives re-attached at once by Driver.open (2 cores here; each attach is mostly waiting on tmux). */
const RECONCILE_CONCURRENCY = 8;

const silentLogger: Logger = { warn: () => undefined };

/**
 * The pid of a live process driving the tmux server on `socket` through a control client (the
 * client's parent), other than this process; undefined when none does. A control client whose
 * parent died was re-parented to init (pid 1) and drives nothing.
 */
function controllingProcess(socket: string): number | undefined {
  for (const pid of findProcesses((cmdline) => {
    const argv = cmdline.split('\0');
    return argv.includes(socket) && argv.includes('-C');
  })) {
    const ppid = readStat(pid)?.ppid;
    if (ppid !== undefined && ppid > 1 && ppid !== process.pid && isAlive(ppid)) return ppid;
  }
  return undefined;
}

/** When the server on `socket` bound it (its mtime: tmux changes only the socket's mode later). */
function socketBirth(socket: string): number {
  try {
    return statSync(socket).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** Backend incident codes as journal incident kinds (the journal stores machine tokens only). */
const INCIDENT_OF: Readonly<Record<string, 'malformed_stream' | 'resync_failed' | 'pane_in_mode' | 'control_lost' | 'evidence_overflow'>> = {
  evidence_overflow: 'evidence_overflow',
  pty_read_error: 'malformed_stream',
  pty_tail_incomplete: 'malformed_stream',
  pty_tail_unguarded: 'malformed_stream',
  stray_line: 'malformed_stream',
  unknown_notification: 'malformed_stream',
  resync_failed: 'resync_failed',
  pane_in_mode_at_attach: 'pane_in_mode',
  stale_control_clients: 'control_lost',
  // A reply that did not end where its size said (the control client is replaced), and pane text
  // holding a reply's exact guard: a program trying to forge the framing.
  'control_framing-mismatch': 'malformed_stream',
  'control_guard-in-content': 'malformed_stream',
  control_replaced: 'control_lost',
};

export class Driver {
  private readonly sessions = new Map<string, Session>();
  /** Fencing token of each drive this process holds. */
  private readonly leases = new Map<string, number>();
  /** One ssh transport (ControlMaster) per remote host, made on first use. */
  private readonly sshHosts = new Map<string, SshHost>();
  private closed = false;

  private audit: AuditLog | undefined;
  /** The perception profiles (profiles/*.json), loaded and checked once at open. */
  private profiles!: ProfileSet;

  private constructor(
    private readonly journal: Journal,
    private readonly loaded: LoadedConfig,
    private readonly tmuxPath: string | undefined,
    private readonly bwrapPath: string | undefined,
    private readonly clock: Clock,
    private readonly tmuxTimeoutMs: number,
    readonly logger: Logger,
  ) {}

  static async open(opts: DriverOptions = {}): Promise<Driver> {
    // Everything is validated (config, profile references, options, the data dir itself) before
    // anything is created on disk: a refused open leaves nothing behind.
    const loaded = loadConfig(opts.config, opts.dataDir);
    const logger = opts.logger ?? silentLogger;
    const hostProblems = checkHosts(loaded.config);
    if (hostProblems.length > 0) {
      throw new ConfigError(`invalid config (${loaded.source}): ${hostProblems.join('; ')}`, hostProblems.map((p) => ({ path: p.slice(0, Math.max(0, p.indexOf(':'))) || 'hosts', message: p })));
    }
    const timeout = opts.tmuxTimeoutMs ?? DEFAULT_TMUX_TIMEOUT_MS;
    if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TMUX_TIMEOUT_MS) {
      throw new UsageError('BAD_ARGUMENT', `tmuxTimeoutMs must be a positive number of ms, at most ${MAX_TMUX_TIMEOUT_MS}`);
    }
    const which = opts.reattach ?? 'all';
    if (which !== 'all' && (!Array.isArray(which) || which.some((n) => typeof n !== 'string'))) throw new UsageError('BAD_ARGUMENT', "reattach must be 'all' or a list of drive names");
    if (opts.adoptOrphans !== undefined && typeof opts.adoptOrphans !== 'boolean') throw new UsageError('BAD_ARGUMENT', 'adoptOrphans must be a boolean');
    const profiles = opts.profileDirs && opts.profileDirs.length > 0 ? loadProfileFiles([builtinProfilesDir(), ...opts.profileDirs]) : loadProfileFiles();
    const profileIssues = loaded.config.allow.flatMap((e, i) =>
      e.profile !== undefined && profiles.get(e.profile) === undefined ? [{ path: `allow.${i}.profile`, message: `no profile "${e.profile}" (loaded: ${profiles.ids.join(', ')})` }] : [],
    );
    if (profileIssues.length > 0) throw new ConfigError(`invalid config (${loaded.source}): ${profileIssues.map((x) => `${x.path}: ${x.message}`).join('; ')}`, profileIssues);
    const plan = checkDataDir(loaded.dataDir);

    const canonical = { ...loaded, dataDir: makeDataDir(plan) };
    removeLegacyPasteFiles(join(canonical.dataDir, 'tmux'));
    if (canonical.config.unsafeDisableSandbox) {
      logger.warn('SANDBOX DISABLED by unsafeDisableSandbox in the operator config: drives run without bwrap, with the host filesystem and network', { source: loaded.source });
    }
    const journal = Journal.open(canonical.dataDir, { onError: (e) => logger.warn(`journal write failed: ${e.message}`, { code: e.code }) });
    const driver = new Driver(journal, canonical, findExecutable('tmux'), findExecutable('bwrap'), opts.clock ?? systemClock, timeout, logger);
    driver.profiles = profiles;
    try {
      if (canonical.config.audit.enabled) driver.audit = AuditLog.open(canonical.dataDir);
      await driver.reclaimOrphans(opts.adoptOrphans === true);
      await driver.reconcile(which);
    } catch (err) {
      await driver.close();
      throw err;
    }
    return driver;
  }

  /**
   * Live tmux servers of this data dir whose drive the journal has no row for: the journal was
   * emptied, deleted or replaced while they ran. They are never forgotten silently: without
   * `adopt` the open is refused naming them; with it each gets a `detached` row and an incident,
   * and is re-attached like any other detached drive. A server that a live process drives (its
   * control client's parent) is never adopted: that process holds it, and a second driver would
   * be a double drive.
   */
  private async reclaimOrphans(adopt: boolean): Promise<void> {
    if (!this.tmuxPath) return; // nothing local could have started one
    const socketDir = join(this.loaded.dataDir, 'tmux');
    const unknown = readdirSync(socketDir, { withFileTypes: true })
      .filter((f) => f.isSocket() && f.name.endsWith('.sock') && SESSION_NAME.test(f.name.slice(0, -'.sock'.length)))
      .map((f) => f.name.slice(0, -'.sock'.length))
      .filter((name) => this.journal.getSession(name) === undefined);
    if (unknown.length === 0) return;
    const alive = await Promise.all(unknown.map((name) => socketAnswers(socketPathFor(socketDir, name), this.tmuxTimeoutMs)));
    const orphans = unknown.filter((_, i) => alive[i]).map((name) => ({ name, socket: socketPathFor(socketDir, name), heldBy: controllingProcess(socketPathFor(socketDir, name)) }));
    if (orphans.length === 0) return;
    const held = orphans.filter((o) => o.heldBy !== undefined);
    if (!adopt || held.length > 0) {
      const list = orphans.map((o) => `${o.name} (${o.socket}${o.heldBy === undefined ? '' : `, driven by pid ${o.heldBy}`})`).join(', ');
      const how = held.length > 0
        ? 'a live process still drives some of them (its journal was replaced under it): stop that process first'
        : 'to re-attach them under their names, open with adoptOrphans: true (CLI: tmux-drive --adopt-orphans list)';
      throw new JournalError(
        'JOURNAL_ORPHANS',
        `the journal ${this.journal.file} does not know ${orphans.length} live drive(s) of this data dir: ${list}. It was emptied, deleted or replaced while they ran; nothing was changed. ${how}; or end one with: ${[this.tmuxPath ?? 'tmux', ...killServerArgv('<socket>')].join(' ')}`,
        { orphans: orphans.map((o) => ({ name: o.name, socket: o.socket, ...(o.heldBy === undefined ? {} : { heldBy: o.heldBy }) })), dataDir: this.loaded.dataDir },
      );
    }
    for (const o of orphans) {
      const rec = this.journal.insertSessionIfAbsent({
        id: o.name,
        name: o.name,
        socketPath: o.socket,
        // What it runs is unknown: no allow entry applies (no entry limits, no auto-answer).
        allowId: ADOPTED_ALLOW_ID,
        argvHash: hashOf(['unknown']),
        backend: 'tmux',
        durable: true,
        state: 'detached',
        createdAt: Math.floor(socketBirth(o.socket)),
      });
      if (!rec) continue; // a peer adopted it first, or a create() wrote it meanwhile
      this.journal.recordIncident(o.name, 'orphan_adopted', {});
      this.logger.warn(`adopted drive "${o.name}": its tmux server was alive but unknown to the journal (allow entry unknown: "${ADOPTED_ALLOW_ID}")`, { name: o.name });
    }
  }

  /**
   * Re-attaches every non-terminal drive of the journal that no live process holds: a live server
   * is attached (stale control clients ended, mirror rebuilt from a snapshot, a gap marked); a gone
   * one is reported `failed` with its journal kept. Nothing is ever relaunched.
   */
  private async reconcile(which: 'all' | readonly string[]): Promise<void> {
    const records = this.journal.listSessions({ states: NON_TERMINAL_STATES }).filter((r) => which === 'all' || which.includes(r.id));
    // A few at a time: each re-attach is a subprocess plus a capture; tmux servers are independent.
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let rec = records[next++]; rec; rec = records[next++]) await this.reconcileOne(rec);
    };
    await Promise.all(Array.from({ length: Math.min(RECONCILE_CONCURRENCY, records.length) }, worker));
  }

  private async reconcileOne(rec: SessionRecord): Promise<void> {
    let token: number;
    try {
      token = this.journal.acquireLease(rec.id, currentHolder()).token;
    } catch (err) {
      if (err instanceof LeaseError && err.code === 'LEASE_HELD') return; // another live host drives it
      throw err;
    }
    this.leases.set(rec.id, token);
    const session = this.newSession(rec.id, rec.allowId, this.loaded.config.defaults.cols, this.loaded.config.defaults.rows, rec.createdAt, this.journal.lastSeq(rec.id) + 1, rec.interactions);
    this.sessions.set(rec.id, session);
    const earlier = this.journal.events(rec.id).find((e) => e.kind === 'outcome');
    if (earlier) {
      // An earlier host already gave this drive its verdict: exactly once per drive, across hosts.
      const t = earlier.tags;
      const outcome = t.outcome === 'done' || t.outcome === 'needs-you' || t.outcome === 'failed' ? t.outcome : 'failed';
      session.restoreOutcome({ outcome, reason: String(t.reason ?? 'unknown'), elapsedMs: Number(t.elapsed_ms ?? 0), interactions: Number(t.interactions ?? 0) });
    }
    const remoteId = rec.backend === 'tmux' ? hostIdOfJournalSocket(this.loaded.dataDir, rec.socketPath) : undefined;
    if (remoteId !== undefined) return this.reconcileRemote(rec, remoteId, session);
    const alive = rec.backend === 'tmux' && this.tmuxPath !== undefined && (await socketAnswers(rec.socketPath, this.tmuxTimeoutMs));
    if (!alive) {
      // A host killed inside create() can leave a tmux still starting (its socket not yet bound):
      // that launch never completed, so it is ended, never adopted and never relaunched.
      const interrupted = rec.backend === 'tmux' && endUnfinishedLaunch(rec.socketPath, rec.id);
      const reason = rec.backend !== 'tmux' ? 'host_restarted' : interrupted ? 'launch_interrupted' : 'server_gone';
      this.journal.markFailed(rec.id, reason);
      this.journal.recordIncident(rec.id, 'server_gone', { backend: rec.backend });
      session.markFailed(reason);
      return;
    }
    await this.attachRecorded(rec, session, this.tmuxTarget(rec.id, Driver.clientEnv()));
  }

  /** Attaches a journaled drive whose server answers: live again, a gap marked; or failed, with why. */
  private async attachRecorded(rec: SessionRecord, session: Session, target: TmuxTarget): Promise<void> {
    try {
      const backend = await TmuxBackend.attach(target, session.listener);
      session.bind(backend);
      session.markGap('reattach');
      this.journal.updateSession(rec.id, { state: 'live' });
      this.journal.appendEvent(rec.id, 'reattach', {});
    } catch (err) {
      this.journal.markFailed(rec.id, 'reattach_failed');
      this.journal.recordIncident(rec.id, 'control_lost', { code: err instanceof TmuxDriveError ? err.code.toLowerCase() : 'unknown' });
      session.markFailed('reattach_failed');
    }
  }

  /**
   * A remote drive: its server answers over the host's ssh channel → attach (stale control clients
   * ended there); gone → failed; the host unreachable → the row stays as it was, for a later open.
   */
  private async reconcileRemote(rec: SessionRecord, hostId: string, session: Session): Promise<void> {
    let host: SshHost;
    try {
      host = this.sshHost(hostId);
    } catch {
      this.journal.markFailed(rec.id, 'host_unknown');
      session.markFailed('host_unknown');
      return;
    }
    const probe = await host.probeSocket(`${remoteSocketDir(host.config)}/${rec.id}.sock`);
    if (probe !== 'alive') {
      if (probe === 'gone') {
        this.journal.markFailed(rec.id, 'server_gone');
        this.journal.recordIncident(rec.id, 'server_gone', { backend: rec.backend });
      }
      session.markFailed(probe === 'gone' ? 'server_gone' : 'host_unreachable');
      const token = this.leases.get(rec.id);
      if (probe !== 'gone' && token !== undefined) {
        this.journal.releaseLease(rec.id, token); // not ours to fail: a later open retries
        this.leases.delete(rec.id);
      }
      return;
    }
    await this.attachRecorded(rec, session, this.remoteTarget(host, rec.id, Driver.clientEnv()));
  }

  private sshHost(id: string): SshHost {
    let host = this.sshHosts.get(id);
    if (!host) {
      const cfg = this.loaded.config.hosts.find((h) => h.id === id);
      if (!cfg) throw new UsageError('BAD_ARGUMENT', `no host "${id}" in the config's hosts`);
      host = new SshHost(cfg, this.loaded.dataDir, this.tmuxTimeoutMs);
      this.sshHosts.set(id, host);
    }
    return host;
  }

  private remoteTarget(host: SshHost, name: string, env: Record<string, string>) {
    return { tmuxPath: 'tmux', socketDir: remoteSocketDir(host.config), name, clock: this.clock, timeoutMs: this.tmuxTimeoutMs * 2, env, host };
  }

  private tmuxTarget(name: string, env: Record<string, string>) {
    if (!this.tmuxPath) throw new TmuxDriveError('TMUX_NOT_FOUND', 'tmux is not installed on this host: apt-get install tmux');
    return { tmuxPath: this.tmuxPath, socketDir: join(this.loaded.dataDir, 'tmux'), name, clock: this.clock, timeoutMs: this.tmuxTimeoutMs, env };
  }

  /** A session wired to the journal: lease checked before input, transitions recorded. */
  private newSession(id: string, allowId: string, cols: number, rows: number, createdAt: number, firstSeq: number, interactions = 0): Session {
    const { config } = this.loaded;
    const entry = config.allow.find((e) => e.id === allowId);
    const j = this.journal;
    let backendRef: { panePid(): number | undefined } | undefined;
    const session = new Session({
      id,
      allowId,
      cols,
      rows,
      scrollback: config.defaults.scrollback,
      ringBytes: config.worker.ringBytes,
      clock: this.clock,
      createdAt,
      firstSeq,
      interactions,
      redact: config.redactSecrets,
      limits: entry?.limits ?? {},
      profile: this.profiles.select({ profile: entry?.profile, allowId, binary: entry?.match.path }),
      stuckMs: config.worker.stuckMs,
      idleTtlMs: config.worker.idleTtlMs,
      // A drive whose entry is unknown (adopted, or removed from the config) answers nothing itself.
      autoAnswer: entry?.autoAnswer ?? 'none',
      readMode: config.drive.readMode,
      notify: config.drive.notify,
      heartbeatNotifyMs: config.drive.heartbeatNotifyMs,
      maxCostUsd: config.drive.maxCostUsd,
      sampleActivity: () => {
        const pid = backendRef?.panePid();
        return pid === undefined ? undefined : sampleProcessActivity(pid, this.clock.now());
      },
      answers: {
        count: (digest) => j.answerCount(id, toDigest(digest)),
        record: (digest, key) => void j.recordAnswer(id, toDigest(digest), key.replace(/[^A-Za-z0-9_+-]/g, '+').slice(0, 32) || 'key'),
      },
      onAction: (kind, payload, tags) => {
        // Typed text may carry escape sequences: matched as the text it draws.
        const text = config.redactSecrets ? redactTerminalText(payload).text : payload;
        this.audit?.record({ sessionId: id, kind, payload: text, tags });

      },
      beforeInput: () => {
        const token = this.leases.get(id);
        if (token === undefined) throw new SessionError('SESSION_CLOSED', `this process does not hold drive ${id}`, { id });
        this.journal.checkLease(id, token);
      },
    });
    session.on('bound', (backend) => {
      backendRef = backend;
    });
    session.on('state', (status) => {
      if (status.state === 'exited') return; // recorded by 'exit'
      // Counts survive the host (caps such as maxInteractions hold across CLI invocations); they
      // are written when the screen settles and on detach, not on the keystroke path.
      j.updateSession(id, { classification: { state: status.state, reason: status.reason }, interactions: session.interactionCount });
      j.appendEvent(id, 'state', { state: status.state, reason: status.reason });
    });
    session.on('attention', (a) => {
      j.appendEvent(id, 'attention', { kind: a.kind, reason: a.reason.toLowerCase().replace(/[^a-z0-9_.:-]/g, '_').slice(0, 64), confidence: a.confidence });
    });
    session.on('exit', (exit) => {
      j.updateSession(id, { state: 'exited', exit, interactions: session.interactionCount });
      j.appendEvent(id, 'exit', { code: exit.code ?? -1, signal: exit.signal ?? 0 });
      if (exit.code !== null && exit.code !== 0) j.recordIncident(id, 'nonzero_exit', { code: exit.code });
    });
    session.on('outcome', (o) => {
      // Machine tags only: the verdict, its reason token, counts.
      j.appendEvent(id, 'outcome', {
        outcome: o.outcome,
        reason: o.reason.toLowerCase().replace(/[^a-z0-9_.:-]/g, '_').slice(0, 64),
        elapsed_ms: o.elapsedMs,
        interactions: o.interactions,
        ...(o.exit ? { code: o.exit.code ?? -1, signal: o.exit.signal ?? 0 } : {}),
      });
    });
    session.on('lost', (reason) => {
      if (reason.startsWith('channel_lost')) {
        // A remote drive whose ssh channel ended: it keeps running there. The row stays detached
        // and the lease is let go, so the next Driver.open re-attaches it (no second copy).
        j.updateSession(id, { state: 'detached' });
        j.recordIncident(id, 'control_lost', {});
        const lease = this.leases.get(id);
        if (lease !== undefined) {
          j.releaseLease(id, lease);
          this.leases.delete(id);
        }
        return;
      }
      const token = reason === 'server_gone' ? 'server_gone' : 'control_lost';
      j.markFailed(id, token);
      j.recordIncident(id, token === 'server_gone' ? 'server_gone' : 'control_lost', {});
    });
    session.on('incident', (code) => {
      const kind = INCIDENT_OF[code];
      if (kind) j.recordIncident(id, kind, { code });
    });
    session.on('closed', (how) => {
      if (how === 'killed' && session.lifecycle === 'failed') {
        j.markFailed(id, (session.lostBecause ?? 'evicted').toLowerCase().replace(/[^a-z0-9_.:-]/g, '_'));
        j.appendEvent(id, 'evicted', {});
      } else if (how === 'killed') {
        j.updateSession(id, { state: 'exited', interactions: session.interactionCount });
        j.appendEvent(id, 'killed', {});
      } else {
        j.updateSession(id, { state: 'detached', interactions: session.interactionCount });
      }
      const token = this.leases.get(id);
      if (token !== undefined && how === 'killed') {
        j.releaseLease(id, token);
        this.leases.delete(id);
      }
    });
    return session;
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
    const previous = this.sessions.get(name);
    if (previous && previous.lifecycle === 'live') throw new SessionError('NAME_IN_USE', `a session named "${name}" is already open in this driver`, { name });
    const live = [...this.sessions.values()].filter((s) => s.lifecycle === 'live').length;
    if (live >= config.worker.maxSessions) {
      throw new PolicyError('LIMIT_REACHED', `worker.maxSessions (${config.worker.maxSessions}) sessions are live: kill one first`, { cap: 'worker.maxSessions' });
    }
    const existing = this.journal.getSession(name);
    if (existing && NON_TERMINAL_STATES.includes(existing.state)) {
      throw new SessionError('NAME_IN_USE', `a drive named "${name}" is still ${existing.state} (held by another host or detached); pick another name`, { name });
    }
    const requested = config.allow.find((e) => e.id === opts.allowId);
    const remote = requested?.host === undefined ? undefined : this.sshHost(requested.host);
    const plan = remote ? await planRemoteLaunch(new SshLaunchHost(remote), config, opts) : planLaunch({ config, dataDir: this.loaded.dataDir, bwrapPath: this.bwrapPath }, opts);
    const entryCap = plan.entry.limits.maxSessions;
    if (entryCap !== undefined && [...this.sessions.values()].filter((s) => s.lifecycle === 'live' && s.allowId === plan.entry.id).length >= entryCap) {
      throw new PolicyError('LIMIT_REACHED', `allow entry "${plan.entry.id}" allows ${entryCap} live session(s) (limits.maxSessions): kill one first`, { cap: 'limits.maxSessions' });
    }
    // `backend: spawn` on the entry, or tmux missing here: the program runs on a host-owned pty
    // (non-durable, said loudly) rather than the request failing.
    const spawned = !remote && (plan.entry.backend === 'spawn' || this.tmuxPath === undefined);
    if (spawned && plan.entry.backend !== 'spawn') {
      this.logger.warn(`tmux is not installed: drive "${name}" runs on the spawn backend and is not durable (it ends with this host; no re-attach, no operator attach)`, { name });
    }
    const socketDir = join(this.loaded.dataDir, 'tmux');
    const token = this.journal.acquireLease(name, currentHolder()).token;
    this.leases.set(name, token);
    // Journaled before the launch: a crash in between leaves a row whose server is gone, which the
    // next host reports as failed, never a second copy.
    this.journal.upsertSession({
      id: name,
      name,
      socketPath: spawned ? join(this.loaded.dataDir, 'spawn', name) : remote ? journalSocketFor(this.loaded.dataDir, remote.id, name) : socketPathFor(socketDir, name),
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
    const session = this.newSession(name, plan.entry.id, cols, rows, Date.now(), this.journal.lastSeq(name) + 1);
    try {
      const backend = spawned
        ? await SpawnBackend.launch(
            { argv: plan.argv, env: plan.env, cwd: plan.cwd, cols, rows, name, clock: this.clock, timeoutMs: this.tmuxTimeoutMs, terminalModes: () => session.inputModes() },
            session.listener,
          )
        : remote
          ? await TmuxBackend.launch({ ...this.remoteTarget(remote, name, plan.env), cols, rows, scrollback: config.defaults.scrollback, argv: plan.argv }, session.listener)
          : await TmuxBackend.launch({ ...this.tmuxTarget(name, plan.env), cols, rows, scrollback: config.defaults.scrollback, argv: plan.argv }, session.listener);
      session.bind(backend);
    } catch (err) {
      this.journal.markFailed(name, 'launch_failed');
      this.journal.releaseLease(name, token);
      this.leases.delete(name);
      throw err;
    }
    this.sessions.set(name, session); // replaces an ended session of the same name
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

  get(id: string): Session {
    const s = this.sessions.get(id);
    if (s) return s;
    const rec: SessionRecord | undefined = this.journal.getSession(id);
    if (rec && NON_TERMINAL_STATES.includes(rec.state)) {
      const pid = this.journal.lease(id)?.holder?.pid;
      throw new SessionError('LEASE_HELD', `drive "${id}" is driven by another process${pid ? ` (pid ${pid})` : ''}; only one process may drive it`, { id });
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

  /** Detaches from every session; durable drives keep running. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.sessions.values()].map((s) => s.detach().catch(() => undefined)));
    this.audit?.close();
    this.journal.close(); // releases this process's leases: the next host takes the drives over
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /** The environment tmux clients run with: no host variables reach a drive through them. */
  static clientEnv(): Record<string, string> {
    return { PATH: CURATED_PATH, LANG: 'C.UTF-8' };
  }
}
