/**
 * The facts every room of a session reads and a few write, in one small object: when output last
 * came and the screen last changed, the drive's phase (changed only through `setPhase(value,
 * reason)`, which records the reason), how the program ended, the process sample and activity,
 * interactions, the cost reading, the operators attached, and the wake-up listeners waits hang
 * on. Rooms share this instead of reaching into each other.
 */
import type { Clock } from '../common/clock.js';
import { SessionError } from '../common/errors.js';
import type { Mirror } from '../emulator/mirror.js';
import type { ProcessActivity, ProcessActivitySample } from '../perceive/activity.js';
import type { DriveBackend, ExitInfo } from './backend.js';
import { OutputText } from './output-text.js';
import type { SessionEmitter } from './session-events.js';
import type { Transcript, TranscriptEntry } from './transcript.js';

/** live → exited (the program ended; its last screen stays) → killed; lost and detached end it too. */
export type DrivePhase = 'live' | 'exited' | 'lost' | 'killed' | 'detached';

/** What every room of a session is built with; the Session facade makes it once. */
export interface DriveContext {
  readonly id: string;
  readonly clock: Clock;
  readonly signals: DriveSignals;
  readonly mirror: Mirror;
  readonly transcript: Transcript;
  readonly events: SessionEmitter;
}

export class DriveSignals {
  /** When pane output last arrived. -Infinity until this host sees some: a re-attached drive is not "producing" because we arrived. */
  lastOutputAt = Number.NEGATIVE_INFINITY;
  /** When the screen last changed (output, a resize, a resync). */
  lastChangeAt = Number.NEGATIVE_INFINITY;
  /** Caller inputs so far, a previous host's included. */
  interactions: number;
  /** The process sample taken when output last stopped (its `readingTerminal` is a fact of that moment). */
  quietSample: ProcessActivitySample | undefined;
  /** What changed in the process tree since `quietSample` (busy vs hung), once stuckMs has passed. */
  activity: ProcessActivity | undefined;
  /** The last cost reading (USD) from the profile's `cost` rule. */
  costUsd: number | undefined;
  /** Operator terminals attached to the drive right now (tmux client names). */
  operators: readonly string[] = [];
  /**
   * Who holds the drive for a person right now (the serving host's operator hold: the console's
   * take-over, `tmux-drive attach` through a host), by token id; the host answers no dialog then.
   */
  operatorHold: string | undefined;
  /**
   * Why a person is owed an answer (an escalation, or a dialog nobody answered), until a caller's
   * input reaches the program: such a drive is never reaped for being idle.
   */
  awaitingPerson: string | undefined;
  /** The channel to the program, once the driver bound one. */
  backend: DriveBackend | undefined;
  /** Woken on output, a screen change, a resync and every phase change: waits hang here. */
  readonly activityListeners = new Set<() => void>();
  /**
   * Output lines, from the one in progress, that are the echo of the last input (set when input is
   * sent, counted down by the line feeds that follow): a text wait that begins now leaves them out.
   */
  echoLines = 0;
  /** ANSI-stripped output text for waits on text; output is decoded only while one listens. */
  readonly textListeners = new Set<(text: string) => void>();
  /** The decoding of output for textListeners (and of a send's output a wait reads first). */
  readonly outputText = new OutputText();
  #phase: DrivePhase = 'live';
  #exit: ExitInfo | undefined;
  #lostReason: string | undefined;
  #evictedBecause: string | undefined;

  constructor(
    readonly id: string,
    private readonly transcript: Transcript,
    interactions: number,
  ) {
    this.interactions = interactions;
  }

  get phase(): DrivePhase {
    return this.#phase;
  }

  get exit(): ExitInfo | undefined {
    return this.#exit;
  }

  get lostReason(): string | undefined {
    return this.#lostReason;
  }

  get evictedBecause(): string | undefined {
    return this.#evictedBecause;
  }

  /**
   * The one place the phase changes: the machine reason goes into the transcript (a `state`
   * entry) and every waiter wakes to look at the new phase. `exit` comes with 'exited'.
   */
  setPhase(value: DrivePhase, reason: string, exit?: ExitInfo): void {
    this.#phase = value;
    if (value === 'exited') this.#exit = exit;
    if (value === 'lost') this.#lostReason = reason;
    this.noteState({ phase: value, reason });
    this.wake();
  }

  /** A cap ended the drive: list() reports it failed with this reason, whatever its phase says. */
  markEvicted(reason: string): void {
    this.#evictedBecause = reason;
  }

  /** live | exited | failed, as driver.list() reports it. */
  get lifecycle(): 'live' | 'exited' | 'failed' {
    if (this.#evictedBecause !== undefined) return 'failed';
    if (this.#phase === 'exited' || this.#phase === 'killed') return 'exited';
    if (this.#phase === 'lost') return 'failed';
    return 'live';
  }

  /** Records a change of state (phase, classification, outcome, operators) with its tags. */
  noteState(tags: NonNullable<TranscriptEntry['tags']>): void {
    this.transcript.append('state', undefined, tags);
  }

  wake(): void {
    for (const listener of this.activityListeners) listener();
  }

  /** Since when there has been no output and no screen change. */
  get quietSince(): number {
    return Math.max(this.lastOutputAt, this.lastChangeAt);
  }

  /** Why this session no longer holds its drive (killed, detached, lost), or undefined. */
  closedError(): SessionError | undefined {
    const phase = this.#phase;
    if (this.#evictedBecause !== undefined && phase !== 'live') return new SessionError('SESSION_CLOSED', `session ${this.id} was ended by a cap (${this.#evictedBecause})`, { id: this.id });
    if (phase === 'killed' || phase === 'detached') return new SessionError('SESSION_CLOSED', `session ${this.id} was ${phase}; open it again through the driver`, { id: this.id });
    if (phase === 'lost') return new SessionError('SESSION_CLOSED', `session ${this.id} lost its drive (${this.#lostReason ?? 'unknown'})`, { id: this.id });
    return undefined;
  }

  /** The backend for input: only while the program runs. */
  liveBackend(): DriveBackend {
    const closed = this.closedError();
    if (closed) throw closed;
    const phase = this.#phase;
    if (phase === 'exited') throw new SessionError('SESSION_EXITED', `the program of session ${this.id} has exited (code ${this.#exit?.code ?? 'none'}, signal ${this.#exit?.signal ?? 'none'})`, { id: this.id });
    if (!this.backend) throw new SessionError('SESSION_CLOSED', `session ${this.id} is not connected`, { id: this.id });
    return this.backend;
  }

  /** The backend for reading tmux's side: also after the program exited (its last screen stays). */
  connectedBackend(): DriveBackend {
    if (this.#phase === 'exited' && this.backend) return this.backend;
    return this.liveBackend();
  }
}
