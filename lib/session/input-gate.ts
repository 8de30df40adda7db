/**
 * The one gate between a session and its program. Every action that reaches the program — a
 * caller's text, keys, resize or signal, an auto-answer, the cost limit's interrupt, a kill —
 * passes `admit` (or `deliver`, the keystroke path's form of it): the drive is live, this process
 * still holds it (the lease: one drive, one driver), the interaction cap allows it, and the action
 * is audited. A caller's request is counted
 * against `maxRequestsPerSession` once, by the verb it called; what the session does on its own
 * (an auto-answer, the waits inside a send) is never a request.
 *
 * Audit records are written in the order the actions were delivered: a caller's keys are recorded
 * at the drive's first output after them, or shortly after tmux answered when none comes (see
 * `deliver`), and every other action first writes the records still waiting, then its own.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import { PolicyError } from '../common/errors.js';
import type { DriveBackend } from './backend.js';
import type { DriveSignals } from './drive-signals.js';
import type { SessionAction } from './session-events.js';

export type ActionTags = Readonly<Record<string, string | number | boolean>>;

export interface InputGateOptions {
  /** Throws when this process may not drive the session (the driver's lease check). */
  readonly beforeInput: () => void;
  /** The audit of every action (payload not yet redacted). */
  readonly onAction: (kind: SessionAction, payload: string, tags: ActionTags) => void;
  readonly limits: { readonly maxInteractions?: number; readonly maxRequestsPerSession?: number };
  /** Another input waits for its turn (the input queue): a settled send's record is written at once, so the turn passes. */
  readonly othersWaiting?: () => boolean;
}

/**
 * How long after tmux's answer a keystroke's record waits for the drive's next output (its echo,
 * usually) before it is written anyway; the caller's call settles once it is written.
 */
export const RECORD_WAIT_MS = 5;

/**
 * The most of a send's output kept for a text wait begun after its call settled (see
 * `outputOfSend`); past it the wait looks at the screen for what came before it, as it did.
 */
export const SEND_OUTPUT_KEPT_BYTES = 256 * 1024;

/** A caller's keys delivered, their audit record not yet written (see InputGate.deliver). */
interface PendingRecord {
  readonly action: SessionAction;
  readonly payload: string;
  readonly tags: ActionTags;
  /** Set once written or failed. */
  done: boolean;
  /** Set when its write failed: the caller of those keys gets this error. */
  failed?: unknown;
  /** The caller's call, waiting for the record once its send settled. */
  settle?: () => void;
}

export class InputGate {
  private requests = 0;
  /** The last audit write failed: audit before delivering (see deliver) until one succeeds. */
  private auditFirst = false;
  /** Records of delivered keys not written yet, in delivery order. */
  private readonly pending: PendingRecord[] = [];
  /** Writes the pending records when no output came RECORD_WAIT_MS after a send settled. */
  private timer: TimerHandle | undefined;
  /**
   * The output of the last keystroke send, from its delivery until its call settled: what a text
   * wait begun right after the call reads first.
   */
  private sendOutput: Uint8Array[] = [];
  private sendOutputBytes = 0;
  /** Keystroke calls delivered and not settled yet: output is added to sendOutput meanwhile. */
  private unsettled = 0;
  /** sendOutput is all the output since the last send's delivery (no output was let go since). */
  private sendOutputWhole = false;

  constructor(
    private readonly signals: DriveSignals,
    private readonly clock: Clock,
    private readonly options: InputGateOptions,
  ) {}

  /** A caller's request (a read, a wait, an input): refused with LIMIT_REACHED past the cap. */
  countRequest(): void {
    this.requests += 1;
    const cap = this.options.limits.maxRequestsPerSession;
    if (cap !== undefined && this.requests > cap) {
      throw new PolicyError('LIMIT_REACHED', `limits.maxRequestsPerSession (${cap}) reached for session ${this.signals.id}`, { cap: 'limits.maxRequestsPerSession', id: this.signals.id });
    }
  }

  /**
   * Lets one action through to the program, or throws: the drive must be live and held by this
   * process; an `interaction` (a caller's text or keys) must be under `maxInteractions`. The action
   * is audited once it is let through; the caller delivers it with the backend returned.
   */
  admit(action: SessionAction, payload: string, tags: ActionTags, interaction = false): DriveBackend {
    const backend = this.check(interaction);
    this.writePending();
    this.letSendOutputGo();
    this.audit(action, payload, tags, interaction);
    return backend;
  }

  /** Live, held by this process (the lease), and under the interaction cap: the backend to deliver with. */
  private check(interaction: boolean): DriveBackend {
    const backend = this.signals.liveBackend();
    this.options.beforeInput();
    const cap = this.options.limits.maxInteractions;
    if (interaction && cap !== undefined && this.signals.interactions >= cap) {
      throw new PolicyError('LIMIT_REACHED', `limits.maxInteractions (${cap}) reached for session ${this.signals.id}: no more input is accepted`, { cap: 'limits.maxInteractions', id: this.signals.id });
    }
    return backend;
  }

  private audit(action: SessionAction, payload: string, tags: ActionTags, interaction: boolean): void {
    this.options.onAction(action, payload, tags);
    // A caller's text or keys: whoever was waited for has answered (or someone answers for them).
    if (interaction) this.signals.awaitingPerson = undefined;
  }

  /**
   * A caller's text or keys (and submit's Enter), on the keystroke path: the same checks as
   * `admit`, then `send` writes to the program within its call (the tmux backend does unless it
   * must leave a copy mode first). The audit record is written at the end of the drive's first
   * output event after that write (`afterOutput`: the keys' echo, usually, its listeners served
   * first), or RECORD_WAIT_MS after the send settled (for tmux, once tmux answered the command)
   * when none came by then; at once when the send settles while another input waits for its turn
   * (keys sent one after another without waiting go at tmux's pace, not the echo's); also when
   * the send fails, and before any other action or letting the drive go (`writePending`). The
   * caller's promise settles once the record is written. A
   * `write(2)` on the keystroke's way, before the echo, cost the echo ~0.05–0.1x of tmux's round
   * trip on the bench VM; in the turn that already handles the echo, nothing measurable
   * (docs/security.md §5). When the audit write fails the keys were delivered and the caller gets
   * the audit's error; every action after that is audited before it is delivered (refused while
   * the audit still fails) until an audit write succeeds again.
   */
  deliver(action: SessionAction, payload: string, tags: ActionTags, interaction: boolean, send: (backend: DriveBackend) => Promise<void>): Promise<void> {
    if (this.auditFirst) {
      const backend = this.admit(action, payload, tags, interaction);
      this.auditFirst = false;
      return send(backend);
    }
    const backend = this.check(interaction);
    const sending = send(backend);
    // A caller's text or keys: whoever was waited for has answered (or someone answers for them).
    if (interaction) this.signals.awaitingPerson = undefined;
    const record: PendingRecord = { action, payload, tags, done: false };
    this.pending.push(record);
    this.sendOutput = [];
    this.sendOutputBytes = 0;
    this.sendOutputWhole = true;
    this.unsettled += 1;
    return sending.then(
      () => {
        if (record.done) return this.settled(record);
        if (!this.options.othersWaiting?.()) return this.awaitRecord(record);
        this.writePending();
        return this.settled(record);
      },
      (error: unknown) => {
        this.unsettled -= 1;
        this.writePending();
        throw error;
      },
    );
  }

  /** The send settled before its record was written: the record waits for the next output, or the timer. */
  private awaitRecord(record: PendingRecord): Promise<void> {
    this.timer ??= this.clock.after(RECORD_WAIT_MS, () => {
      this.timer = undefined;
      this.writePending();
    });
    return new Promise<void>((resolve) => (record.settle = resolve)).then(() => this.settled(record));
  }

  /** A written record's call settles now (output after this is not the send's), or gets the audit's error. */
  private settled(record: PendingRecord): void {
    this.unsettled -= 1;
    if (record.failed !== undefined) throw record.failed;
  }

  /**
   * The drive's output event has been handled (its listeners ran): records waiting are written now.
   * The chunk is kept for a text wait while the last send's call has not settled (calls settle in
   * the microtasks after this turn, so all output handled before the caller's next step is kept).
   */
  afterOutput(data: Uint8Array): void {
    if (this.sendOutputWhole) {
      this.sendOutputBytes += data.length;
      if (this.unsettled > 0 && this.sendOutputBytes <= SEND_OUTPUT_KEPT_BYTES) this.sendOutput.push(data);
      else this.letSendOutputGo();
    }
    if (this.pending.length > 0) this.writePending();
  }

  /**
   * The output since the last keystroke send was delivered, as chunks, while that is all of it:
   * its call had not settled when any of it was handled, and no output came since. A text wait
   * begun right after `await sendKeys(…)` reads
   * it first: output that came with the call's settling was handled before the wait began.
   * Undefined once other output was let go (then the screen tells what came before the wait).
   */
  outputOfSend(): readonly Uint8Array[] | undefined {
    return this.sendOutputWhole ? this.sendOutput : undefined;
  }

  private letSendOutputGo(): void {
    this.sendOutput = [];
    this.sendOutputBytes = 0;
    this.sendOutputWhole = false;
  }

  /**
   * Writes the records waiting, in delivery order; a failed write goes to its caller. Also when
   * the session lets the drive go (the keys were delivered; the audit may close next).
   */
  writePending(): void {
    if (this.timer) {
      this.timer.cancel();
      this.timer = undefined;
    }
    for (let record = this.pending.shift(); record !== undefined; record = this.pending.shift()) {
      try {
        this.options.onAction(record.action, record.payload, record.tags);
      } catch (error) {
        record.failed = error;
        this.auditFirst = true;
      }
      record.done = true;
      record.settle?.();
    }
  }

  /** kill(): also on an exited or lost drive; the lease is checked unless the drive is lost (then nobody holds it). */
  admitKill(): void {
    if (this.signals.phase !== 'lost') this.options.beforeInput();
    this.writePending();
    this.options.onAction('kill', '', {});
  }
}
