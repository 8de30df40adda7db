/**
 * The journal's typed errors. Messages and contexts never carry a rejected value: a value the
 * journal refuses may be exactly the secret it refuses to store, so errors name the field, the
 * rule and the length, not the content.
 */
import { TmuxDriveError, type ErrorCode } from '../lib/common/errors.js';

export class JournalError extends TmuxDriveError {
  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(code, message, context, options);
  }
}

/** Who holds a lease: a process, named by its pid and its start time (so a reused pid is not it). */
export interface LeaseHolder {
  readonly pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot at which the process started. */
  readonly startTime: number;
}

/** LEASE_HELD (another live process drives the session) or LEASE_LOST (our token is stale). */
export class LeaseError extends JournalError {
  readonly sessionId: string;
  /** LEASE_HELD: the live holder. */
  readonly holder?: LeaseHolder;
  /** The lease's current fencing token (null when nobody holds it). */
  readonly currentToken: number | null;
  constructor(code: 'LEASE_HELD' | 'LEASE_LOST', message: string, sessionId: string, currentToken: number | null, holder?: LeaseHolder) {
    super(code, message, { sessionId, currentToken, ...(holder ? { holder } : {}) });
    this.sessionId = sessionId;
    this.currentToken = currentToken;
    if (holder) this.holder = holder;
  }
}
