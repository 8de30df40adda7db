/**
 * One root error class; every failure carries a stable machine `code` and the context needed to
 * debug it (never secrets or screen text). Expected outcomes (a wait that times out) are values,
 * not errors: these are for broken invariants and rejected requests.
 */
export type ErrorCode =
  // configuration and requests
  | 'CONFIG_INVALID'
  | 'CONFIG_UNREADABLE'
  | 'BAD_ARGUMENT'
  | 'UNKNOWN_KEY_NAME'
  | 'BAD_SIZE'
  /** The data dir cannot be one: under /proc, through a file, not writable, too long for a socket, … */
  | 'DATA_DIR_INVALID'
  // launch policy
  | 'NOT_ALLOWED'
  | 'BINARY_NOT_FOUND'
  | 'HASH_MISMATCH'
  | 'SANDBOX_UNAVAILABLE'
  | 'LIMIT_REACHED'
  /** The allow entry says approveOnCreate and this driver has no approver (Driver.open's approveCreate). */
  | 'APPROVAL_REQUIRED'
  /** The approver said no (or failed) for a launch of an approveOnCreate entry. */
  | 'APPROVAL_DENIED'
  // tmux and the control channel
  | 'TMUX_NOT_FOUND'
  | 'TMUX_TIMEOUT'
  | 'TMUX_COMMAND_FAILED'
  | 'TMUX_START_FAILED'
  | 'CONTROL_CLOSED'
  | 'COMMAND_TOO_LARGE'
  // sessions
  | 'SESSION_NOT_FOUND'
  | 'SESSION_EXITED'
  | 'SESSION_CLOSED'
  | 'NAME_IN_USE'
  | 'DRIVER_CLOSED'
  | 'KILL_UNVERIFIED'
  | 'ABORTED'
  // the journal (journal/)
  | 'JOURNAL_TOO_NEW'
  | 'JOURNAL_UNREADABLE'
  | 'JOURNAL_CLOSED'
  | 'JOURNAL_WRITE_FAILED'
  | 'JOURNAL_BAD_VALUE'
  | 'MIGRATIONS_INVALID'
  | 'LEASE_HELD'
  | 'LEASE_LOST'
  /** Live tmux servers of the data dir that the journal does not know (it was emptied or replaced). */
  | 'JOURNAL_ORPHANS'
  // backends
  /** The session's backend cannot do this (spawn: no snapshot, no fidelity check, no operator attach). */
  | 'UNSUPPORTED'
  /** node-pty could not start the program's pty (fork or pty allocation failed). */
  | 'SPAWN_FAILED'
  // the serving host and its clients (lib/serve, lib/client)
  /** The capability token does not allow this verb, or this drive or allow entry. */
  | 'NOT_PERMITTED'
  /** No token, an unknown, revoked or expired one. */
  | 'TOKEN_INVALID'
  /** Another process serves this data dir (or in-process commands hold it): its pid is named. */
  | 'HOST_HELD'
  /** The connection to the serving host ended before the call's answer (delivery unknown). */
  | 'HOST_LOST'
  /** No host serves this data dir, and the call needs one (a scoped token, mint, revoke). */
  | 'NOT_SERVING'
  /** A message on the host's socket that is not the protocol (bad JSON, unknown method, no hello). */
  | 'PROTOCOL_ERROR'
  // one drive, several callers (lib/session input queue, lib/serve operator holds)
  /** The drive's input stayed busy with other callers' input past the caller's turn timeout. */
  | 'INPUT_BUSY'
  /** An operator has taken the drive over (console take-over, tmux-drive attach): agents' input waits for the release. */
  | 'OPERATOR_HOLD'
  // the web console (lib/console)
  /** The console could not listen on its address (in use, or not an address of this machine). */
  | 'CONSOLE_LISTEN_FAILED';

export class TmuxDriveError extends Error {
  readonly code: ErrorCode;
  readonly context: Readonly<Record<string, unknown>>;
  constructor(code: ErrorCode, message: string, context: Record<string, unknown> = {}, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.context = context;
  }
}

/** One issue of a config that failed validation, with the path of the offending key. */
export interface ConfigIssue {
  readonly path: string;
  readonly message: string;
}

export class ConfigError extends TmuxDriveError {
  readonly issues: readonly ConfigIssue[];
  constructor(message: string, issues: readonly ConfigIssue[] = [], code: 'CONFIG_INVALID' | 'CONFIG_UNREADABLE' = 'CONFIG_INVALID') {
    super(code, message, { issues });
    this.issues = issues;
  }
}

/** A request the launch policy refuses (unknown allowId, binary outside the allowlist, …). */
export class PolicyError extends TmuxDriveError {}

/** A caller passed something malformed: a bad key name, a bad size, an unknown option. */
export class UsageError extends TmuxDriveError {}

/**
 * A tmux command did not answer before its deadline (a wedged or stopped server). The command was
 * written and tmux still holds it: it may run when the server resumes, so what it does (text or
 * keys reaching the program) may still happen: `delivery` is 'unknown'. Check the screen before
 * sending again.
 */
export class TmuxTimeoutError extends TmuxDriveError {
  readonly delivery = 'unknown' as const;
  constructor(command: string, timeoutMs: number) {
    super('TMUX_TIMEOUT', `tmux did not answer "${command}" within ${timeoutMs} ms; the server may be wedged (check it with tmux-drive doctor). It may still act on it when it resumes: delivery is unknown, read the screen before sending again`, {
      command,
      timeoutMs,
      delivery: 'unknown',
    });
  }
}

/** tmux answered a command with %error; `detail` is tmux's own error text. */
export class TmuxCommandError extends TmuxDriveError {
  readonly detail: string;
  constructor(command: string, detail: string) {
    super('TMUX_COMMAND_FAILED', `tmux rejected "${command}": ${detail}`, { command, detail });
    this.detail = detail;
  }
}

/** The control channel or a session is gone; anything still queued fails with this. */
export class ClosedError extends TmuxDriveError {}

export class SessionError extends TmuxDriveError {}
