/**
 * Where a drive's tmux runs and how one tmux command is run there. `TmuxHost` is the machine
 * (this one, or a remote one that backends/ssh implements); `runTmux` runs one `tmux <args>`
 * process to completion under the drive's deadline, its failures typed.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import type { Clock } from '../../lib/common/clock.js';
import { TmuxDriveError, TmuxTimeoutError } from '../../lib/common/errors.js';
import { isAlive, processTree, signalAll, type ProcStat } from '../process/process-tree.js';
import type { GoneProbe } from '../process/wait-gone.js';
import { TMUX_CWD, type TmuxRun } from './control-client.js';

/** Unix socket paths are limited to 108 bytes including the NUL (sun_path). */
export const MAX_SOCKET_PATH = 107;

export interface TmuxTarget {
  readonly tmuxPath: string;
  /** Directory of the drive sockets, 0700. */
  readonly socketDir: string;
  /** The session name; also the socket's stem. */
  readonly name: string;
  readonly clock: Clock;
  /** Deadline for every tmux call. */
  readonly timeoutMs: number;
  /** The environment tmux itself runs with (curated: tmux copies it into every pane). */
  readonly env: Readonly<Record<string, string>>;
  /** Where tmux runs (the command runner): absent, this machine; backends/ssh gives a remote one. */
  readonly host?: TmuxHost;
}

/**
 * The machine a drive's tmux server runs on: how tmux is run there and the few file and process
 * operations the backend needs. Local is this machine (fs, /proc, signals); remote is ssh.
 */
export interface TmuxHost {
  readonly remote: boolean;
  /** The command that runs `tmux <args>` there with exactly `env` as tmux's environment. */
  tmuxCommand(args: readonly string[], env: Readonly<Record<string, string>>): TmuxRun;
  /** True when a tmux server answers on the socket (a refused or missing socket is not alive). */
  socketAnswers(socket: string, timeoutMs: number): Promise<boolean>;
  /** Creates the directory (0700) and its parents. */
  prepareDir(dir: string): Promise<void>;
  /** Writes a private (0600) file. */
  writeFile(path: string, content: string): Promise<void>;
  removeFile(path: string): Promise<void>;
  /** The live (non-zombie) processes of the tree rooted at `root`, root first. */
  processTree(root: number): Promise<ProcStat[]>;
  /** The pids of `pids` still alive. */
  alive(pids: readonly number[]): Promise<number[]>;
  signal(pids: readonly number[], signal: NodeJS.Signals): Promise<void>;
  /** The operator's terminal command that attaches `tmux <args>`. */
  attachCommand(tmuxArgs: readonly string[]): string[];
}

/** This machine. */
export function localTmuxHost(tmuxPath: string): TmuxHost {
  return {
    remote: false,
    tmuxCommand: (args, env) => ({ file: tmuxPath, args: [...args], env: { ...env }, cwd: TMUX_CWD }),
    socketAnswers: async (socket, timeoutMs) => existsSync(socket) && socketAnswers(socket, timeoutMs),
    prepareDir: async (dir) => void mkdirSync(dir, { recursive: true, mode: 0o700 }),
    writeFile: async (path, content) => writeFileSync(path, content, { mode: 0o600 }),
    removeFile: async (path) => rmSync(path, { force: true }),
    processTree: async (root) => processTree(root),
    alive: async (pids) => pids.filter(isAlive),
    signal: async (pids, signal) => signalAll(pids, signal),
    attachCommand: (tmuxArgs) => [tmuxPath, ...tmuxArgs],
  };
}

/** The host's processes by pid, as kill verification (backends/process/wait-gone.ts) sees them. */
export function hostProcesses(host: TmuxHost): GoneProbe<number> {
  return { alive: (pids) => host.alive(pids), signal: (pids, signal) => host.signal(pids, signal) };
}

export function hostOf(target: TmuxTarget): TmuxHost {
  return target.host ?? localTmuxHost(target.tmuxPath);
}

export function socketPathFor(socketDir: string, name: string): string {
  return join(socketDir, `${name}.sock`);
}

/** Runs `tmux <args>` on the target's host to completion, within the target's deadline. */
export function runTmux(target: TmuxTarget, args: string[]): Promise<{ stdout: string; stderr: string }> {
  const run = hostOf(target).tmuxCommand(args, target.env);
  return new Promise((resolve, reject) => {
    execFile(run.file, [...run.args], { env: { ...run.env }, timeout: target.timeoutMs, killSignal: 'SIGKILL', ...(run.cwd === undefined ? {} : { cwd: run.cwd }) }, (err, stdout, stderr) => {
      if (!err) return resolve({ stdout, stderr });
      const e = err as NodeJS.ErrnoException & { killed?: boolean };
      if (e.code === 'ENOENT') reject(new TmuxDriveError('TMUX_NOT_FOUND', `tmux not found at ${target.tmuxPath}: install it (apt-get install tmux)`));
      else if (e.killed) reject(new TmuxTimeoutError(`tmux ${args.join(' ')}`, target.timeoutMs));
      else reject(new TmuxDriveError('TMUX_START_FAILED', `tmux failed: ${String(stderr).trim() || e.message}`, { args }));
    });
  });
}

/**
 * Connect errors that prove no server listens on a socket: nothing bound to the path (refused) or
 * no path. Any other (EAGAIN: a wedged server's full accept queue; EACCES; ...) says nothing of the
 * server, and a server thought gone is ended (reconcile's endUnfinishedLaunch kills what names the
 * socket): a durable drive is never ended on a guess.
 */
const NO_SERVER = new Set(['ECONNREFUSED', 'ENOENT']);

/** True when a tmux server answers on the socket, or may (only a refused or missing socket is not alive). */
export function socketAnswers(path: string, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = connect(path);
    const done = (alive: boolean): void => {
      clearTimeout(timer);
      sock.destroy();
      resolve(alive);
    };
    const timer = setTimeout(() => done(true), timeoutMs); // connected but silent: something holds it
    sock.once('connect', () => done(true));
    sock.once('error', (err: NodeJS.ErrnoException) => done(!NO_SERVER.has(err.code ?? '')));
  });
}
