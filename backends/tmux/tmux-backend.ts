/**
 * The default backend: one detached tmux server per drive, driven through one control client.
 * The rooms behind it (connection, handshake, resyncs, input, exit, the server's life) are listed
 * in README.md.
 * It may import lib/common, lib/control, lib/session/backend.ts (the port it implements) and
 * backends/process; never lib/session's other rooms, lib/driver, journal/ or another backend.
 */
import { TmuxDriveError } from '../../lib/common/errors.js';
import type { ExitInfo } from '../../lib/common/exit-info.js';
import type { PaneCapture } from '../../lib/control/pane-capture.js';
import type { ControlEvent, PaneId } from '../../lib/control/parser.js';
import { PANE_DIED_MARKER, operatorAttachArgv, refreshClientContinue, resizeWindow } from '../../lib/control/tmux-commands.js';
import type { BackendListener, DriveBackend, SignalName, VisibleGrid } from '../../lib/session/backend.js';
import { signalForeground } from '../process/signal-foreground.js';
import { DEAD_SUBSCRIPTION } from './attach-handshake.js';
import { ControlChannel, type AdoptedClient } from './control-channel.js';
import { OperatorClients } from './operator-clients.js';
import { PaneExitReader } from './pane-exit.js';
import { PaneInput } from './pane-input.js';
import { PaneResync } from './pane-resync.js';
import { PauseProbe } from './pause-probe.js';
import { endServer, startServer, type ServerLaunch } from './server-life.js';
import { hostOf, socketPathFor, type TmuxHost, type TmuxTarget } from './tmux-host.js';

/** Control-client incidents after which its stream is not trusted: the channel is replaced. */
const UNTRUSTED_STREAM: ReadonlySet<string> = new Set(['framing-mismatch', 'orphan-end']);

/** The pane's argv enters the working directory itself (tmux's `-c` is format-expanded). */
export type TmuxLaunch = ServerLaunch;

export type { AdoptedClient } from './control-channel.js';

export class TmuxBackend implements DriveBackend {
  readonly kind = 'tmux';
  readonly durable = true;
  readonly socket: string;
  /** The control client the drive talks through, and its replacement. */
  private readonly channel: ControlChannel;
  private pane: PaneId = '%0';
  private serverPid = -1;
  private pid: number | undefined;
  /** Pane output reaches the listener through it; it owns captures and resyncs. */
  private readonly sync: PaneResync;
  private readonly operatorClients: OperatorClients;
  private readonly input: PaneInput;
  /** The program's exit, read once tmux reports the pane dead. */
  private readonly exitReader: PaneExitReader;
  private readonly pauseProbe: PauseProbe;
  private exited = false;
  private ending = false;
  /**
   * Settled once launch() or attach() has finished connecting: a program that exits at once is
   * reported at once, but its cleanup waits, or it would kill the server under the launch.
   */
  private readonly connected: Promise<void>;
  private markConnected: () => void = () => undefined;
  /** The server's end (kill, or the cleanup after a clean exit), verified. */
  private ended: Promise<void> | undefined;

  private readonly host: TmuxHost;

  private constructor(private readonly target: TmuxTarget, private readonly listener: BackendListener) {
    this.socket = socketPathFor(target.socketDir, target.name);
    this.connected = new Promise((resolve) => {
      this.markConnected = resolve;
    });
    this.host = hostOf(target);
    this.sync = new PaneResync({
      drive: target.name,
      client: () => this.channel.live,
      pane: () => this.pane,
      listener,
      paneDead: () => this.exitReader.check(),
    });
    this.channel = new ControlChannel({
      target,
      host: this.host,
      socket: this.socket,
      listener,
      sync: this.sync,
      ending: () => this.ending,
      onEvent: (event) => this.onEvent(event),
      onClosed: (reason) => this.onClosed(reason),
      identified: (attached) => {
        this.serverPid = attached.serverPid;
        this.pane = attached.pane;
        this.pid = attached.pid;
      },
      operatorsFound: (names) => this.operatorClients.found(names),
    });
    this.operatorClients = new OperatorClients((names) => listener.operators(names));
    this.input = new PaneInput({ client: () => this.channel.live, pane: () => this.pane, timeoutMs: target.timeoutMs });
    this.pauseProbe = new PauseProbe({ clock: target.clock, probe: () => this.channel.live.command(refreshClientContinue(this.pane)) });
    this.exitReader = new PaneExitReader({
      command: async (command) => (await this.channel.live.command(command)).text(),
      pane: () => this.pane,
      clock: target.clock,
      processGone: async () => this.pid === undefined || (await this.host.alive([this.pid])).length === 0,
      report: (exit) => this.reportExit(exit),
    });
  }

  /** Starts a new detached server running `argv` and attaches to it. */
  static async launch(launch: TmuxLaunch, listener: BackendListener): Promise<TmuxBackend> {
    const backend = new TmuxBackend(launch, listener);
    await startServer(backend.host, launch, backend.socket);
    return backend.connectOnce(() => backend.channel.connect());
  }

  /**
   * Attaches to a drive whose server already runs (re-attach after a host restart). A dead host's
   * `tmux -C` stays attached in tmux 3.3a and freezes the pane (reference §7): the caller holds the
   * drive's lease, so every other control client found is stale and is ended by pid once ours is attached.
   */
  static async attach(target: TmuxTarget, listener: BackendListener): Promise<TmuxBackend> {
    const backend = await new TmuxBackend(target, listener).connectOnce((b) => b.channel.connect(true));
    // A program that ended while no host was attached: its exit is known before the caller sees
    // the drive, so a re-opened host never lists it live (and a clean one is cleaned up now).
    await backend.exitReader.settled();
    return backend;
  }

  /**
   * Adopts a hot standby's observer client (tmux-observer.ts) as this drive's control client once
   * the caller holds the drive's lease: no process to start and no attach to wait for; the client
   * is made read-write, stale clients are ended as in attach(), and the first resync turns pane
   * output on inside its batch, so the rebuilt mirror has no gap and no overlap.
   */
  static async adopt(target: TmuxTarget, listener: BackendListener, observer: AdoptedClient): Promise<TmuxBackend> {
    const backend = await new TmuxBackend(target, listener).connectOnce((b) => b.channel.connect(true, observer));
    await backend.exitReader.settled();
    return backend;
  }

  /** The first connect: the drive counts as connected (kill() may go on) whether it worked or not. */
  private async connectOnce(connect: (backend: this) => Promise<void>): Promise<this> {
    try {
      await connect(this);
    } finally {
      this.markConnected();
    }
    return this;
  }

  private onEvent(event: ControlEvent): void {
    switch (event.kind) {
      case 'output':
        if (event.pane === this.pane) {
          this.sync.output(event.data);
          this.pauseProbe.output(event.data.length, event.ageMs);
        }
        return;
      case 'reply':
        this.sync.replyEnded();
        return;
      case 'notification':
        if (event.name === 'pause' && event.pane === this.pane) {
          this.pauseProbe.paused();
          this.resyncPaused();
        } else if (event.name === 'continue' && event.pane === this.pane && this.pauseProbe.probing) {
          // tmux had paused the pane without telling us (pause-probe.ts): it dropped output since.
          this.listener.incident('pause_unannounced', {});
          this.resyncPaused();
        } else if (event.name === 'subscription-changed' && event.subscription === DEAD_SUBSCRIPTION && event.value.startsWith('1')) {
          this.exitReader.check();
        } else if (event.name === 'client-session-changed') {
          this.operatorClients.sessionChanged(event.client);
        } else if (event.name === 'client-detached') {
          this.operatorClients.detached(event.client);
        } else if (event.name === 'pane-mode-changed' && event.pane === this.pane) {
          void this.input.refreshMode();
        }
        return;
      case 'stray': {
        const text = new TextDecoder().decode(event.line);
        if (text.startsWith(`${PANE_DIED_MARKER} ${this.pane}`)) this.exitReader.check();
        else this.listener.incident('stray_line', { length: event.line.length });
        return;
      }
      case 'unknown':
        this.listener.incident('unknown_notification', { length: event.line.length });
        return;
      case 'incident':
        this.listener.incident(`control_${event.code}`, { length: event.line.length });
        if (UNTRUSTED_STREAM.has(event.code)) void this.channel.replace(event.code);
        return;
      default:
        return;
    }
  }

  /** tmux paused the pane: what it dropped since is recovered from a capture. */
  private resyncPaused(): void {
    this.sync.pause();
    void this.resync('pause').catch((err: unknown) => this.listener.incident('resync_failed', { reason: 'pause', error: String(err) }));
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

  private async reportExit(exit: ExitInfo): Promise<void> {
    this.exited = true;
    // tmux 3.3a discards pane output not yet written to a control client when the pane dies
    // (seen here: a program's last line, printed just before exit, never came as %output under
    // load), but its grid has it: take the final screen from tmux before reporting the exit.
    await this.sync.resync([], 'exit').catch(() => undefined);
    this.listener.exit(exit);
    // A clean exit with its status and final screen taken leaves nothing to look at in tmux: the
    // server and its socket go now, verified (seed 001), instead of piling up until kill().
    // Any other end keeps the dead pane for an operator until kill() or prune.
    if (exit.code === 0) {
      await this.connected;
      await this.kill().catch((err: unknown) => this.listener.incident('cleanup_failed', { code: err instanceof TmuxDriveError ? err.code : 'unknown' }));
    }
  }

  capture(): Promise<PaneCapture> {
    return this.sync.capture();
  }

  resync(reason: string): Promise<void> {
    return this.sync.resync([], reason);
  }

  compareGrid<T>(compare: (grid: VisibleGrid) => T | Promise<T>): Promise<T> {
    return this.sync.compareGrid(compare);
  }

  /** Written to tmux within this call unless a copy mode must be left first (pane-input.ts). */
  sendText(text: string, opts: { readonly paste: boolean }): Promise<void> {
    return this.input.sendText(text, opts);
  }

  sendKeys(keys: readonly string[]): Promise<void> {
    return this.input.sendKeys(keys);
  }

  /**
   * tmux and xterm reflow differently, so tmux's grid is the truth after a resize. resize-window
   * shares the resync batch: tmux resizes (and reflows) the grid while the command runs and sends
   * SIGWINCH only after the batch, so the capture is the grid at the resize point and the
   * program's whole redraw arrives after it, to be replayed onto the rebuilt mirror.
   */
  async resize(cols: number, rows: number): Promise<void> {
    await this.sync.resync([resizeWindow(this.target.name, cols, rows)], 'resize');
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
    this.channel.current?.pauseReading();
  }

  resumeOutput(): void {
    this.channel.current?.resumeReading();
  }

  async detach(): Promise<void> {
    // A clean exit's cleanup under way finishes (verified) rather than being cut off.
    if (this.ended) return this.ended.catch(() => undefined);
    this.ending = true;
    this.exitReader.dispose();
    this.pauseProbe.stop();
    await this.channel.replacement;
    await this.channel.current?.detach();
  }

  /** Ends the program, its tree and the server, verified; once (a second call gets the first's result). */
  kill(): Promise<void> {
    this.ended ??= this.end();
    return this.ended;
  }

  private async end(): Promise<void> {
    this.ending = true;
    this.exitReader.dispose();
    this.pauseProbe.stop();
    await this.channel.replacement;
    await endServer({ host: this.host, target: this.target, socket: this.socket, client: this.channel.current, serverPid: this.serverPid, pid: this.pid });
  }

  attachCommand(readOnly: boolean): string[] {
    return this.host.attachCommand(operatorAttachArgv(this.socket, this.target.name, readOnly));
  }
}
