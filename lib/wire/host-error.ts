/**
 * The typed errors of the serving host and its clients. CapabilityError: the token does not
 * allow the call (NOT_PERMITTED) or is no token at all (TOKEN_INVALID). HostError: who serves the
 * data dir (HOST_HELD, NOT_SERVING), a connection lost mid-call (HOST_LOST) or a message that is
 * not the protocol (PROTOCOL_ERROR). Messages never repeat a token or what a request carried.
 */
import { TmuxDriveError } from '../common/errors.js';

export class CapabilityError extends TmuxDriveError {
  constructor(code: 'NOT_PERMITTED' | 'TOKEN_INVALID', message: string, context: Record<string, unknown> = {}) {
    super(code, message, context);
  }
}

export class HostError extends TmuxDriveError {
  constructor(code: 'HOST_HELD' | 'HOST_LOST' | 'NOT_SERVING' | 'PROTOCOL_ERROR', message: string, context: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(code, message, context, options);
  }
}
