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
 * when tmux answers the command that delivered them (see `deliver`), and every other action first
 * writes the records still waiting for that answer, then its own.
 */
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
}

/** A caller's keys delivered, their audit record not yet written (see InputGate.deliver). */
interface PendingRecord {
  readonly action: SessionAction;
  readonly payload: string;
  readonly tags: ActionTags;
  /** Set when its write failed: the caller of those keys gets this error. */
  failed?: unknown;
}

export class InputGate {
  private requests = 0;
  /** The last audit write failed: audit before delivering (see deliver) until one succeeds. */
  private auditFirst = false;
  /** Records of delivered keys whose command tmux has not answered yet, in delivery order. */
  private readonly pending: PendingRecord[] = [];

  constructor(
    private readonly signals: DriveSignals,
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
   * must leave a copy mode first). The audit record is written when that send settles: for tmux,
   * once the read that carries tmux's answer to the command has been handled (its events
   * dispatched, the keys' echo among them when it came in the same read), before the next read
   * and before the caller's promise settles; also when the send fails. A `write(2)` on the
   * keystroke's way, before or right after the keys' write, cost the echo ~0.1x of tmux's round
   * trip on the bench VM; written here, about half of that (docs/security.md §5). When the audit
   * write fails the keys were delivered and the caller gets the audit's error; every action after
   * that is audited before it is delivered (refused while the audit still fails) until an audit
   * write succeeds again.
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
    const record: PendingRecord = { action, payload, tags };
    this.pending.push(record);
    return sending.then(
      () => {
        this.writePending();
        if (record.failed !== undefined) throw record.failed;
      },
      (error: unknown) => {
        this.writePending();
        throw error;
      },
    );
  }

  /**
   * Writes the records waiting for tmux's answer, in delivery order; a failed write goes to its
   * caller. Also when the session lets the drive go (the keys were delivered; the audit may close next).
   */
  writePending(): void {
    for (let record = this.pending.shift(); record !== undefined; record = this.pending.shift()) {
      try {
        this.options.onAction(record.action, record.payload, record.tags);
      } catch (error) {
        record.failed = error;
        this.auditFirst = true;
      }
    }
  }

  /** kill(): also on an exited or lost drive; the lease is checked unless the drive is lost (then nobody holds it). */
  admitKill(): void {
    if (this.signals.phase !== 'lost') this.options.beforeInput();
    this.writePending();
    this.options.onAction('kill', '', {});
  }
}
