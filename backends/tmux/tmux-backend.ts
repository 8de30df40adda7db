/**
 * The default backend: one detached tmux server per drive, driven through one control client.
 * Owns the resync protocol (reference §5): a batch of state + captures whose replies bracket the
 * pane output exactly, so the mirror is rebuilt without a gap or an overlap.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Clock } from '../../lib/common/clock.js';
import type { BackendListener, DriveBackend, ExitInfo, SignalName, VisibleGrid } from '../../lib/session/backend.js';
import type { ControlEvent, PaneId } from '../../lib/control/parser.js';
import type { Reply } from '../../lib/control/command-queue.js';
import { isWindowId, type WindowId } from '../../lib/control/ids.js';
import { paneSnapshot, visibleScreen, type SnapshotBatch } from '../../lib/control/pane-snapshot.js';
import {
  PANE_DIED_MARKER,
  PASTE_BUFFER,
  cancelPaneMode,
  deleteBuffer,
  displayMessage,
  encodeSendKeys,
  encodeSendText,
  isStartServerArgv,
  killServer,
  killServerArgv,
  listClients,
  operatorAttachArgv,
  pasteText,
  refreshClientPauseAfter,
  refreshClientSubscribe,
  resizeWindow,
  runShellTrue,
  serverConfig,
  startServerArgv,
  type TmuxCommand,
} from '../../lib/control/tmux-commands.js';
import { readPaneCapture, type PaneCapture } from '../../lib/control/pane-capture.js';
import { PANE_STATE_FORMAT } from '../../lib/control/pane-state.js';
import { ClosedError, TmuxDriveError, TmuxTimeoutError } from '../../lib/common/errors.js';
import { ControlClient, TMUX_CWD, type TmuxRun } from './control-client.js';
import { isAlive, findProcesses, processTree, signalAll, type ProcStat } from '../process/process-tree.js';
import { signalForeground } from '../process/signal-foreground.js';
import { waitGone } from '../process/wait-gone.js';

/** Unix socket paths are limited to 108 bytes including the NUL (sun_path). */
const MAX_SOCKET_PATH = 107;
/** tmux pauses a pane for us once its output has waited this many seconds (pause-after). */
const PAUSE_AFTER_SECONDS = 5;
/** Above this size, or with a newline, 'auto' text goes through the paste buffer. */
const PASTE_THRESHOLD_CHARS = 4096;
/** The subscription that reports the pane's death (see connect()). */
const DEAD_SUBSCRIPTION = 'td-dead';
/** Control-client incidents after which its stream is not trusted: the channel is replaced. */
const UNTRUSTED_STREAM: ReadonlySet<string> = new Set(['framing-mismatch', 'orphan-end']);
/** A paste's deadline grows with its size: tmux 3.3a lexed a 1 MB command line in ~0.5 s here. */
const PASTE_MS_PER_KCHAR = 10;

const INFO_FORMAT = ['pid', 'pane_id', 'pane_pid', 'pane_in_mode', 'window_id', 'client_name'].map((v) => `#{${v}}`).join('\t');
const CLIENTS_FORMAT = '#{client_control_mode}\t#{client_pid}\t#{client_name}';
const DEAD_FORMAT = '#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}';
const CURSOR_FORMAT = '#{cursor_x}\t#{cursor_y}';

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

export interface TmuxLaunch extends TmuxTarget {
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  /** The pane's argv; it enters the working directory itself (tmux's `-c` is format-expanded). */
  readonly argv: readonly string[];
}

/**
 * Where pane output goes relative to a capture in flight. Output before the capture's block is
 * inside the capture (reference §5); output after it continues it.
 */
type StreamPhase =
  | { readonly kind: 'live' }
  /** Until reply number `reply` arrives: drop output (a resync: the capture has it) or pass it on (a fidelity check). */
  | { readonly kind: 'until-reply'; readonly reply: number; readonly before: 'drop' | 'pass' }
  /** After the capture: hold output until the mirror is rebuilt or compared. */
  | { readonly kind: 'hold'; readonly held: Uint8Array[] };

export function socketPathFor(socketDir: string, name: string): string {
  return join(socketDir, `${name}.sock`);
}

function hostOf(target: TmuxTarget): TmuxHost {
  return target.host ?? localTmuxHost(target.tmuxPath);
}

function runTmux(target: TmuxTarget, args: string[]): Promise<{ stdout: string; stderr: string }> {
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

/** True when a tmux server answers on the socket (a refused or missing socket is not alive). */
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
    sock.once('error', () => done(false));
  });
}

/**
 * Ends what a launch interrupted by a host crash left behind: tmux processes naming the socket
 * (the `start-server` client and the server it forked, still starting), their trees, the socket and
 * the generated config. Returns true when there was something to end.
 */
export function endUnfinishedLaunch(socket: string, name: string): boolean {
  const owners = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const pids = owners.flatMap((pid) => processTree(pid).map((p) => p.pid));
  signalAll(pids, 'SIGKILL');
  rmSync(socket, { force: true });
  const dir = dirname(socket);
  for (const f of readdirSync(dir)) if (f.startsWith(`.${name}.`) && f.endsWith('.conf')) rmSync(join(dir, f), { force: true });
  return pids.length > 0;
}

/** How versions before the set-buffer paste named their paste files (`.td-<12 hex>`, typed text). */
const LEGACY_PASTE_FILE = /^\.td-[0-9a-f]{12}$/;

/**
 * Removes the paste files an older version left when its host died mid-paste: they hold typed text
 * unredacted. Pastes no longer touch the disk; this sweeps what an upgrade finds.
 */
export function removeLegacyPasteFiles(socketDir: string): void {
  for (const name of readdirSync(socketDir)) if (LEGACY_PASTE_FILE.test(name)) rmSync(join(socketDir, name), { force: true });
}

function replyText(reply: Reply): string {
  return reply.text();
}

export class TmuxBackend implements DriveBackend {
  readonly kind = 'tmux';
  readonly durable = true;
  readonly socket: string;
  private client: ControlClient | undefined;
  private pane: PaneId = '%0';
  private serverPid = -1;
  private pid: number | undefined;
  private repliesSeen = 0;
  private phase: StreamPhase = { kind: 'live' };
  private readonly operatorClients = new Set<string>();
  /** The capture in flight, if any (see serial()). */
  private captures: Promise<unknown> = Promise.resolve();
  private paused = false;
  private inMode = false;
  private exited = false;
  private ending = false;
  /** True once a resync has completed: from then on every pane byte reaches the listener. */
  private followed = false;
  /** Counts control clients: events and closes of a replaced one are ignored. */
  private generation = 0;
  /** The channel is being replaced after a framing anomaly. */
  private replacing: Promise<void> | undefined;

  private readonly host: TmuxHost;

  private constructor(private readonly target: TmuxTarget, private readonly listener: BackendListener) {
    this.socket = socketPathFor(target.socketDir, target.name);
    this.host = hostOf(target);
  }

  /** Starts a new detached server running `argv` and attaches to it. */
  static async launch(launch: TmuxLaunch, listener: BackendListener): Promise<TmuxBackend> {
    const backend = new TmuxBackend(launch, listener);
    if (Buffer.byteLength(backend.socket) > MAX_SOCKET_PATH) {
      throw new TmuxDriveError('BAD_ARGUMENT', `socket path ${backend.socket} is longer than ${MAX_SOCKET_PATH} bytes: choose a shorter dataDir`, { socket: backend.socket });
    }
    const host = backend.host;
    await host.prepareDir(launch.socketDir);
    if (await host.socketAnswers(backend.socket, launch.timeoutMs)) {
      throw new TmuxDriveError('NAME_IN_USE', `a drive named "${launch.name}" is already running; pick another name or re-attach to it`, { name: launch.name });
    }
    await host.removeFile(backend.socket); // tmux 3.3a leaves its socket behind when it exits
    const conf = join(launch.socketDir, `.${launch.name}.${randomBytes(4).toString('hex')}.conf`);
    await host.writeFile(conf, serverConfig({ session: launch.name, cols: launch.cols, rows: launch.rows, scrollback: launch.scrollback, argv: launch.argv }));
    try {
      await runTmux(launch, startServerArgv(backend.socket, conf));
    } finally {
      await host.removeFile(conf).catch(() => undefined); // it names the program's arguments: keep nothing on disk
    }
    await backend.connect();
    return backend;
  }

  /**
   * Attaches to a drive whose server already runs (re-attach after a host restart). A dead host's
   * `tmux -C` stays attached in tmux 3.3a and freezes the pane (reference §7): the caller holds the
   * drive's lease, so every other control client found is stale and is ended by pid once ours is attached.
   */
  static async attach(target: TmuxTarget, listener: BackendListener): Promise<TmuxBackend> {
    const backend = new TmuxBackend(target, listener);
    await backend.connect(true);
    return backend;
  }

  /** `endStale`: end every other control client first (re-attach: they are a dead host's). */
  private async connect(endStale = false): Promise<void> {
    const host = this.host;
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation;
    const client = await ControlClient.attach({
      ...(host.remote ? { command: (args: readonly string[]) => host.tmuxCommand(args, this.target.env) } : {}),
      tmuxPath: this.target.tmuxPath,
      socket: this.socket,
      session: this.target.name,
      clock: this.target.clock,
      env: this.target.env,
      timeoutMs: this.target.timeoutMs,
      onEvent: (event) => {
        if (current()) this.onEvent(event);
      },
      onClosed: (reason) => {
        if (current()) this.onClosed(reason);
      },
    });
    this.client = client;
    try {
      await client.command(refreshClientPauseAfter(PAUSE_AFTER_SECONDS));
      const info = replyText(await client.command(displayMessage(this.target.name, INFO_FORMAT))).split('\t');
      this.serverPid = Number(info[0]);
      this.pane = (info[1] ?? '%0') as PaneId;
      this.pid = Number(info[2]) || undefined;
      const windowId: WindowId = info[4] !== undefined && isWindowId(info[4]) ? info[4] : '@0';
      // The pane-died hook's line reaches control clients only sometimes in tmux 3.3a (16 of 20
      // runs here) and a pane subscription never reported; a window subscription on pane_dead did,
      // 10 of 10. tmux checks subscriptions once a second, so an exit is seen within ~1 s at worst.
      await client.command(refreshClientSubscribe(DEAD_SUBSCRIPTION, windowId, '#{pane_dead}'));
      // A paste cut short by a host that died holds typed text in tmux's memory: never left there.
      await client.command(deleteBuffer(PASTE_BUFFER));
      const clients = replyText(await client.command(listClients(CLIENTS_FORMAT))).split('\n');
      const stale: number[] = [];
      for (const [control, pid, name] of clients.map((line) => line.split('\t'))) {
        if (control === '0' && name) this.operatorClients.add(name);
        // A dead host's `tmux -C` stays attached in 3.3a and freezes the pane (reference §7); it
        // is ended by pid, the only way that works (detach-client does not).
        else if (endStale && control === '1' && name !== info[5] && Number(pid) > 0) stale.push(Number(pid));
      }
      if (stale.length > 0) {
        this.listener.incident('stale_control_clients', { count: stale.length });
        await this.host.signal(stale, 'SIGTERM');
        await this.waitGone(stale, 'SIGKILL');
      }
      if (this.operatorClients.size > 0) this.listener.operators([...this.operatorClients]);
      if (info[3] === '1') {
        // tmux 3.3a puts the pane into view-mode on a config error (no %config-error until 3.4).
        this.listener.incident('pane_in_mode_at_attach', { pane: this.pane });
        await client.command(cancelPaneMode(this.pane));
      }
      await this.resync('attach');
    } catch (err) {
      client.terminate();
      throw err;
    }
  }

  private get live(): ControlClient {
    if (!this.client || this.client.isClosed) throw new ClosedError('SESSION_CLOSED', `drive ${this.target.name} is not connected`, { name: this.target.name });
    return this.client;
  }

  private onEvent(event: ControlEvent): void {
    switch (event.kind) {
      case 'output': {
        if (event.pane !== this.pane) return;
        const phase = this.phase;
        if (phase.kind === 'hold') phase.held.push(event.data);
        else if (phase.kind === 'live' || phase.before === 'pass') this.listener.output(event.data);
        return;
      }
      case 'reply': {
        this.repliesSeen += 1;
        const phase = this.phase;
        if (phase.kind === 'until-reply' && this.repliesSeen === phase.reply) this.phase = { kind: 'hold', held: [] };
        return;
      }
      case 'notification':
        if (event.name === 'pause' && event.pane === this.pane) {
          this.paused = true;
          void this.resync('pause').catch((err: unknown) => this.listener.incident('resync_failed', { reason: 'pause', error: String(err) }));
        } else if (event.name === 'subscription-changed' && event.subscription === DEAD_SUBSCRIPTION && event.value === '1') {
          void this.readExit();
        } else if (event.name === 'client-session-changed' && !event.client.startsWith('client-')) {
          // A terminal client (an operator's `tmux attach`); control clients are named client-PID.
          this.operatorClients.add(event.client);
          this.listener.operators([...this.operatorClients]);
        } else if (event.name === 'client-detached' && this.operatorClients.delete(event.client)) {
          this.listener.operators([...this.operatorClients]);
        } else if (event.name === 'pane-mode-changed' && event.pane === this.pane) {
          void this.refreshMode();
        }
        return;
      case 'stray': {
        const text = new TextDecoder().decode(event.line);
        if (text.startsWith(`${PANE_DIED_MARKER} ${this.pane}`)) void this.readExit();
        else this.listener.incident('stray_line', { length: event.line.length });
        return;
      }
      case 'unknown':
        this.listener.incident('unknown_notification', { length: event.line.length });
        return;
      case 'incident':
        this.listener.incident(`control_${event.code}`, { length: event.line.length });
        if (UNTRUSTED_STREAM.has(event.code)) void this.replaceChannel(event.code);
        return;
      default:
        return;
    }
  }

  private onClosed(reason: string | undefined): void {
    if (this.ending) return;
    void this.host.socketAnswers(this.socket, this.target.timeoutMs).then((alive) => {
      if (this.ending) return;
      // Remote: the ssh channel (or its master) ended while the server still answers (or the host
      // cannot be reached to tell): the drive keeps running there and can be re-attached.
      const what = this.host.remote ? 'channel_lost: ssh channel or control client ended' : 'control client ended';
      this.listener.lost(alive ? `${what}${reason ? `: ${reason}` : ''}` : 'server_gone');
    });
  }

  /**
   * A framing anomaly: the control stream can no longer be told apart from pane text, so nothing
   * more is read from it. A new control client starts a clean stream; its attach resync rebuilds
   * the mirror from tmux's grid (commands in flight on the old one fail with CONTROL_CLOSED).
   */
  private replaceChannel(code: string): Promise<void> {
    if (this.ending) return Promise.resolve();
    this.replacing ??= (async () => {
      this.listener.incident('control_replaced', { after: code });
      const old = this.client;
      this.client = undefined;
      this.generation += 1; // the old client's close is not a loss
      old?.terminate();
      this.paused = false;
      this.followed = false; // the new stream does not continue the old one
      try {
        await this.connect();
      } catch (err) {
        if (!this.ending) this.listener.lost(`control client ended: replacing it after ${code} failed: ${String(err)}`);
      }
    })().finally(() => {
      this.replacing = undefined;
    });
    return this.replacing;
  }

  private async refreshMode(): Promise<void> {
    try {
      this.inMode = replyText(await this.live.command(displayMessage(this.pane, '#{pane_in_mode}'))) === '1';
    } catch {
      /* the session is ending */
    }
  }

  private async readExit(): Promise<void> {
    if (this.exited) return;
    try {
      const query = displayMessage(this.pane, DEAD_FORMAT);
      let [dead, status, signal] = replyText(await this.live.command(query)).split('\t');
      if (dead !== '1' || this.exited) return;
      this.exited = true;
      // pane_dead is the pty's EOF; the status comes with SIGCHLD, which tmux 3.3a may handle a
      // moment later, or miss (seen here under load: the pane's process a zombie of the server,
      // never reaped): a job's exit makes tmux reap every exited child. Ask again, briefly.
      if (!status && !signal) await this.live.command(runShellTrue(this.pane)).catch(() => undefined);
      for (let delay = 5; !status && !signal && delay <= 320; delay *= 2) {
        await new Promise<void>((resolve) => this.target.clock.after(delay, resolve));
        [, status, signal] = replyText(await this.live.command(query)).split('\t');
      }
      // tmux 3.3a discards pane output not yet written to a control client when the pane dies
      // (seen here: a program's last line, printed just before exit, never came as %output under
      // load), but its grid has it: take the final screen from tmux before reporting the exit.
      await this.resyncAfter([], 'exit').catch(() => undefined);
      const info: ExitInfo = { code: status ? Number(status) : null, signal: signal ? Number(signal) : null };
      this.listener.exit(info);
    } catch {
      /* the server went away: onClosed reports it */
    }
  }

  async capture(): Promise<PaneCapture> {
    const batch = this.snapshotBatch([], false);
    return readPaneCapture(batch, await this.live.batch(batch.commands));
  }

  private snapshotBatch(prefix: readonly TmuxCommand[], withContinue: boolean) {
    return paneSnapshot(this.pane, PANE_STATE_FORMAT, { prefix, withContinue });
  }

  /**
   * Runs a snapshot batch, steering pane output around its capture (`batch.captureAt`); `use` runs
   * with the replies while later output is still held, then it is released.
   */
  private async bracketed<B, T>(batch: SnapshotBatch<B>, before: 'drop' | 'pass', use: (replies: Reply[]) => T | Promise<T>): Promise<T> {
    const client = this.live;
    if (this.phase.kind !== 'live') throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'a capture is already in flight', { name: this.target.name });
    // Replies to commands already in flight (timed-out ones included) come first.
    this.phase = { kind: 'until-reply', reply: this.repliesSeen + client.outstanding + batch.captureAt, before };
    let replies: Reply[];
    try {
      replies = await client.batch(batch.commands);
    } catch (err) {
      this.release();
      throw err;
    }
    try {
      return await use(replies);
    } finally {
      this.release();
    }
  }

  private release(): void {
    const phase = this.phase;
    this.phase = { kind: 'live' };
    if (phase.kind === 'hold') for (const data of phase.held) this.listener.output(data);
  }

  async resync(reason: string): Promise<void> {
    await this.resyncAfter([], reason);
  }

  /**
   * A resync batch, optionally preceded by commands that change the pane (they run in the same
   * batch, so the capture shows their effect and nothing the program did afterwards).
   *
   * Once the stream has been followed since attach, output before the capture is passed on, not
   * dropped: the capture supersedes its cells, but the mirror's parser must see it to know the
   * SGR pen, charsets and saved cursor the program continues from, which tmux 3.3a cannot report
   * (`PaneCapture.continuous`). After a %pause tmux has discarded output, so nothing carries.
   */
  private resyncAfter(prefix: readonly TmuxCommand[], reason: string): Promise<void> {
    return this.serial(() => this.resyncNow(prefix, reason));
  }

  /** Captures run one at a time: a %pause during a resize waits for it, then consumes the pause. */
  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.captures.then(run);
    this.captures = next.catch(() => undefined);
    return next;
  }

  private async resyncNow(prefix: readonly TmuxCommand[], reason: string): Promise<void> {
    const withContinue = this.paused;
    this.paused = false;
    const continuous = this.followed && !withContinue;
    const batch = this.snapshotBatch(prefix, withContinue);
    let capture: PaneCapture;
    try {
      capture = await this.bracketed(batch, continuous ? 'pass' : 'drop', (replies) => {
        const c: PaneCapture = { ...readPaneCapture(batch, replies), continuous };
        this.listener.resync(c, reason);
        return c;
      });
    } catch (err) {
      if (withContinue) this.paused = true; // the continue did not run: the next resync must send it
      throw err;
    }
    this.followed = true;
    if (capture.state.paneDead && !this.exited && reason !== 'exit') void this.readExit();
  }

  compareGrid<T>(compare: (grid: VisibleGrid) => T | Promise<T>): Promise<T> {
    // Output after the grid's reply is held until the comparison is done: both sides show one moment.
    return this.serial(() => {
      const batch = visibleScreen(this.pane, CURSOR_FORMAT);
      return this.bracketed(batch, 'pass', (replies) => {
        let parts;
        try {
          parts = batch.read(replies);
        } catch (err) {
          throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'incomplete grid batch', {}, { cause: err });
        }
        const [x, y] = parts.cursor.split('\t').map(Number);
        return compare({ capture: parts.capture, cursor: { x: x ?? 0, y: y ?? 0 } });
      });
    });
  }

  private async leaveMode(): Promise<void> {
    if (this.inMode) {
      await this.live.command(cancelPaneMode(this.pane));
      this.inMode = false;
    }
  }

  async sendText(text: string, opts: { readonly paste: boolean }): Promise<void> {
    await this.leaveMode();
    if (opts.paste) return this.paste(text);
    const lines = encodeSendText(this.pane, text);
    if (lines.length > 0) await this.live.batch(lines);
  }

  /**
   * Large or multi-line text: set-buffer in chunks, then a bracketed-when-asked paste, in one batch.
   * Nothing touches the disk: a host killed mid-paste leaves typed text nowhere but in tmux's
   * memory, and the next attach deletes that buffer.
   */
  private async paste(text: string): Promise<void> {
    await this.live.batch(pasteText(this.pane, text), this.target.timeoutMs + Math.ceil(text.length / 1000) * PASTE_MS_PER_KCHAR);
  }

  async sendKeys(keys: readonly string[]): Promise<void> {
    const line = encodeSendKeys(this.pane, keys);
    await this.leaveMode();
    await this.live.command(line);
  }

  /**
   * tmux and xterm reflow differently, so tmux's grid is the truth after a resize. resize-window
   * shares the resync batch: tmux resizes (and reflows) the grid while the command runs and sends
   * SIGWINCH only after the batch, so the capture is the grid at the resize point and the
   * program's whole redraw arrives after it, to be replayed onto the rebuilt mirror.
   */
  async resize(cols: number, rows: number): Promise<void> {
    await this.resyncAfter([resizeWindow(this.target.name, cols, rows)], 'resize');
  }

  /** Signals go to the pane's foreground process group, as a keyboard would, never to wrappers. */
  async signal(name: SignalName): Promise<void> {
    const root = this.pid;
    if (root === undefined || this.exited) throw new TmuxDriveError('SESSION_EXITED', `drive ${this.target.name} has no running program to signal`);
    await signalForeground(await this.host.processTree(root), name, (pids, signal) => this.host.signal(pids, signal));
  }

  /** A pid of this machine (activity sampling reads the local /proc): none for a remote drive. */
  panePid(): number | undefined {
    return this.host.remote ? undefined : this.pid;
  }

  pauseOutput(): void {
    this.client?.pauseReading();
  }

  resumeOutput(): void {
    this.client?.resumeReading();
  }

  async detach(): Promise<void> {
    this.ending = true;
    await this.replacing;
    await this.client?.detach();
  }

  async kill(): Promise<void> {
    this.ending = true;
    await this.replacing;
    const tree = this.pid === undefined ? [] : (await this.host.processTree(this.pid)).map((p) => p.pid);
    const client = this.client;
    if (client && !client.isClosed) {
      await client.command(killServer(), this.target.timeoutMs).catch(() => undefined);
      await Promise.race([client.whenClosed(), this.sleep(this.target.timeoutMs)]);
      client.terminate();
    } else if (this.host.remote || existsSync(this.socket)) {
      await runTmux(this.target, killServerArgv(this.socket)).catch(() => undefined);
    }
    const serverGone = await this.waitGone([this.serverPid].filter((p) => p > 0), 'SIGKILL');
    // Programs that daemonize leave children behind a dead server: end the whole recorded tree.
    await this.host.signal(tree, 'SIGKILL');
    const treeGone = await this.waitGone(tree, 'SIGKILL');
    await this.host.removeFile(this.socket);
    if (!serverGone || !treeGone) {
      throw new TmuxDriveError('KILL_UNVERIFIED', `drive ${this.target.name} did not end: processes still alive`, {
        alive: await this.host.alive([this.serverPid, ...tree].filter((p) => p > 0)),
      });
    }
  }

  /** Waits (bounded, with backoff) until every pid is gone; escalates to `signal` halfway. */
  private waitGone(pids: number[], signal: NodeJS.Signals): Promise<boolean> {
    const host = this.host;
    return waitGone(pids, { alive: (p) => host.alive(p), signal: (p, s) => host.signal(p, s) }, { clock: this.target.clock, timeoutMs: this.target.timeoutMs, escalation: signal });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.target.clock.after(ms, resolve));
  }

  attachCommand(readOnly: boolean): string[] {
    return this.host.attachCommand(operatorAttachArgv(this.socket, this.target.name, readOnly));
  }
}
