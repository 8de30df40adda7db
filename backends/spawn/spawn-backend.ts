/**
 * The program on a pty the host owns (node-pty), no tmux: for hosts without tmux and short-lived,
 * non-durable runs. The host is the terminal, so everything tmux does for a pane is done here:
 * key names become bytes (key-bytes.ts, tmux 3.3a's table), a paste is bracketed when the
 * program asked for it, the pty is resized, signals go to the foreground process group, and the
 * whole process tree is ended on kill. What needs tmux's own copy of the screen (a resync
 * snapshot, the fidelity check) or its server (an operator's attach, a re-attach after a host
 * restart) does not exist here and fails with UNSUPPORTED. docs/backends.md compares the two.
 *
 * The room (backends/spawn/): this backend, key-bytes.ts (tmux's key table as bytes) and
 * drain-before-close.ts (node-pty's lost tail). It imports lib/common, lib/control's key names,
 * the port in lib/session/backend.ts and backends/process; its default clock still comes from
 * lib/driver/system-clock.ts (the one arrow upward, kept for callers that pass none).
 */
import { accessSync, constants, statSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import nodePty from 'node-pty';
import type { IPty } from 'node-pty';
import type { Clock } from '../../lib/common/clock.js';
import type { BackendListener, DriveBackend, ExitInfo, PaneGeometry, SignalName, VisibleGrid } from '../../lib/session/backend.js';
import type { PaneCapture } from '../../lib/control/pane-capture.js';
import { normalizeKey } from '../../lib/control/encode.js';
import { ClosedError, SessionError, TmuxDriveError, UsageError } from '../../lib/common/errors.js';
import { systemClock } from '../../lib/driver/system-clock.js';
import { isSameProcessAlive, processTree, readStat, sessionMembers, signalAll, type ProcStat } from '../process/process-tree.js';
import { signalForeground } from '../process/signal-foreground.js';
import { LOCAL_PROCESSES, waitGone } from '../process/wait-gone.js';
import { drainBeforeClose, type TailReport } from './drain-before-close.js';
import { keyBytes, type KeyModes } from './key-bytes.js';

/** The terminal modes the session's emulator has parsed that change what input bytes mean. */
export interface TerminalModes extends KeyModes {
  /** DECSET 2004: a paste is wrapped in ESC[200~ … ESC[201~. */
  readonly bracketedPaste: boolean;
}

export const NORMAL_TERMINAL_MODES: TerminalModes = Object.freeze({ applicationCursorKeys: false, applicationKeypad: false, bracketedPaste: false });

export interface SpawnLaunch {
  /** argv[0] is executed directly (a LaunchPlan's argv: bwrap or `/usr/bin/env --` in front). */
  readonly argv: readonly string[];
  /** The whole environment of the program (curated by the launch plan; nothing is inherited). */
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly cols: number;
  readonly rows: number;
  /** The drive's name, for messages. */
  readonly name: string;
  readonly clock?: Clock;
  /** How long kill() waits for the process tree to be gone before KILL_UNVERIFIED (default 5000). */
  readonly timeoutMs?: number;
  /**
   * The modes the session's emulator has parsed so far (DECCKM, DECKPAM, bracketed paste), as a
   * real terminal reads its own state to encode a key or a paste. Without it every key and paste
   * is encoded as in normal mode (ESC[A for Up, a paste unbracketed).
   */
  readonly terminalModes?: () => TerminalModes | Promise<TerminalModes>;
}

/**
 * A listener that can follow a size change without a capture. Until `resized` is part of
 * BackendListener (lib/session/backend.ts), it is optional here and resize() refuses without it.
 */
export type SpawnListener = BackendListener & { resized?(geometry: PaneGeometry): void };

const DEFAULT_TIMEOUT_MS = 5000;
/** What tmux gives a pane as TERM (`default-terminal`), when the plan names none. */
const DEFAULT_TERM = 'tmux-256color';
const MAX_DIMENSION = 1000;
/** Rounds of "stop what is new in the tree" before killing: a stopped process cannot fork. */
const FREEZE_ROUNDS = 8;
const PASTE_START = Buffer.from('\x1b[200~');
const PASTE_END = Buffer.from('\x1b[201~');

function unsupported(operation: string, why: string): TmuxDriveError {
  return new TmuxDriveError('UNSUPPORTED', `the spawn backend cannot ${operation}: ${why}`, { backend: 'spawn', operation });
}

function checkLaunch(opts: SpawnLaunch): void {
  const bad = (message: string): never => {
    throw new UsageError('BAD_ARGUMENT', message, { name: opts.name });
  };
  if (opts.argv.length === 0 || opts.argv.some((a) => typeof a !== 'string' || a.includes('\0'))) bad('argv must be one or more strings without NUL bytes');
  if (opts.argv[0] === '') bad('argv[0] must name a program');
  // node-pty hands strings to C as NUL-terminated: a NUL would silently cut a value short.
  for (const [k, val] of Object.entries(opts.env)) if (k.includes('\0') || k.includes('=') || val.includes('\0')) bad(`env variable "${k.replaceAll('\0', '\\0')}" is malformed`);
  if (opts.cwd.includes('\0')) bad('cwd contains a NUL byte');
  for (const [label, n] of [['cols', opts.cols], ['rows', opts.rows]] as const) {
    if (!Number.isInteger(n) || n < 2 || n > MAX_DIMENSION) throw new UsageError('BAD_SIZE', `${label} must be an integer from 2 to ${MAX_DIMENSION} (got ${String(n)})`);
  }
}

export class SpawnBackend implements DriveBackend {
  readonly kind = 'spawn';
  readonly durable = false;
  private readonly clock: Clock;
  private readonly timeoutMs: number;
  /** Start time of the pty's child: its pid is only ours while this still matches (pid reuse). */
  private readonly rootStart: number | undefined;
  private exitInfo: ExitInfo | undefined;
  private readonly exitSeen: Promise<void>;
  /** kill() or detach() has begun: input is refused from here on. */
  private ending = false;
  /** kill() finished: nothing more reaches the listener. */
  private closed = false;
  private killing: Promise<void> | undefined;
  /** Input and resizes in call order: a key must not overtake a paste waiting for the terminal modes. */
  private writes: Promise<unknown> = Promise.resolve();
  private tail: TailReport | undefined;
  private decodedWarned = false;
  /** Processes of the pty's session still alive when the program exited (background jobs, daemons). */
  private leftovers: readonly ProcStat[] = [];

  private constructor(
    private readonly pty: IPty,
    private readonly opts: SpawnLaunch,
    private readonly listener: SpawnListener,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.rootStart = readStat(pty.pid)?.startTicks;
    pty.onData((data: string | Buffer) => this.onBytes(data));
    const guarded = drainBeforeClose(
      pty,
      (bytes) => this.onBytes(bytes),
      (report) => {
        this.tail = report;
        if (report.stop !== 'EIO' && report.stop !== 'EAGAIN') this.report('pty_tail_incomplete', { stop: report.stop, bytes: report.bytes });
      },
    );
    if (!guarded) this.report('pty_tail_unguarded', { reason: 'node-pty lacks the UnixTerminal members the tail drain uses' });
    // node-pty rethrows a read error unless a second 'error' listener exists (unixTerminal.js).
    (pty as unknown as { on(event: 'error', listener: (err: NodeJS.ErrnoException) => void): void }).on('error', (err) => {
      if (err.code !== 'EIO' && err.code !== 'EAGAIN') this.report('pty_read_error', { code: err.code ?? 'unknown' });
    });
    this.exitSeen = new Promise((resolve) => {
      pty.onExit(({ exitCode, signal }) => {
        const info: ExitInfo = signal ? { code: null, signal } : { code: exitCode, signal: null };
        this.leftovers = this.sessionLeftovers();
        this.exitInfo = info;
        resolve();
        if (!this.closed) this.listener.exit(info);
      });
    });
  }

  /** Starts `argv` on a new pty. Output flows to `listener` from the next turn of the event loop. */
  static async launch(opts: SpawnLaunch, listener: SpawnListener): Promise<SpawnBackend> {
    checkLaunch(opts);
    const [file, ...args] = opts.argv as [string, ...string[]];
    // node-pty's child reports a bad cwd or program only as text on the pty and exit status 1.
    const refuse = (why: string): never => {
      throw new TmuxDriveError('SPAWN_FAILED', `could not start drive ${opts.name}: ${why}`, { name: opts.name });
    };
    try {
      if (!statSync(opts.cwd).isDirectory()) refuse(`${opts.cwd} is not a directory`);
    } catch (err) {
      if (err instanceof TmuxDriveError) throw err;
      refuse(`${opts.cwd} does not exist`);
    }
    if (isAbsolute(file)) {
      try {
        accessSync(file, constants.X_OK);
      } catch {
        refuse(`${file} is not an executable file`);
      }
    }
    let term: IPty;
    try {
      term = nodePty.spawn(file, args, {
        name: opts.env.TERM ?? DEFAULT_TERM,
        cols: opts.cols,
        rows: opts.rows,
        cwd: opts.cwd,
        env: { ...opts.env },
        // Buffers from the pty, never strings: UTF-8 is split across reads and bytes stay bytes.
        encoding: null,
      });
    } catch (err) {
      throw new TmuxDriveError('SPAWN_FAILED', `could not start drive ${opts.name} on a pty: ${err instanceof Error ? err.message : String(err)}`, { name: opts.name }, { cause: err });
    }
    return new SpawnBackend(term, opts, listener);
  }

  /** What the tail drain recovered when the pty closed (undefined until it has closed). */
  get tailReport(): TailReport | undefined {
    return this.tail;
  }

  /** The program's exit, once node-pty has reported it. */
  get exit(): ExitInfo | undefined {
    return this.exitInfo;
  }

  private onBytes(data: string | Uint8Array): void {
    if (this.closed) return;
    if (typeof data === 'string') {
      // Only if node-pty ignored `encoding: null`: the bytes are already decoded and cannot be restored.
      if (!this.decodedWarned) this.report('pty_decoded_output', {});
      this.decodedWarned = true;
      this.listener.output(Buffer.from(data, 'utf8'));
      return;
    }
    if (data.length > 0) this.listener.output(data);
  }

  private report(code: string, detail: Record<string, unknown>): void {
    if (!this.closed) this.listener.incident(code, { backend: 'spawn', ...detail });
  }

  /** Throws unless the program is running and the backend is not closing. */
  private checkLive(): void {
    if (this.ending) throw new ClosedError('SESSION_CLOSED', `drive ${this.opts.name} was killed`, { name: this.opts.name });
    if (this.exitInfo) throw new SessionError('SESSION_EXITED', `drive ${this.opts.name} has no running program (code ${this.exitInfo.code ?? 'none'}, signal ${this.exitInfo.signal ?? 'none'})`, { name: this.opts.name });
  }

  private async modes(): Promise<TerminalModes> {
    return this.opts.terminalModes ? await this.opts.terminalModes() : NORMAL_TERMINAL_MODES;
  }

  /** Runs `op` after every earlier input operation has run (each may wait for the modes). */
  private inOrder(op: () => void | Promise<void>): Promise<void> {
    const next = this.writes.then(op);
    this.writes = next.catch(() => undefined);
    return next;
  }

  /** Writes what `encode` makes of the current modes, after every earlier write. */
  private write(encode: (modes: TerminalModes) => Uint8Array): Promise<void> {
    return this.inOrder(async () => {
      const bytes = encode(await this.modes());
      this.checkLive();
      if (bytes.length > 0) this.pty.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    });
  }

  /**
   * The UTF-8 bytes of `text` (a lone surrogate becomes U+FFFD, as in the tmux encoder), as typed.
   * With `paste`, wrapped in ESC[200~ … ESC[201~ when the program enabled bracketed paste, which
   * only the emulator knows (`terminalModes`); like tmux's `paste-buffer -p -r`, the text itself is
   * not changed (LF stays LF). Resolves once node-pty has queued the bytes; node-pty writes them as
   * the pty takes them, in order.
   */
  async sendText(text: string, opts: { readonly paste: boolean }): Promise<void> {
    this.checkLive();
    const bytes = Buffer.from(text, 'utf8');
    if (bytes.length === 0) return;
    await this.write((modes) => (opts.paste && modes.bracketedPaste ? Buffer.concat([PASTE_START, bytes, PASTE_END]) : bytes));
  }

  /** Every name is checked first (UNKNOWN_KEY_NAME, as in the tmux encoder): a bad list sends nothing. */
  async sendKeys(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) throw new UsageError('BAD_ARGUMENT', 'sendKeys needs at least one key');
    const names = keys.map(normalizeKey);
    this.checkLive();
    await this.write((modes) => Buffer.concat(names.map((k) => keyBytes(k, modes))));
  }

  /**
   * There is no snapshot to rebuild from: the mirror is resized in stream order through the
   * listener (output already delivered keeps the old size and is reflowed by the emulator, as a
   * terminal does; output after it is laid out at the new size), then the pty, whose SIGWINCH
   * makes the program redraw after that point. Bytes the program wrote before the resize but the
   * host had not read yet land at the new size: a real terminal has the same window.
   */
  async resize(cols: number, rows: number): Promise<void> {
    for (const [label, n] of [['cols', cols], ['rows', rows]] as const) {
      if (!Number.isInteger(n) || n < 2 || n > MAX_DIMENSION) throw new UsageError('BAD_SIZE', `${label} must be an integer from 2 to ${MAX_DIMENSION} (got ${String(n)})`);
    }
    this.checkLive();
    const resized = this.listener.resized?.bind(this.listener);
    if (!resized) throw unsupported('resize', 'the session cannot follow a size change without a capture (BackendListener.resized)');
    await this.inOrder(() => {
      this.checkLive();
      resized({ cols, rows });
      this.pty.resize(cols, rows);
    });
  }

  /**
   * What is left of the pty's session once its leader (the pty's child) is reaped. Its id is the
   * leader's pid, which the kernel does not hand out again while any member lives; so if that pid
   * is in use again, nothing of the session is left.
   */
  private sessionLeftovers(): ProcStat[] {
    if (this.rootStart === undefined || readStat(this.pty.pid) !== undefined) return [];
    return sessionMembers(this.pty.pid).filter((p) => p.startTicks >= (this.rootStart as number));
  }

  /** The pty's child, while it is still the process we started (its pid may be reused after). */
  private rootTree(): ProcStat[] {
    if (this.exitInfo || this.rootStart === undefined) return [];
    const tree = processTree(this.pty.pid);
    return tree[0]?.startTicks === this.rootStart ? tree : [];
  }

  /** Signals go to the pty's foreground process group, as a keyboard would, never to wrappers. */
  async signal(name: SignalName): Promise<void> {
    this.checkLive();
    const all = this.rootTree();
    if (all.length === 0) throw new SessionError('SESSION_EXITED', `drive ${this.opts.name} has no running program to signal`, { name: this.opts.name });
    await signalForeground(all, name, signalAll);
  }

  capture(): Promise<PaneCapture> {
    return Promise.reject(unsupported('capture the pane', 'no terminal server holds a copy of the screen; the mirror is the only one'));
  }

  resync(_reason: string): Promise<void> {
    return Promise.reject(unsupported('resync', 'no terminal server holds a copy of the screen to rebuild the mirror from'));
  }

  compareGrid<T>(_compare: (grid: VisibleGrid) => T | Promise<T>): Promise<T> {
    return Promise.reject(unsupported('check fidelity', 'there is no second copy of the screen to compare the mirror with'));
  }

  /** The pty child's host pid while it runs; undefined after it exited (the pid may be reused). */
  panePid(): number | undefined {
    return this.rootTree().length > 0 ? this.pty.pid : undefined;
  }

  pauseOutput(): void {
    if (!this.closed) this.pty.pause();
  }

  resumeOutput(): void {
    if (!this.closed) this.pty.resume();
  }

  /**
   * Ends the program's whole process tree and verifies it is gone. The tree is frozen first
   * (SIGSTOP, repeated until nothing new appears, so nothing forks during the kill), together with
   * the pty session's other members (what double-forked out of the tree without setsid), then
   * SIGKILLed; after the program exited on its own, what was left of its session then. A process
   * that called setsid() and left the tree is only reachable through a pid namespace: the bwrap
   * launch has one, and its processes die with it. Idempotent.
   */
  kill(): Promise<void> {
    this.killing ??= this.killNow();
    return this.killing;
  }

  private async killNow(): Promise<void> {
    this.ending = true;
    const doomed = new Map<number, ProcStat>();
    const root = this.rootTree()[0];
    // The session id stays the root's pid, and cannot name another session while a member lives.
    const pinned = root !== undefined || this.leftovers.some((p) => isSameProcessAlive(p));
    const sid = this.pty.pid;
    for (let round = 0; pinned && round < FREEZE_ROUNDS; round++) {
      const seeds = root ? [root] : this.leftovers.filter((p) => isSameProcessAlive(p));
      const found = [...seeds.flatMap((p) => processTree(p.pid)), ...sessionMembers(sid)];
      const fresh = found.filter((p) => !doomed.has(p.pid) && p.pid !== process.pid);
      if (fresh.length === 0) break;
      for (const p of fresh) doomed.set(p.pid, p);
      signalAll(fresh.map((p) => p.pid), 'SIGSTOP');
    }
    const targets = [...doomed.values()];
    signalAll(targets.map((p) => p.pid), 'SIGKILL');
    const gone = await waitGone(targets, LOCAL_PROCESSES, { clock: this.clock, timeoutMs: this.timeoutMs, escalation: 'SIGKILL' });
    // node-pty reaps the child and closes the master (the tail drain runs then); bounded, since a
    // survivor would keep the slave open.
    await Promise.race([this.exitSeen, this.sleep(this.timeoutMs)]);
    this.closed = true;
    if (!gone) {
      throw new TmuxDriveError('KILL_UNVERIFIED', `drive ${this.opts.name} did not end: processes still alive`, { alive: targets.filter((p) => isSameProcessAlive(p)).map((p) => p.pid) });
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.clock.after(ms, resolve));
  }

  /** A non-durable drive cannot outlive its host's hold on it: detaching ends it, verified. */
  async detach(): Promise<void> {
    await this.kill();
  }

  attachCommand(_readOnly: boolean): string[] {
    throw unsupported('give an attach command', 'the pty belongs to this host process and no terminal server exists to attach to; use the tmux backend for operator takeover');
  }
}
