/**
 * The one gate between a session and its program. Every action that reaches the program — a
 * caller's text, keys, resize or signal, an auto-answer, the cost limit's interrupt, a kill —
 * passes `admit` (or `deliver`, the keystroke path's form of it): the drive is live, this process
 * still holds it (the lease: one drive, one driver), the interaction cap allows it, and the action
 * is audited. A caller's request is counted
 * against `maxRequestsPerSession` once, by the verb it called; what the session does on its own
 * (an auto-answer, the waits inside a send) is never a request.
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

export class InputGate {
  private requests = 0;
  /** The last audit write failed: audit before delivering (see deliver) until one succeeds. */
  private auditFirst = false;

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
   * must leave a copy mode first), then the audit record, in the same synchronous turn: the write
   * does not wait for the audit's file write, and no reply or output of the keys can be read
   * before the record is in the file. When the audit write fails the keys were delivered and the
   * caller gets the audit's error; every action after that is audited before it is delivered
   * (refused while the audit still fails) until an audit write succeeds again.
   */
  deliver(action: SessionAction, payload: string, tags: ActionTags, interaction: boolean, send: (backend: DriveBackend) => Promise<void>): Promise<void> {
    if (this.auditFirst) {
      const backend = this.admit(action, payload, tags, interaction);
      this.auditFirst = false;
      return send(backend);
    }
    const backend = this.check(interaction);
    const sending = send(backend);
    try {
      this.audit(action, payload, tags, interaction);
    } catch (error) {
      this.auditFirst = true;
      sending.catch(() => undefined);
      throw error;
    }
    return sending;
  }

  /** kill(): also on an exited or lost drive; the lease is checked unless the drive is lost (then nobody holds it). */
  admitKill(): void {
    if (this.signals.phase !== 'lost') this.options.beforeInput();
    this.options.onAction('kill', '', {});
  }
}
