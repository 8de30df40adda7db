/**
 * Library errors across the socket: the host sends a TmuxDriveError's code, class name, message
 * and context (content-free by the errors' own rule); the client throws an instance of the same
 * class with the same code, so `err instanceof PolicyError` and `err.code` read the same through
 * a host as in-process. Anything that is not a TmuxDriveError is a bug: it travels as INTERNAL
 * with a fixed message (its own message may carry anything).
 */
import { ClosedError, ConfigError, PolicyError, SessionError, TmuxCommandError, TmuxDriveError, TmuxTimeoutError, UsageError, type ConfigIssue, type ErrorCode } from '../common/errors.js';
import { DataDirError } from '../driver/data-dir.js';
import { JournalError, LeaseError, type LeaseHolder } from '../../journal/journal-error.js';
import { CapabilityError, HostError } from './host-error.js';
import { JSON_RPC, type WireError, type WireErrorData } from './protocol.js';

type Context = Readonly<Record<string, unknown>>;

const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const num = (v: unknown): number => (typeof v === 'number' ? v : 0);

/** How each class is rebuilt from its code, message and context (constructors differ). */
const REBUILD: Readonly<Record<string, (code: ErrorCode, message: string, context: Context) => TmuxDriveError>> = {
  TmuxDriveError: (code, message, context) => new TmuxDriveError(code, message, { ...context }),
  PolicyError: (code, message, context) => new PolicyError(code, message, { ...context }),
  UsageError: (code, message, context) => new UsageError(code, message, { ...context }),
  SessionError: (code, message, context) => new SessionError(code, message, { ...context }),
  ClosedError: (code, message, context) => new ClosedError(code, message, { ...context }),
  JournalError: (code, message, context) => new JournalError(code, message, { ...context }),
  ConfigError: (code, message, context) => new ConfigError(message, Array.isArray(context.issues) ? (context.issues as ConfigIssue[]) : [], code === 'CONFIG_UNREADABLE' ? code : 'CONFIG_INVALID'),
  TmuxTimeoutError: (_code, _message, context) => new TmuxTimeoutError(str(context.command), num(context.timeoutMs)),
  TmuxCommandError: (_code, _message, context) => new TmuxCommandError(str(context.command), str(context.detail)),
  DataDirError: (_code, _message, context) => new DataDirError(str(context.path), str(context.reason)),
  LeaseError: (code, message, context) =>
    new LeaseError(code === 'LEASE_LOST' ? code : 'LEASE_HELD', message, str(context.sessionId), typeof context.currentToken === 'number' ? context.currentToken : null, (context.holder as LeaseHolder | undefined) ?? undefined),
  CapabilityError: (code, message, context) => new CapabilityError(code === 'TOKEN_INVALID' ? code : 'NOT_PERMITTED', message, { ...context }),
  HostError: (code, message, context) => new HostError(code === 'HOST_HELD' || code === 'HOST_LOST' || code === 'NOT_SERVING' ? code : 'PROTOCOL_ERROR', message, { ...context }),
};

function jsonSafe(context: Context): Context | undefined {
  try {
    return JSON.parse(JSON.stringify(context)) as Context;
  } catch {
    return undefined;
  }
}

/** The JSON-RPC error a thrown value becomes on the wire. */
export function toWireError(err: unknown): WireError {
  if (err instanceof TmuxDriveError) {
    const context = jsonSafe(err.context);
    const data: WireErrorData = { code: err.code, name: err.name, ...(context && Object.keys(context).length > 0 ? { context } : {}) };
    return { code: err.code === 'BAD_ARGUMENT' ? JSON_RPC.InvalidParams : JSON_RPC.ServerError, message: err.message, data };
  }
  return { code: -32603, message: 'internal error in the serving host (see its log)', data: { code: 'INTERNAL', name: 'Error' } };
}

/** The typed error a JSON-RPC error from the host stands for. */
export function fromWireError(error: WireError | undefined): TmuxDriveError {
  const data = error?.data;
  const message = typeof error?.message === 'string' ? error.message : 'the host answered with an error';
  if (!data || typeof data.code !== 'string') {
    const code = error?.code === JSON_RPC.InvalidParams ? 'BAD_ARGUMENT' : 'PROTOCOL_ERROR';
    return code === 'BAD_ARGUMENT' ? new UsageError(code, message) : new HostError('PROTOCOL_ERROR', message, { rpcCode: error?.code });
  }
  const context: Context = typeof data.context === 'object' && data.context !== null ? data.context : {};
  const rebuild = REBUILD[data.name] ?? REBUILD.TmuxDriveError;
  // A code this client does not know (a newer host) is kept as it came: it is still the machine reason.
  return (rebuild as NonNullable<typeof rebuild>)(data.code as ErrorCode, message, context);
}
