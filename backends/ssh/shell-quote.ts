/**
 * POSIX shell quoting for the words ssh sends. ssh joins its remote-command argv with spaces into
 * ONE string that the remote user's login shell parses, so every word is single-quoted here and
 * the remote shell gives back exactly the argv we meant. Inside '…' every byte is literal except
 * the quote itself, written as '\'' (close, escaped quote, reopen). NUL cannot cross (C strings).
 */
import { UsageError } from '../../lib/common/errors.js';

export function shQuote(word: string): string {
  if (word.includes('\0')) throw new UsageError('BAD_ARGUMENT', 'a remote argv word cannot contain a NUL byte');
  if (/^[A-Za-z0-9_@%+=:,./-]+$/.test(word)) return word; // nothing the shell would change
  return `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The single remote command string for `argv` (what ssh's remote shell parses back into argv). */
export function remoteCommand(argv: readonly string[]): string {
  if (argv.length === 0) throw new Error('an empty remote command');
  return argv.map(shQuote).join(' ');
}
