/**
 * The bare argument positions of tmux's commands, checked for tmux-commands.ts (the one module that
 * writes tmux command text; this file writes none, and test/security/hostile-input says so): pane
 * and window ids, our session names and their targets, our buffer and subscription names, fixed
 * formats, window sizes and counts. Each returns the word as
 * tmux must see it, or throws UsageError (BAD_ARGUMENT, BAD_SIZE) before any line is built. These
 * positions are written bare, unquoted, because tmux compares or expands them; free text is quoted
 * by encode.ts instead.
 */
import { UsageError } from '../common/errors.js';
import { isPaneId, isWindowId, type PaneId, type WindowId } from './ids.js';

/** A drive's session name: also a tmux target and a socket file stem, so plain characters only. */
const SESSION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
/** Paste buffers this library owns; `list-buffers -f` compares against them inside a format. */
const BUFFER_NAME = /^td-[a-z0-9-]{1,40}$/;
/** A subscription name (`refresh-client -B name:…`). */
const SUBSCRIPTION_NAME = /^[a-z][a-z0-9-]{0,31}$/;
/** A format made only of `#{variable}` items separated by TABs: nothing a caller wrote, nothing that runs. */
const FIXED_FORMAT = /^#\{[a-z_]+\}(\t#\{[a-z_]+\})*$/;
/** tmux 3.3a's window size limits (WINDOW_MINIMUM, WINDOW_MAXIMUM). */
const MAX_DIMENSION = 10_000;

export type SessionName = string;

export function bad(message: string, context: Record<string, unknown> = {}): UsageError {
  return new UsageError('BAD_ARGUMENT', message, context);
}

export function isSessionName(name: unknown): name is SessionName {
  return typeof name === 'string' && SESSION_NAME.test(name);
}

export function pane(target: PaneId): PaneId {
  if (typeof target !== 'string' || !isPaneId(target)) throw bad(`"${String(target)}" is not a pane id (expected %N)`, { target });
  return target;
}

export function window(target: WindowId): WindowId {
  if (typeof target !== 'string' || !isWindowId(target)) throw bad(`"${String(target)}" is not a window id (expected @N)`, { target });
  return target;
}

export function session(name: SessionName): SessionName {
  // tmux format-expands `new-session -s` and matches targets by prefix and pattern: plain names only.
  if (!isSessionName(name)) throw bad(`"${String(name)}" is not a valid session name (1-48 letters, digits, "_" or "-", starting with a letter or digit)`, { name });
  return name;
}

/**
 * A session as a target: `=name:` is that exact session (its current window and pane). A bare name
 * is matched as a prefix or a pattern, and one of digits as an index (measured on 3.3a: `-t 0`
 * found the session "1a", not "0").
 */
export function sessionTarget(name: SessionName): string {
  return `=${session(name)}:`;
}

export function paneOrSession(target: PaneId | SessionName): string {
  return typeof target === 'string' && isPaneId(target) ? target : sessionTarget(target);
}

export function buffer(name: string): string {
  if (typeof name !== 'string' || !BUFFER_NAME.test(name)) throw bad(`"${String(name)}" is not a tmux-drive buffer name`, { name });
  return name;
}

export function subscription(name: string): string {
  if (typeof name !== 'string' || !SUBSCRIPTION_NAME.test(name)) throw bad(`"${String(name)}" is not a subscription name`, { name });
  return name;
}

export function fixedFormat(format: string): string {
  if (typeof format !== 'string' || !FIXED_FORMAT.test(format)) throw bad('a format here is a TAB-separated list of #{variable} items', { format });
  return format;
}

export function dimension(n: number, label: string): number {
  if (!Number.isInteger(n) || n < 1 || n > MAX_DIMENSION) throw new UsageError('BAD_SIZE', `${label} must be an integer from 1 to ${MAX_DIMENSION} (got ${String(n)})`);
  return n;
}

export function wholeNumber(n: number, label: string, max: number): number {
  if (!Number.isInteger(n) || n < 0 || n > max) throw bad(`${label} must be an integer from 0 to ${max} (got ${String(n)})`);
  return n;
}
