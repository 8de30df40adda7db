/**
 * Which backend a drive gets, and how its tmux server is reached: a per-drive tmux server here
 * (the default), one on a remote host over its ssh channel (an entry with `host`), or a host-owned
 * pty (an entry with `backend: spawn`, or tmux missing here). The one room of lib/driver that
 * imports backends/: their constructors, targets, socket probes and this host's /proc.
 */
import { join } from 'node:path';
import type { Clock } from '../common/clock.js';
import { TmuxDriveError, UsageError } from '../common/errors.js';
import type { DriverConfig } from '../policy/config-schema.js';
import type { ProcessActivitySample } from '../perceive/activity.js';
import { CURATED_PATH } from '../policy/child-env.js';
import { findExecutable, planLaunch, type CreateRequest, type LaunchPlan } from '../launch/plan-launch.js';
import { planRemoteLaunch } from '../launch/remote-launch.js';
import type { BackendListener, DriveBackend } from '../session/backend.js';
import type { Session } from '../session/session.js';
import { SpawnBackend } from '../../backends/spawn/spawn-backend.js';
import { sampleProcessActivity } from '../../backends/process/process-activity.js';
import { findProcesses, isAlive, readStat } from '../../backends/process/process-tree.js';
import { TmuxBackend } from '../../backends/tmux/tmux-backend.js';
import { TmuxObserver } from '../../backends/tmux/tmux-observer.js';
import { socketAnswers, socketPathFor, type TmuxTarget } from '../../backends/tmux/tmux-host.js';
import { endUnfinishedLaunch, removeLegacyPasteFiles } from '../../backends/tmux/launch-leftovers.js';
import { SshHost, checkHosts, hostIdOfJournalSocket, journalSocketFor, remoteSocketDir } from '../../backends/ssh/ssh-host.js';
import { SshLaunchHost } from '../../backends/ssh/ssh-launch-host.js';

/** Where a drive runs. */
export type Placement =
  | { readonly kind: 'tmux' }
  | { readonly kind: 'remote'; readonly host: SshHost }
  /** `fallback`: the entry asked for tmux, which is not installed here (non-durable, said loudly). */
  | { readonly kind: 'spawn'; readonly fallback: boolean };

export interface PlacedLaunch {
  readonly plan: LaunchPlan;
  readonly placement: Placement;
}

export interface BackendFactoryOptions {
  readonly config: DriverConfig;
  /** The data dir, canonical. */
  readonly dataDir: string;
  readonly clock: Clock;
  /** Deadline of each tmux call (a remote one gets twice this: it crosses ssh). */
  readonly tmuxTimeoutMs: number;
}

/** The environment tmux clients run with: no host variables reach a drive through them. */
export function clientEnv(): Record<string, string> {
  return { PATH: CURATED_PATH, LANG: 'C.UTF-8' };
}

export class BackendFactory {
  /** tmux and bwrap as found on this host's PATH when the driver opened (undefined: not installed). */
  readonly tmuxPath: string | undefined = findExecutable('tmux');
  private readonly bwrapPath: string | undefined = findExecutable('bwrap');
  /** One ssh transport (ControlMaster) per remote host, made on first use. */
  private readonly sshHosts = new Map<string, SshHost>();

  constructor(private readonly o: BackendFactoryOptions) {}

  /** What the backends refuse in a config beyond its schema (ssh hosts: unknown ids, reserved options). */
  static configProblems(config: DriverConfig): string[] {
    return checkHosts(config);
  }

  /** Directory of the local drive sockets. */
  get socketDir(): string {
    return join(this.o.dataDir, 'tmux');
  }

  socketPathFor(name: string): string {
    return socketPathFor(this.socketDir, name);
  }

  /** Removes what an older version left in the socket directory (paste files holding typed text). */
  sweepSocketDir(): void {
    removeLegacyPasteFiles(this.socketDir);
  }

  /** The launch plan of a create request (the policy of the host it runs on) and where it runs. */
  async plan(req: CreateRequest): Promise<PlacedLaunch> {
    const { config } = this.o;
    const requested = config.allow.find((e) => e.id === req.allowId);
    if (requested?.host !== undefined) {
      const host = this.sshHost(requested.host);
      return { plan: await planRemoteLaunch(new SshLaunchHost(host), config, req), placement: { kind: 'remote', host } };
    }
    const plan = planLaunch({ config, dataDir: this.o.dataDir, bwrapPath: this.bwrapPath }, req);
    // drive.durable false: every local drive on a host-owned pty, as if each entry said spawn.
    const wantsSpawn = plan.entry.backend === 'spawn' || !config.drive.durable;
    if (wantsSpawn || this.tmuxPath === undefined) return { plan, placement: { kind: 'spawn', fallback: !wantsSpawn } };
    return { plan, placement: { kind: 'tmux' } };
  }

  /** The journal's socket key of a drive: its local socket, a spawn marker, or a remote key naming the host. */
  journalSocket(placement: Placement, name: string): string {
    switch (placement.kind) {
      case 'spawn':
        return join(this.o.dataDir, 'spawn', name);
      case 'remote':
        return journalSocketFor(this.o.dataDir, placement.host.id, name);
      case 'tmux':
        return this.socketPathFor(name);
    }
  }

  /** Starts the planned program where it was placed, reporting into `session`. */
  launch({ plan, placement }: PlacedLaunch, drive: { readonly name: string; readonly cols: number; readonly rows: number }, session: Session): Promise<DriveBackend> {
    const { name, cols, rows } = drive;
    const scrollback = this.o.config.defaults.scrollback;
    switch (placement.kind) {
      case 'spawn':
        return SpawnBackend.launch(
          { argv: plan.argv, env: plan.env, cwd: plan.cwd, cols, rows, name, clock: this.o.clock, timeoutMs: this.o.tmuxTimeoutMs, terminalModes: () => session.inputModes() },
          session.listener,
        );
      case 'remote':
        return TmuxBackend.launch({ ...this.remoteTarget(placement.host, name, plan.env), cols, rows, scrollback, argv: plan.argv }, session.listener);
      case 'tmux':
        return TmuxBackend.launch({ ...this.localTarget(name, plan.env), cols, rows, scrollback, argv: plan.argv }, session.listener);
    }
  }

  /** Attaches to the live local tmux server of a journaled drive. */
  attachLocal(name: string, listener: BackendListener): Promise<TmuxBackend> {
    return TmuxBackend.attach(this.localTarget(name, clientEnv()), listener);
  }

  /** A hot standby's observer of a local drive another host drives (tmux-observer.ts). */
  observeLocal(name: string): Promise<TmuxObserver> {
    return TmuxObserver.attach(this.localTarget(name, clientEnv()));
  }

  /** Attaches to a journaled drive's tmux server on remote host `hostId`. */
  attachRemote(hostId: string, name: string, listener: BackendListener): Promise<TmuxBackend> {
    return TmuxBackend.attach(this.remoteTarget(this.sshHost(hostId), name, clientEnv()), listener);
  }

  /** True when a local tmux server answers on `socket` (never, without tmux here). */
  async localServerAnswers(socket: string): Promise<boolean> {
    return this.tmuxPath !== undefined && (await socketAnswers(socket, this.o.tmuxTimeoutMs));
  }

  /** Ends what a launch interrupted by a host crash left (see endUnfinishedLaunch); true when it found some. */
  endUnfinishedLaunch(socket: string, name: string): boolean {
    return endUnfinishedLaunch(socket, name);
  }

  /** The remote host id of a journal socket key, or undefined for a local drive. */
  remoteHostOf(journalSocket: string): string | undefined {
    return hostIdOfJournalSocket(this.o.dataDir, journalSocket);
  }

  /** True when the config names host `id`. */
  knowsHost(id: string): boolean {
    return this.o.config.hosts.some((h) => h.id === id);
  }

  /** Whether drive `name`'s server answers on host `hostId` (unreachable: the host could not be asked). */
  remoteServer(hostId: string, name: string): Promise<'alive' | 'gone' | 'unreachable'> {
    const host = this.sshHost(hostId);
    return host.probeSocket(`${remoteSocketDir(host.config)}/${name}.sock`);
  }

  /**
   * The pid of a live process driving the local tmux server on `socket` through a control client
   * (the client's parent), other than this process; undefined when none does. A control client
   * whose parent died was re-parented to init (pid 1) and drives nothing.
   */
  localController(socket: string): number | undefined {
    for (const pid of findProcesses((cmdline) => {
      const argv = cmdline.split('\0');
      return argv.includes(socket) && argv.includes('-C');
    })) {
      const ppid = readStat(pid)?.ppid;
      if (ppid !== undefined && ppid > 1 && ppid !== process.pid && isAlive(ppid)) return ppid;
    }
    return undefined;
  }

  /** One sample of the process tree under `pid` on this host (busy vs hung). */
  sampleActivity(pid: number): ProcessActivitySample {
    return sampleProcessActivity(pid, this.o.clock.now());
  }

  /** The ssh transport of host `id` (made on first use); BAD_ARGUMENT when the config has no such host. */
  private sshHost(id: string): SshHost {
    let host = this.sshHosts.get(id);
    if (!host) {
      const cfg = this.o.config.hosts.find((h) => h.id === id);
      if (!cfg) throw new UsageError('BAD_ARGUMENT', `no host "${id}" in the config's hosts`);
      host = new SshHost(cfg, this.o.dataDir, this.o.tmuxTimeoutMs);
      this.sshHosts.set(id, host);
    }
    return host;
  }

  private remoteTarget(host: SshHost, name: string, env: Record<string, string>): TmuxTarget {
    return { tmuxPath: 'tmux', socketDir: remoteSocketDir(host.config), name, clock: this.o.clock, timeoutMs: this.o.tmuxTimeoutMs * 2, env, host };
  }

  private localTarget(name: string, env: Record<string, string>): TmuxTarget {
    if (!this.tmuxPath) throw new TmuxDriveError('TMUX_NOT_FOUND', 'tmux is not installed on this host: apt-get install tmux');
    return { tmuxPath: this.tmuxPath, socketDir: this.socketDir, name, clock: this.o.clock, timeoutMs: this.o.tmuxTimeoutMs, env };
  }
}
