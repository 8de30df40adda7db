/**
 * A remote machine reached over ONE long-lived ssh connection: an ssh ControlMaster per host
 * (`<dataDir>/ssh/<hostid>.ctl`), started once and shared by every later `ssh` to that host (no new
 * TCP or auth handshake: a mux session over the master's connection). Implements TmuxHost, so
 * the tmux backend runs unchanged on the far side: every tmux call, file write and /proc read is
 * an ssh-wrapped argv whose words are shell-quoted (shell-quote.ts); no caller text is ever
 * interpolated into a remote shell script, only passed as quoted positional words.
 *
 * The room (backends/ssh/): this host, shell-quote.ts and ssh-launch-host.ts (the facts the launch
 * policy of lib/launch/remote-launch.ts decides on, read on the far side). It imports lib/common, lib/control, lib/policy, the TmuxHost port of
 * backends/tmux/tmux-host.ts and backends/process's /proc parsing; never the tmux backend itself.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { TmuxDriveError } from '../../lib/common/errors.js';
import { listSessionsArgv } from '../../lib/control/tmux-commands.js';
import { CURATED_PATH } from '../../lib/policy/child-env.js';
import type { TmuxHost } from '../tmux/tmux-host.js';
import { parseStats, treeOf, type ProcStat } from '../process/process-tree.js';
import { remoteCommand } from './shell-quote.js';

export interface SshHostConfig {
  readonly id: string;
  readonly ssh: {
    readonly host: string;
    readonly user: string;
    readonly port?: number;
    readonly identityFile?: string;
    /** `Key=value` words, each passed as `-o Key=value`. */
    readonly options?: readonly string[];
  };
  /** The remote data dir (sockets under <dataDir>/tmux, workspaces under <dataDir>/workspace). */
  readonly dataDir?: string;
}

/** ssh options the transport owns: an operator's option may not change the channel's shape. */
const RESERVED_OPTIONS: ReadonlySet<string> = new Set(['controlmaster', 'controlpath', 'controlpersist', 'batchmode', 'requesttty', 'remotecommand', 'sessiontype', 'stdioforward', 'forkafterauthentication']);
export const SSH_OPTION = /^([A-Za-z][A-Za-z0-9]*)=([\x21-\x7e]+)$/;

/** Checks an operator's `-o` word: `Key=value`, printable, no spaces, not a transport option. */
export function checkSshOption(word: string): string | undefined {
  const m = SSH_OPTION.exec(word);
  if (!m) return `ssh option "${word}" must be Key=value (printable, no spaces)`;
  if (RESERVED_OPTIONS.has(m[1]!.toLowerCase())) return `ssh option ${m[1]} is set by tmux-drive's transport and cannot be overridden`;
  return undefined;
}

/** The remote data dir: the configured one, else ~user/.tmux-drive by the usual layout. */
export function remoteDataDir(cfg: SshHostConfig): string {
  if (cfg.dataDir) return cfg.dataDir.replace(/\/+$/, '') || '/';
  return cfg.ssh.user === 'root' ? '/root/.tmux-drive' : `/home/${cfg.ssh.user}/.tmux-drive`;
}

/** The remote socket of drive `name` (derivable from the host config and the name alone). */
export function remoteSocketDir(cfg: SshHostConfig): string {
  return join(remoteDataDir(cfg), 'tmux');
}

/** The journal's key for a remote drive: a local-looking path that names host and drive. */
export function journalSocketFor(localDataDir: string, hostId: string, name: string): string {
  return join(localDataDir, 'remote', hostId, `${name}.sock`);
}

/** The host id of a journal key made by journalSocketFor, or undefined for a local drive. */
export function hostIdOfJournalSocket(localDataDir: string, socketPath: string): string | undefined {
  const prefix = `${join(localDataDir, 'remote')}/`;
  if (!socketPath.startsWith(prefix)) return undefined;
  const parts = socketPath.slice(prefix.length).split('/');
  return parts.length === 2 ? parts[0] : undefined;
}

/** Fixed remote scripts (never built from caller text; values arrive as quoted positional words). */
const SCRIPT = {
  stats: 'cat /proc/[0-9]*/stat 2>/dev/null; true',
  write: 'umask 077 && cat > "$1"',
  answers: 'exec "$@" >/dev/null 2>&1',
} as const;

export interface RunResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export class SshHost implements TmuxHost {
  readonly remote = true;
  readonly controlPath: string;
  private master: Promise<void> | undefined;

  constructor(readonly config: SshHostConfig, localDataDir: string, private readonly timeoutMs: number) {
    this.controlPath = join(localDataDir, 'ssh', `${config.id}.ctl`);
    // ssh binds `<ControlPath>.<16 random chars>` first, then renames: leave room for it in sun_path.
    if (Buffer.byteLength(this.controlPath) > 107 - 17) {
      throw new TmuxDriveError('BAD_ARGUMENT', `ssh control path ${this.controlPath} is too long for a unix socket: choose a shorter dataDir`);
    }
    mkdirSync(join(localDataDir, 'ssh'), { recursive: true, mode: 0o700 });
  }

  get id(): string {
    return this.config.id;
  }

  /** The ssh environment: enough for ssh itself (keys, agent), nothing of the host's for the remote. */
  private static env(): Record<string, string> {
    const env: Record<string, string> = { PATH: CURATED_PATH, HOME: homedir(), LANG: 'C.UTF-8' };
    if (process.env.SSH_AUTH_SOCK) env.SSH_AUTH_SOCK = process.env.SSH_AUTH_SOCK;
    return env;
  }

  /** Options every ssh of this host shares (connection identity and the control socket). */
  private baseArgs(): string[] {
    const { ssh } = this.config;
    const a = ['-o', `ControlPath=${this.controlPath}`, '-o', 'BatchMode=yes', '-l', ssh.user];
    if (ssh.port !== undefined) a.push('-p', String(ssh.port));
    if (ssh.identityFile !== undefined) a.push('-i', ssh.identityFile, '-o', 'IdentitiesOnly=yes');
    for (const o of ssh.options ?? []) a.push('-o', o);
    return a;
  }

  /** argv of an ssh that runs `argv` remotely over the master (a mux session, no new handshake). */
  sshArgv(argv: readonly string[], opts: { tty?: boolean } = {}): string[] {
    return ['ssh', ...(opts.tty ? ['-t'] : ['-T']), '-o', 'ControlMaster=no', ...this.baseArgs(), '--', this.config.ssh.host, remoteCommand(argv)];
  }

  /** The master's pid when one runs (read from `ssh -O check`), else undefined. */
  async masterPid(): Promise<number | undefined> {
    const r = await this.exec(['ssh', ...this.baseArgs(), '-O', 'check', '--', this.config.ssh.host]);
    const m = /pid=(\d+)/.exec(r.stderr);
    return r.code === 0 && m ? Number(m[1]) : undefined;
  }

  /**
   * Starts the master when none answers: `ssh -M -N -f` authenticates, then backgrounds and keeps
   * the connection (ControlPersist: 10 minutes after its last session, so a host restart finds it).
   */
  ensureMaster(): Promise<void> {
    this.master ??= (async () => {
      if ((await this.masterPid()) !== undefined) return;
      // A master killed without cleanup leaves its socket: `ssh -M` would then fail to bind it and
      // run on as a plain, unshared connection. The path is ours alone (the data dir): remove it.
      rmSync(this.controlPath, { force: true });
      const args = ['-M', '-N', '-f', '-o', 'ControlPersist=10m', '-o', 'ServerAliveInterval=15', ...this.baseArgs(), '--', this.config.ssh.host];
      const code = await new Promise<number>((resolve) => {
        const child = spawn('ssh', args, { env: SshHost.env(), stdio: ['ignore', 'ignore', 'pipe'], detached: true });
        let err = '';
        child.stderr.on('data', (d: Buffer) => {
          if (err.length < 2000) err += d.toString();
        });
        const timer = setTimeout(() => child.kill('SIGKILL'), this.timeoutMs * 2);
        child.on('error', () => resolve(-1));
        // -f: the parent exits once authenticated; its stderr pipe is also held by the master, so
        // wait for 'exit', not 'close'.
        child.on('exit', (c) => {
          clearTimeout(timer);
          child.stderr.destroy();
          child.unref();
          resolve(c ?? -1);
          if (c !== 0) this.lastError = err.trim();
        });
      });
      if (code !== 0) throw new TmuxDriveError('TMUX_START_FAILED', `cannot open the ssh channel to host "${this.config.id}" (${this.config.ssh.user}@${this.config.ssh.host}): ${this.lastError || `ssh exited ${code}`}`, { host: this.config.id, unreachable: true });
    })().finally(() => {
      this.master = undefined;
    });
    return this.master;
  }

  private lastError = '';

  /** Ends the master (and with it every session over it). */
  async stopMaster(): Promise<void> {
    await this.exec(['ssh', ...this.baseArgs(), '-O', 'exit', '--', this.config.ssh.host]);
  }

  private exec(argv: readonly string[], stdin?: string): Promise<RunResult> {
    return new Promise((resolve) => {
      const child = execFile(argv[0]!, argv.slice(1), { env: SshHost.env(), timeout: this.timeoutMs * 2, killSignal: 'SIGKILL', maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
        const e = err as (NodeJS.ErrnoException & { code?: number | string }) | null;
        resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stdout, stderr });
      });
      child.stdin?.on('error', () => undefined);
      child.stdin?.end(stdin ?? '');
    });
  }

  /** Runs `argv` remotely (over the master); exit code 255 is ssh's own failure. */
  async run(argv: readonly string[], stdin?: string): Promise<RunResult> {
    await this.ensureMaster();
    return this.exec(this.sshArgv(argv), stdin);
  }

  private async mustRun(argv: readonly string[], what: string, stdin?: string): Promise<RunResult> {
    const r = await this.run(argv, stdin);
    if (r.code !== 0) throw new TmuxDriveError(r.code === 255 ? 'TMUX_START_FAILED' : 'TMUX_COMMAND_FAILED', `${what} on host "${this.config.id}" failed: ${r.stderr.trim() || `exit ${r.code}`}`, { host: this.config.id, unreachable: true });
    return r;
  }

  // --- TmuxHost ---

  tmuxCommand(args: readonly string[], env: Readonly<Record<string, string>>): { file: string; args: string[]; env: Record<string, string> } {
    const assignments = Object.entries(env).map(([k, v]) => `${k}=${v}`);
    const [file, ...rest] = this.sshArgv(['env', '-i', ...assignments, 'tmux', ...args]);
    return { file: file!, args: rest, env: SshHost.env() };
  }

  /** Alive, gone, or the host could not be asked (ssh failed): unknown counts as alive (not gone). */
  async probeSocket(socket: string): Promise<'alive' | 'gone' | 'unreachable'> {
    let r: RunResult;
    try {
      r = await this.run(['sh', '-c', SCRIPT.answers, 'sh', 'env', '-i', `PATH=${CURATED_PATH}`, 'tmux', ...listSessionsArgv(socket)]);
    } catch {
      return 'unreachable';
    }
    return r.code === 0 ? 'alive' : r.code === 255 || r.code === -1 ? 'unreachable' : 'gone';
  }

  async socketAnswers(socket: string): Promise<boolean> {
    return (await this.probeSocket(socket)) !== 'gone';
  }

  async prepareDir(dir: string): Promise<void> {
    await this.mustRun(['mkdir', '-p', '-m', '700', '--', dir], 'mkdir');
  }

  async writeFile(path: string, content: string): Promise<void> {
    await this.mustRun(['sh', '-c', SCRIPT.write, 'sh', path], 'writing a file', content);
  }

  async removeFile(path: string): Promise<void> {
    await this.mustRun(['rm', '-f', '--', path], 'rm');
  }

  private async stats(): Promise<ProcStat[]> {
    return parseStats((await this.mustRun(['sh', '-c', SCRIPT.stats], 'reading /proc')).stdout);
  }

  async processTree(root: number): Promise<ProcStat[]> {
    return treeOf(await this.stats(), root);
  }

  async alive(pids: readonly number[]): Promise<number[]> {
    if (pids.length === 0) return [];
    const live = new Set((await this.stats()).filter((s) => s.state !== 'Z' && s.state !== 'X').map((s) => s.pid));
    return pids.filter((p) => live.has(p));
  }

  async signal(pids: readonly number[], signal: NodeJS.Signals): Promise<void> {
    const ok = pids.filter((p) => Number.isInteger(p) && p > 1);
    if (ok.length === 0) return;
    await this.run(['kill', '-s', signal.replace(/^SIG/, ''), '--', ...ok.map(String)]); // gone pids: ignored
  }

  attachCommand(tmuxArgs: readonly string[]): string[] {
    return this.sshArgv(['tmux', ...tmuxArgs], { tty: true });
  }

  /** Runs a fixed script with positional words; the caller reads stdout. */
  script(script: string, words: readonly string[]): Promise<RunResult> {
    return this.mustRun(['sh', '-c', script, 'sh', ...words], 'a probe');
  }
}

/** Config checks beyond the schema: every `host` an entry names exists; no reserved ssh option. */
export function checkHosts(config: { readonly hosts: readonly SshHostConfig[]; readonly allow: readonly { readonly id: string; readonly host?: string; readonly backend: string }[] }): string[] {
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const h of config.hosts) {
    if (ids.has(h.id)) problems.push(`hosts: duplicate id "${h.id}"`);
    ids.add(h.id);
    for (const o of h.ssh.options ?? []) {
      const p = checkSshOption(o);
      if (p) problems.push(`hosts.${h.id}.ssh.options: ${p}`);
    }
  }
  for (const e of config.allow) {
    if (e.host === undefined) continue;
    if (!ids.has(e.host)) problems.push(`allow.${e.id}.host: no host "${e.host}" in hosts`);
    if (e.backend === 'spawn') problems.push(`allow.${e.id}: backend "spawn" cannot run on a remote host`);
  }
  return problems;
}
