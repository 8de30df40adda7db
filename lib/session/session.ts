/**
 * One drive as callers see it: a backend (where the program runs), a mirror (what its screen is),
 * a transcript (what happened), waits and status. Every surface (library, CLI, MCP) goes through
 * this class: a thin facade that builds the shared DriveSignals and the rooms around it (input
 * gate, input sender, waits, reader, verdict, outcomes, auto-answer, cost guard, timers, the
 * backend listener) and keeps the public API. The room map: lib/session/README.md.
 */
import { EventEmitter } from 'node:events';
import type { Disposable } from '../common/disposable.js';
import { UsageError, SessionError } from '../common/errors.js';
import { toMachineToken } from '../common/machine-token.js';
import { compareWithCapture, type FidelityReport } from '../emulator/fidelity.js';
import { Mirror } from '../emulator/mirror.js';
import type { StringTimeoutWatch } from '../emulator/string-timeout.js';
import { GENERIC_PROFILE, type Profile } from '../perceive/profile.js';
import type { SessionStatus } from '../perceive/status.js';
import type { BackendListener, DriveBackend, ExitInfo, SignalName } from './backend.js';
import { DriveSignals, type DriveContext } from './drive-signals.js';
import type { DriveWatch } from './drive-watch.js';
import type { InputGate } from './input-gate.js';
import type { InputSender, SendTextOptions } from './input-sender.js';
import type { InputQueue, InputTurnOptions } from './input-queue.js';
import type { Outcomes } from './outcomes.js';
import { checkPaneSize } from './pane-size.js';
import { READ_MODES } from './read-modes.js';
import { ScreenReader, type CursorLine, type ReadOptions, type ReadResult } from './screen-reader.js';
import type { DriveOutcome, SessionEvents } from './session-events.js';
import { driveTranscript, type SessionInit } from './session-init.js';
import { buildRooms } from './session-rooms.js';
import type { TranscriptEntry } from './transcript.js';
import { transcriptPage } from './transcript-page.js';
import type { Verdict } from './verdict.js';
import type { WaitEngine, WaitOptions, WaitResult } from './wait.js';

export type { ReadMode, ScreenDiff, DiffRow } from './read-modes.js';
export type { CursorLine, ReadFormat, ReadOptions, ReadResult } from './screen-reader.js';
export type { SendTextOptions } from './input-sender.js';
export type { SessionInit } from './session-init.js';
export { INPUT_QUEUE_LIMITS, type InputTurnOptions } from './input-queue.js';
export { DEFAULT_WAIT_TIMEOUT_MS, MAX_WAIT_TIMEOUT_MS, type WaitOptions, type WaitResult } from './wait.js';
export type { Attention, DriveOutcome, Heartbeat, Notification, NotifyPolicy, SessionAction, SessionEvents } from './session-events.js';

const SIGNAL_NAMES: readonly SignalName[] = ['interrupt', 'terminate', 'kill', 'hangup'];

export class Session {
  readonly id: string;
  readonly allowId: string;
  readonly createdAt: number;
  readonly profile: Profile;
  /** What the backend reports into; not for callers (it would let them forge output). @internal */
  readonly listener: BackendListener;
  private readonly emitter = new EventEmitter<SessionEvents>();
  private readonly ctx: DriveContext;
  private readonly redact: boolean;
  private readonly stringTimeout: StringTimeoutWatch;
  private readonly gate: InputGate;
  private readonly input: InputSender;
  /** Callers' input to this drive, one unit at a time (input-queue.ts). */
  private readonly queue: InputQueue;
  private readonly waits: WaitEngine;
  private readonly reader: ScreenReader;
  private readonly verdict: Verdict;
  private readonly outcomes: Outcomes;
  private readonly watch: DriveWatch;
  private mirrorReleased = false;
  private readonly recorded: SessionInit['recorded'];

  constructor(init: SessionInit) {
    // Checked before the mirror exists: a refused session holds nothing.
    const readMode = init.readMode ?? 'digest';
    if (!READ_MODES.includes(readMode)) throw new UsageError('BAD_ARGUMENT', `readMode must be one of ${READ_MODES.join(', ')}`);
    this.id = init.id;
    this.allowId = init.allowId;
    this.createdAt = init.createdAt;
    this.profile = init.profile ?? GENERIC_PROFILE;
    this.redact = init.redact ?? true;
    this.recorded = init.recorded;
    const { clock } = init;
    const events = this.emitter;
    const transcript = driveTranscript(init, events);
    const signals = new DriveSignals(init.id, transcript, init.interactions ?? 0);
    const mirror = new Mirror({
      cols: init.cols,
      rows: init.rows,
      scrollback: init.scrollback,
      ...(init.parseScheduler ? { scheduler: init.parseScheduler } : {}),
      onIncident: (code, detail) => this.incident(code, detail),
    });
    const ctx: DriveContext = { id: init.id, clock, signals, mirror, transcript, events };
    this.ctx = ctx;
    const rooms = buildRooms(init, ctx, this.profile, {
      evict: (cap) => this.evict(cap),
      incident: (code, detail) => this.incident(code, detail),
      stopWatching: () => this.stopWatching(),
    });
    this.gate = rooms.gate;
    this.input = rooms.input;
    this.queue = rooms.queue;
    this.waits = rooms.waits;
    this.verdict = rooms.verdict;
    this.outcomes = rooms.outcomes;
    this.watch = rooms.watch;
    this.stringTimeout = rooms.stringTimeout;
    this.listener = rooms.listener;
    this.reader = new ScreenReader(ctx, { profile: this.profile, redact: this.redact, readMode, classify: (snap, cells) => rooms.verdict.classifyScreen(snap, cells) });
  }

  /**
   * Connects the backend (done by the driver right after launch or re-attach). `firstVerdictAfterMs`:
   * the first quiet decision waits that long (a takeover's re-attach: DriveWatch.deferQuiet).
   */
  bind(backend: DriveBackend, opts: { readonly firstVerdictAfterMs?: number } = {}): void {
    this.ctx.signals.backend = backend;
    this.emitter.emit('bound', backend);
    if (opts.firstVerdictAfterMs !== undefined) this.watch.deferQuiet(opts.firstVerdictAfterMs);
    else this.watch.armQuiet();
    this.watch.armHeartbeat();
  }

  // ---- what the drive is ---------------------------------------------------------------------

  /** The drive's verdict once there is one (done | needs-you | failed); it never changes after. */
  get outcome(): DriveOutcome | undefined {
    return this.outcomes.current;
  }

  /** The last cost reading (USD) from the profile's `cost` rule, when there is one. */
  get cost(): number | undefined {
    return this.ctx.signals.costUsd;
  }

  get backendKind(): 'tmux' | 'spawn' {
    return this.ctx.signals.backend?.kind ?? this.recorded?.backend ?? 'tmux';
  }

  get durable(): boolean {
    return this.ctx.signals.backend?.durable ?? this.recorded?.durable ?? false;
  }

  /** live | exited | failed, as driver.list() reports it. */
  get lifecycle(): 'live' | 'exited' | 'failed' {
    return this.ctx.signals.lifecycle;
  }

  get exit(): ExitInfo | undefined {
    return this.ctx.signals.exit;
  }

  get lostBecause(): string | undefined {
    return this.ctx.signals.lostReason ?? this.ctx.signals.evictedBecause;
  }

  get interactionCount(): number {
    return this.ctx.signals.interactions;
  }

  /** Operator terminals attached to the drive right now (tmux client names such as /dev/pts/3). */
  get operators(): readonly string[] {
    return this.ctx.signals.operators;
  }

  /**
   * A person holds the drive (`by`: their token id) or no longer does (undefined): while held, the
   * session answers no dialog itself (it escalates it as `dialog_operator_hold`). Set by the
   * serving host's operator holds.
   */
  setOperatorHold(by: string | undefined): void {
    this.ctx.signals.operatorHold = by;
  }

  on<E extends keyof SessionEvents>(event: E, listener: (...args: SessionEvents[E]) => void): Disposable {
    this.emitter.on(event, listener as never);
    return { dispose: () => void this.emitter.off(event, listener as never) };
  }

  /** Once the mirror is let go of: the last verdict published (a drive failed at re-attach has one), or why it closed. */
  status(): SessionStatus {
    const published = this.mirrorReleased ? this.verdict.published : undefined;
    if (published) return published;
    this.assertMirror();
    return this.verdict.status();
  }

  // ---- the public verbs -------------------------------------------------------------------------

  read(opts: ReadOptions = {}): ReadResult {
    this.gate.countRequest();
    this.assertMirror();
    return this.reader.read(opts);
  }

  /**
   * The line the cursor is on (a prompt, a composer), as read() would show its rows, for a caller
   * that types and checks: a few rows are read and redacted, where read() classifies and redacts the
   * whole screen. Ghost text is not taken out (read() reports it apart). Counts as a request.
   */
  cursorLine(opts: { readonly redact?: boolean } = {}): CursorLine {
    this.gate.countRequest();
    this.assertMirror();
    return this.reader.cursorLine(opts);
  }

  /** The mirror's digest of the visible screen (cells, cursor, alternate). */
  digest(): string {
    return this.ctx.mirror.digest();
  }

  async wait(opts: WaitOptions = {}): Promise<WaitResult> {
    this.gate.countRequest();
    this.assertMirror();
    return this.waits.wait(opts);
  }

  /**
   * Types (or pastes) `text`; with `submit`, waits for its echo and presses Enter. Input from
   * several callers is serialized: the text, its echo wait and its Enter are one unit no other
   * caller's input comes between; the `settle` wait after it is not part of the unit. Settles once
   * the keys are audited: at their first output, or 5 ms after tmux took them (InputGate.deliver).
   */
  sendText(text: string, opts: SendTextOptions & InputTurnOptions = {}): Promise<void> {
    const given = opts ?? {};
    // Typing (no turn options, no settle): the options are the unit's as they are, none rebuilt per key.
    if (given.settle === undefined && given.signal === undefined && given.turnTimeoutMs === undefined) return this.queue.run('sendText', () => this.input.sendText(text, given));
    const { settle, signal, turnTimeoutMs, ...unit } = given;
    const sent = this.queue.run('sendText', () => this.input.sendText(text, unit), { ...(signal ? { signal } : {}), ...(turnTimeoutMs !== undefined ? { turnTimeoutMs } : {}) });
    return settle !== undefined && settle > 0 ? sent.then(() => this.input.settle(settle)) : sent;
  }

  /** Presses keys (tmux key names), in turn with every other caller's input (see sendText). */
  sendKeys(keys: string | readonly string[], opts: InputTurnOptions = {}): Promise<void> {
    return this.queue.run('sendKeys', () => this.input.sendKeys(keys), opts);
  }

  async resize(cols: number, rows: number, opts: InputTurnOptions = {}): Promise<void> {
    checkPaneSize(cols, rows);
    return this.queue.run(
      'resize',
      async () => {
        this.gate.countRequest();
        const backend = this.gate.admit('resize', `${cols}x${rows}`, { cols, rows });
        this.ctx.transcript.append('resize', undefined, { cols, rows });
        await backend.resize(cols, rows);
      },
      opts,
    );
  }

  /** Sends a signal to the program, in order with the input before it (an interrupt after a submit comes after its Enter). */
  async signal(name: SignalName, opts: InputTurnOptions = {}): Promise<void> {
    if (!SIGNAL_NAMES.includes(name)) throw new UsageError('BAD_ARGUMENT', `signal must be interrupt, terminate, kill or hangup (got "${String(name)}")`);
    return this.queue.run(
      'signal',
      async () => {
        this.gate.countRequest();
        const backend = this.gate.admit('signal', name, {});
        await backend.signal(name);
      },
      opts,
    );
  }

  /** Ends the program, its process tree and its server; verified. Idempotent. */
  async kill(): Promise<void> {
    const { signals } = this.ctx;
    if (signals.phase === 'killed') return;
    this.gate.admitKill();
    const backend = signals.backend;
    signals.setPhase('killed', signals.evictedBecause ?? 'kill');
    this.stopWatching();
    try {
      if (backend) await backend.kill();
    } finally {
      this.releaseMirror();
      this.emitter.emit('closed', 'killed');
    }
  }

  /** Lets go of the drive, leaving a durable program running. */
  async detach(): Promise<void> {
    const { signals } = this.ctx;
    if (signals.phase === 'killed' || signals.phase === 'detached') return;
    const backend = signals.backend;
    this.gate.writePending();
    signals.setPhase('detached', 'detach');
    this.stopWatching();
    try {
      if (backend) await backend.detach();
    } finally {
      this.releaseMirror();
      // Detaching from a non-durable drive ends it.
      this.emitter.emit('closed', backend && !backend.durable ? 'killed' : 'detached');
    }
  }

  /**
   * The evidence, in order. With redaction on (the default), output comes back as redacted text
   * (decoded across entries) and typed input redacted too; with it off, output is the raw bytes.
   */
  transcript(opts: { after?: number; limit?: number } = {}): TranscriptEntry[] {
    return transcriptPage(this.ctx.transcript, opts, this.redact);
  }

  /**
   * Acknowledges the transcript up to `seq`. Once a consumer acknowledges, evicting evidence it has
   * not acknowledged raises an `evidence_overflow` incident (journaled) instead of passing silently.
   */
  ack(seq: number): void {
    this.ctx.transcript.ack(seq);
  }

  attachCommand(opts: { readOnly?: boolean } = {}): string[] {
    const backend = this.ctx.signals.backend;
    if (!backend) throw new SessionError('SESSION_CLOSED', 'this session has no backend');
    return backend.attachCommand(opts.readOnly ?? false);
  }

  /** Compares the mirror with tmux's own grid, cell by cell (tmux backend). */
  async fidelity(): Promise<FidelityReport> {
    const { signals, mirror } = this.ctx;
    return signals.connectedBackend().compareGrid(async (grid) => {
      await mirror.whenParsed();
      return compareWithCapture(mirror, grid.capture, grid.cursor);
    });
  }

  /** Re-reads the screen from tmux and rebuilds the mirror. */
  async resyncNow(): Promise<void> {
    await this.ctx.signals.connectedBackend().resync('requested');
  }

  // ---- for the driver ----------------------------------------------------------------------------

  /** Ends the drive because a cap fired; list() and the outcome report it failed with `evicted:<cap>` (lower-cased). @internal */
  async evict(cap: string): Promise<void> {
    const { signals, transcript } = this.ctx;
    if (signals.phase === 'killed' || signals.phase === 'lost') return;
    // The reason names the cap, as a machine token (the journal keeps lower case only).
    const reason = toMachineToken(`evicted:${cap}`);
    signals.markEvicted(reason);
    transcript.append('incident', undefined, { code: 'evicted', cap });
    this.emitter.emit('incident', 'evicted', { cap });
    this.outcomes.settle('failed', reason);
    await this.kill();
  }

  /** Marks a drive whose server is gone (found so on re-attach). @internal */
  markFailed(reason: string): void {
    this.listener.lost(reason);
  }

  /** Notes a gap in the evidence: what happened while no host was attached is not in the transcript. @internal */
  markGap(reason: string): void {
    this.ctx.transcript.append('gap', undefined, { reason });
  }

  /** The verdict an earlier host already recorded for this drive (re-attach): never emitted again. @internal */
  restoreOutcome(o: DriveOutcome): void {
    this.outcomes.restore(o);
  }

  /** The input modes the program has turned on, once everything received is parsed. @internal */
  async inputModes(): Promise<{ readonly applicationCursorKeys: boolean; readonly applicationKeypad: boolean; readonly bracketedPaste: boolean }> {
    await this.ctx.mirror.whenParsed();
    return this.ctx.mirror.inputModes;
  }

  /**
   * Lets go of a session whose launch failed before a backend was bound: its timers and its
   * mirror. A bound session ends through kill() or detach(). Idempotent. @internal
   */
  dispose(): void {
    if (this.ctx.signals.backend) return;
    this.stopWatching();
    this.releaseMirror();
  }

  /** The mirror was let go of (kill, detach or dispose): nothing of this session holds memory or timers. @internal */
  get disposed(): boolean {
    return this.mirrorReleased;
  }

  // ---- internals -----------------------------------------------------------------------------

  /** A session that let go of its mirror says why (killed, detached, evicted), not "the mirror is disposed". */
  private assertMirror(): void {
    if (this.mirrorReleased) throw this.ctx.signals.closedError() ?? new SessionError('SESSION_CLOSED', `session ${this.id} is closed`, { id: this.id });
  }

  private releaseMirror(): void {
    this.ctx.mirror.dispose();
    this.mirrorReleased = true;
  }

  private stopWatching(): void {
    this.stringTimeout.dispose();
    this.watch.stop();
  }

  private incident(code: string, detail: Record<string, unknown>): void {
    this.ctx.transcript.append('incident', undefined, { code });
    this.emitter.emit('incident', code, detail);
  }
}
