/**
 * One control-mode client (`tmux -u -S sock -C attach -t name`) over pipes: the pure parser and
 * command queue of lib/control wired to a child process. Nothing is written before
 * `%session-changed` (tmux 3.3a runs stdin commands before attach completes: "no current client").
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { ControlParser, type ControlEvent } from '../../lib/control/parser.js';
import { CommandQueue, type QueuedCommand, type Reply } from '../../lib/control/command-queue.js';
import { controlAttachArgv, observerAttachArgv } from '../../lib/control/tmux-commands.js';
import type { Clock } from '../../lib/common/clock.js';
import { ClosedError, TmuxDriveError, TmuxTimeoutError } from '../../lib/common/errors.js';
import { systemReadPacer, type PacedReader, type ReadPacer } from './read-pacer.js';

export interface ControlClientOptions {
  readonly tmuxPath: string;
  readonly socket: string;
  readonly session: string;
  readonly clock: Clock;
  readonly env: Readonly<Record<string, string>>;
  /** Deadline for attach and for each command unless a command says otherwise. */
  readonly timeoutMs: number;
  /** Every parser event, in stream order. */
  readonly onEvent: (event: ControlEvent) => void;
  /** The client process ended (EOF on its stdout); `reason` from %exit when tmux gave one. */
  readonly onClosed: (reason: string | undefined) => void;
  /**
   * How to run `tmux <args>` (the command runner): absent, tmuxPath locally with `env`; a remote
   * drive passes the ssh-wrapped argv (backends/ssh).
   */
  readonly command?: (args: readonly string[]) => TmuxRun;
  /** A hot standby's observer (read-only, no pane output): see observerAttachArgv. */
  readonly observer?: boolean;
  /**
   * Keys' echoes before the other drives' output (read-pacer.ts): absent, the process's one pacer;
   * null, every chunk is handled as it is read (the benches' baselines: raw control mode).
   */
  readonly pacer?: ReadPacer | null;
}

/** How to run one `tmux` process: the program, its argv, its whole environment and its cwd. */
export interface TmuxRun {
  readonly file: string;
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd?: string;
}

/**
 * The cwd of every local tmux process. tmux takes a client's cwd as the default for new panes, and a
 * server started by a client keeps it; `/` names nothing of the host's or a caller's.
 */
export const TMUX_CWD = '/';

export class ControlClient {
  readonly pid: number;
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly parser: ControlParser;
  private readonly queue: CommandQueue;
  private exitReason: string | undefined;
  private closed = false;
  private readonly closedPromise: Promise<void>;
  /** Where events and the close go: rewire() hands an observer's client to the backend adopting it. */
  private onEvent: ControlClientOptions['onEvent'];
  private onClosed: ControlClientOptions['onClosed'];
  private readonly pacer: ReadPacer | null;
  private readonly reader: PacedReader;
  /** Keys were written and no output has come since (the pacer holds the other drives meanwhile). */
  private awaitingEcho = false;
  /** Reading stopped by the owner (the mirror's backpressure) and by the pacer (its queue is long). */
  private heldByOwner = false;
  private heldByPacer = false;

  private constructor(private readonly opts: ControlClientOptions, ready: (err?: Error) => void) {
    this.onEvent = opts.onEvent;
    this.onClosed = opts.onClosed;
    const args = (opts.observer ? observerAttachArgv : controlAttachArgv)(opts.socket, opts.session);
    const run: TmuxRun = opts.command ? opts.command(args) : { file: opts.tmuxPath, args, env: opts.env, cwd: TMUX_CWD };
    this.child = spawn(run.file, [...run.args], {
      env: { ...run.env },
      stdio: ['pipe', 'pipe', 'pipe'],
      ...(run.cwd === undefined ? {} : { cwd: run.cwd }),
    });
    this.pid = this.child.pid ?? -1;
    this.queue = new CommandQueue((data) => this.child.stdin.write(data), opts.clock, { defaultTimeoutMs: opts.timeoutMs });
    let attached = false;
    this.parser = new ControlParser(
      (event) => {
        if (event.kind === 'reply') this.queue.onReply(event);
        else if (event.kind === 'notification' && event.name === 'session-changed' && !attached) {
          attached = true;
          ready();
        } else if (event.kind === 'notification' && event.name === 'exit') {
          this.exitReason = event.reason;
        } else if (event.kind === 'output' && this.awaitingEcho) {
          this.awaitingEcho = false;
          this.pacer?.echoed(this.reader);
        }
        this.onEvent(event);
      },
      // Reply blocks arrive in command order: the head of the queue says how the next one is framed.
      { replyFraming: () => this.queue.framingOfNext() },
    );
    this.pacer = opts.pacer === undefined ? systemReadPacer : opts.pacer;
    this.reader = {
      handle: (chunk) => this.parser.push(chunk),
      setPaused: (paused) => {
        this.heldByPacer = paused;
        this.applyHold();
      },
    };
    const { pacer, reader } = this;
    if (pacer) this.child.stdout.on('data', (chunk: Buffer) => pacer.deliver(reader, new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    else this.child.stdout.on('data', (chunk: Buffer) => this.parser.push(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength)));
    let stderr = '';
    this.child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4096) stderr += chunk.toString('utf8');
    });
    this.child.stdin.on('error', () => {
      /* EPIPE after tmux went away: reported through 'close' */
    });
    this.closedPromise = new Promise((resolve) => {
      this.child.on('close', () => {
        // Chunks the pacer still holds came before the end.
        this.pacer?.flush(this.reader);
        this.parser.end();
        this.closed = true;
        const reason = this.exitReason ?? (stderr.trim() || undefined);
        this.queue.close(new ClosedError('CONTROL_CLOSED', `tmux control client ended${reason ? `: ${reason}` : ''}`, { reason }));
        if (!attached) ready(new TmuxDriveError('TMUX_START_FAILED', `tmux control client could not attach to ${opts.session}: ${reason ?? 'no reason given'}`, { reason }));
        this.onClosed(reason);
        resolve();
      });
    });
    this.child.on('error', (err) => {
      if (!attached) ready(new TmuxDriveError('TMUX_NOT_FOUND', `cannot run ${opts.tmuxPath}: ${err.message}; install tmux (apt-get install tmux)`, {}, { cause: err }));
    });
  }

  /** Spawns the client and resolves once tmux says it is attached. */
  static attach(opts: ControlClientOptions): Promise<ControlClient> {
    return new Promise((resolve, reject) => {
      let settled = false;
      let client: ControlClient | undefined;
      const timer = opts.clock.after(opts.timeoutMs, () => {
        if (settled) return;
        settled = true;
        client?.terminate();
        reject(new TmuxTimeoutError(`attach to ${opts.session}`, opts.timeoutMs));
      });
      client = new ControlClient(opts, (err) => {
        if (settled) return;
        settled = true;
        timer.cancel();
        if (err) {
          client?.terminate();
          reject(err);
        } else resolve(client!);
      });
    });
  }

  /** From now on, events and the close go to these (an observer adopted as a driver). */
  rewire(onEvent: ControlClientOptions['onEvent'], onClosed: ControlClientOptions['onClosed']): void {
    this.onEvent = onEvent;
    this.onClosed = onClosed;
  }

  /** Commands written whose reply has not arrived yet (timed-out ones included: tmux still answers them). */
  get outstanding(): number {
    return this.queue.pending;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  command(command: string | QueuedCommand, timeoutMs?: number): Promise<Reply> {
    return this.queue.send(command, timeoutMs === undefined ? undefined : { timeoutMs });
  }

  /** Lines written in one write: tmux runs them as one batch with no pane read in between. */
  batch(commands: readonly (string | QueuedCommand)[], timeoutMs?: number): Promise<Reply[]> {
    return this.queue.sendBatch(commands, timeoutMs === undefined ? undefined : { timeoutMs });
  }

  /**
   * Keys are about to be written to the pane: until its next output (at most the pacer's
   * ECHO_WAIT_MS), the other drives' output waits, so the echo is not handled behind theirs.
   */
  expectEcho(): void {
    if (!this.pacer || this.closed) return;
    this.awaitingEcho = true;
    this.pacer.expectEcho(this.reader);
  }

  /** Stops reading stdout (backpressure from the mirror); pause-after makes tmux pause the pane. */
  pauseReading(): void {
    this.heldByOwner = true;
    this.applyHold();
  }

  resumeReading(): void {
    this.heldByOwner = false;
    this.applyHold();
  }

  private applyHold(): void {
    if (this.heldByOwner || this.heldByPacer) this.child.stdout.pause();
    else this.child.stdout.resume();
  }

  /**
   * Detaches: EOF on stdin, then read until EOF (tmux 3.3a can wedge a server on a client that
   * exits with unread output), bounded by the deadline, then SIGKILL.
   */
  async detach(): Promise<void> {
    if (this.closed) return;
    // Read until EOF (a pacer that holds this pipe lets it go once its queue is handled).
    this.heldByOwner = false;
    this.child.stdout.resume();
    this.child.stdin.end();
    const timer = this.opts.clock.after(this.opts.timeoutMs, () => this.terminate());
    await this.closedPromise;
    timer.cancel();
  }

  whenClosed(): Promise<void> {
    return this.closedPromise;
  }

  terminate(): void {
    if (!this.closed) this.child.kill('SIGKILL');
  }
}
