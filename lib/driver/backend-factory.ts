/**
 * Which backend a drive gets, and how its tmux server is reached: a per-drive tmux server here
 * (the default), one on a remote host over its ssh channel (an entry with `host`), or a host-owned
 * pty (an entry with `backend: spawn`, or tmux missing here). The only room of the driver that
 * knows the backends' constructors and their targets.
 */
import { join } from 'node:path';
import type { Clock } from '../common/clock.js';
import { TmuxDriveError, UsageError } from '../common/errors.js';
import type { DriverConfig } from '../policy/config-schema.js';
import { CURATED_PATH } from '../policy/child-env.js';
import { findExecutable, planLaunch, type CreateRequest, type LaunchPlan } from '../launch/plan-launch.js';
import { planRemoteLaunch } from '../launch/remote-launch.js';
import type { BackendListener, DriveBackend } from '../session/backend.js';
import type { Session } from '../session/session.js';
import { SpawnBackend } from '../../backends/spawn/spawn-backend.js';
import { TmuxBackend, endUnfinishedLaunch, removeLegacyPasteFiles, socketAnswers, socketPathFor, type TmuxTarget } from '../../backends/tmux/tmux-backend.js';
import { SshHost, hostIdOfJournalSocket, journalSocketFor, remoteSocketDir } from '../../backends/ssh/ssh-host.js';
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
    if (plan.entry.backend === 'spawn' || this.tmuxPath === undefined) return { plan, placement: { kind: 'spawn', fallback: plan.entry.backend !== 'spawn' } };
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

  /** Attaches to a journaled drive's tmux server on a remote host. */
  attachRemote(host: SshHost, name: string, listener: BackendListener): Promise<TmuxBackend> {
    return TmuxBackend.attach(this.remoteTarget(host, name, clientEnv()), listener);
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

  /** Whether drive `name`'s server answers on `host` (unreachable: the host could not be asked). */
  remoteServer(host: SshHost, name: string): Promise<'alive' | 'gone' | 'unreachable'> {
    return host.probeSocket(`${remoteSocketDir(host.config)}/${name}.sock`);
  }

  /** The ssh transport of host `id` (made on first use); BAD_ARGUMENT when the config has no such host. */
  sshHost(id: string): SshHost {
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
