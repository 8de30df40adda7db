/**
 * The one gate between a session and its program. Every action that reaches the program — a
 * caller's text, keys, resize or signal, an auto-answer, the cost limit's interrupt, a kill —
 * passes `admit`: the drive is live, this process still holds it (the lease: one drive, one
 * driver), the interaction cap allows it, and the action is audited. A caller's request is counted
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
    const backend = this.signals.liveBackend();
    this.options.beforeInput();
    const cap = this.options.limits.maxInteractions;
    if (interaction && cap !== undefined && this.signals.interactions >= cap) {
      throw new PolicyError('LIMIT_REACHED', `limits.maxInteractions (${cap}) reached for session ${this.signals.id}: no more input is accepted`, { cap: 'limits.maxInteractions', id: this.signals.id });
    }
    this.options.onAction(action, payload, tags);
    // A caller's text or keys: whoever was waited for has answered (or someone answers for them).
    if (interaction) this.signals.awaitingPerson = undefined;
    return backend;
  }

  /** kill(): also on an exited or lost drive; the lease is checked unless the drive is lost (then nobody holds it). */
  admitKill(): void {
    if (this.signals.phase !== 'lost') this.options.beforeInput();
    this.options.onAction('kill', '', {});
  }
}
