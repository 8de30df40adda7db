/**
 * Command-line encoding for tmux 3.3a's control-mode lexer (cmd-parse.y). Rules chosen:
 * - Every argument is single-quoted: inside single quotes nothing is special (no `#` comments,
 *   `;` separators, `$VAR`/`~` expansion, `\` escapes or `%directives`), and `'` is written `'\''`.
 * - LF and NUL cannot be quoted (LF ends the command line; NUL ends tmux's C string), so quote()
 *   rejects them and encodeSendText() sends every C0 control byte and DEL as `send-keys -H`.
 * - A leading `-` is read as a flag even when quoted, so free text always follows `--`.
 * - Each command stays far below the ~10,000-token yacc stack limit ("yacc stack overflow") and
 *   iTerm2's ~1000-character habit: ~1000 characters or hex arguments per command.
 * See docs/protocol.md for the measurements behind the key table.
 */
import { UsageError } from '../errors.js';
import { isPaneId, type PaneId } from './ids.js';

/** Characters per `send-keys -l` command; tmux 3.3a accepted 1 MB lines, 1000 keeps each fast. */
export const MAX_TEXT_CHUNK_CHARS = 1000;
/** Hex arguments per `send-keys -H`: 5,000 took 0.68 s against 16 ms for 1,000 (superlinear parse). */
export const MAX_HEX_ARGS = 1000;

function badArgument(message: string, context: Record<string, unknown>): UsageError {
  return new UsageError('BAD_ARGUMENT', message, context);
}

/** One tmux argument, single-quoted. Throws UsageError BAD_ARGUMENT for LF or NUL. */
export function quote(arg: string): string {
  const lf = arg.indexOf('\n');
  const nul = arg.indexOf('\0');
  if (lf >= 0 || nul >= 0) {
    // The text itself stays out of the error: it may be a password being typed.
    throw badArgument(`a tmux argument cannot contain ${lf >= 0 ? 'a line feed' : 'a NUL byte'}; send such bytes with send-keys -H`, {
      index: lf >= 0 ? lf : nul,
      length: arg.length,
    });
  }
  return `'${arg.replaceAll("'", "'\\''")}'`;
}

function checkTarget(target: string): void {
  if (!isPaneId(target)) throw badArgument(`"${target}" is not a pane id (expected %N)`, { target });
}

const COMMAND_NAME = /^[a-z][a-z-]*$/;

/** `name 'arg1' 'arg2' …`: every argument quoted. Flags therefore need their own unquoted-safe form. */
export function encodeCommand(name: string, ...args: string[]): string {
  if (!COMMAND_NAME.test(name)) throw badArgument(`"${name}" is not a tmux command name`, { name });
  return [name, ...args.map(quote)].join(' ');
}

/** `display-message -p -t <target> -- '<format>'`: prints the expanded format as the reply. */
export function encodeDisplayMessage(target: PaneId, format: string): string {
  checkTarget(target);
  return `display-message -p -t ${target} -- ${quote(format)}`;
}

function hex(b: number): string {
  return b.toString(16).padStart(2, '0');
}

/** `send-keys -H` commands writing exactly `bytes` to the pane (NUL and 0xFF included). */
export function encodeSendHex(target: PaneId, bytes: Uint8Array): string[] {
  checkTarget(target);
  const lines: string[] = [];
  for (let at = 0; at < bytes.length; at += MAX_HEX_ARGS) {
    lines.push(`send-keys -t ${target} -H ${Array.from(bytes.subarray(at, at + MAX_HEX_ARGS), hex).join(' ')}`);
  }
  return lines;
}

function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
}

const isHighSurrogate = (unit: number): boolean => unit >= 0xd800 && unit <= 0xdbff;
const isLowSurrogate = (unit: number): boolean => unit >= 0xdc00 && unit <= 0xdfff;

/**
 * Commands that together deliver the UTF-8 bytes of `text`, byte-exact: printable runs as
 * `send-keys -l -- '…'`, C0 bytes and DEL as `send-keys -H` (TAB, ESC and CR too: as literal keys
 * their translation depends on the pane's modes and tmux version, as hex they are bytes).
 * A lone surrogate is sent as U+FFFD, which is what a UTF-8 encoder makes of it.
 */
export function encodeSendText(target: PaneId, text: string, options: { maxChunkChars?: number } = {}): string[] {
  checkTarget(target);
  const maxChunk = Math.max(2, Math.floor(options.maxChunkChars ?? MAX_TEXT_CHUNK_CHARS));
  const lines: string[] = [];
  let run = '';
  const controls: number[] = [];
  const flushRun = (): void => {
    if (run !== '') lines.push(`send-keys -t ${target} -l -- ${quote(run)}`);
    run = '';
  };
  const flushControls = (): void => {
    if (controls.length > 0) lines.push(...encodeSendHex(target, Uint8Array.from(controls)));
    controls.length = 0;
  };
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (isControl(unit)) {
      flushRun();
      controls.push(unit);
      continue;
    }
    flushControls();
    const pair = isHighSurrogate(unit) && isLowSurrogate(text.charCodeAt(i + 1));
    const char = pair ? text.slice(i, i + 2) : isHighSurrogate(unit) || isLowSurrogate(unit) ? '\ufffd' : (text[i] as string);
    if (pair) i++;
    if (run.length + char.length > maxChunk) flushRun();
    run += char;
  }
  flushRun();
  flushControls();
  return lines;
}

/**
 * Modifier prefixes each named key accepts in tmux 3.3a without extended-keys (measured on 3.3a):
 * - 'CMS': cursor, editing and function keys take any mix of C-, M-, S- (C-M-Left = ESC[1;7D).
 * - 'CM':  Space takes C- (NUL) and M-.
 * - 'M':   the rest take only M- (ESC prefix). C-Enter, C-Tab, C-Escape, C-BSpace and C-KP* are
 *          accepted by tmux but send NOTHING; S-Enter, S-Tab, C-M-Enter … are not key names at
 *          all and tmux would type the name as literal text. Both are rejected here.
 */
export type KeyModifiers = 'M' | 'CM' | 'CMS';

export const KEY_NAMES: Readonly<Record<string, KeyModifiers>> = Object.freeze({
  Enter: 'M',
  Escape: 'M',
  Tab: 'M',
  BTab: 'M',
  BSpace: 'M',
  Space: 'CM',
  ...Object.fromEntries(
    [
      'Up', 'Down', 'Left', 'Right', 'Home', 'End', 'PageUp', 'PageDown', 'PgUp', 'PgDn', 'NPage', 'PPage',
      'Insert', 'IC', 'Delete', 'DC', 'F1', 'F2', 'F3', 'F4', 'F5', 'F6', 'F7', 'F8', 'F9', 'F10', 'F11', 'F12',
    ].map((name) => [name, 'CMS' as const]),
  ),
  ...Object.fromEntries(
    ['KP/', 'KP*', 'KP-', 'KP+', 'KP.', 'KPEnter', 'KP0', 'KP1', 'KP2', 'KP3', 'KP4', 'KP5', 'KP6', 'KP7', 'KP8', 'KP9'].map((name) => [name, 'M' as const]),
  ),
});

/**
 * Characters that C- (and C-M-) turn into a C0 byte in tmux 3.3a: C-a = 0x01, C-[ = ESC, C-? = DEL.
 * For other characters tmux sends nothing (C-1) or types the name as text (C-", C-M-!). xterm's
 * C-2, C-6, C--, C-/ work alone but not with M-, so they are left out: use C-@, C-^, C-_.
 */
const CTRL_CHARS = new Set('@ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz[\\]^_?');

/** tmux 3.3a has no S-Tab key: `S-Tab` is typed as the text "S-Tab". BTab is what sends ESC [ Z. */
const SHIFTED_ALIASES: Readonly<Record<string, string>> = { Tab: 'BTab' };

function isPrintableChar(s: string): boolean {
  const cp = s.codePointAt(0);
  if (cp === undefined || s.length !== String.fromCodePoint(cp).length) return false;
  return !isControl(cp) && !(cp >= 0x80 && cp <= 0x9f) && !(cp >= 0xd800 && cp <= 0xdfff);
}

function unknownKey(key: string, why: string): UsageError {
  return new UsageError(
    'UNKNOWN_KEY_NAME',
    `unknown key name "${key}": ${why}; valid keys are names such as Enter, Escape, Tab, BTab, BSpace, Up, PageDown, F5, C-c, M-x, C-M-Left, or a single character`,
    { key },
  );
}

const MODIFIER_NAMES: Readonly<Record<string, string>> = { C: 'C-', M: 'M-', S: 'S-' };

/** Validates one key name and returns the name tmux 3.3a needs (S-Tab becomes BTab). */
export function normalizeKey(key: string): string {
  if (isPrintableChar(key)) return key;
  const modifiers = new Set<string>();
  let base = key;
  while (base.length > 2 && base[1] === '-' && Object.hasOwn(MODIFIER_NAMES, base[0] as string)) {
    if (modifiers.has(base[0] as string)) throw unknownKey(key, `${base[0]}- given twice`);
    modifiers.add(base[0] as string);
    base = base.slice(2);
  }
  if (modifiers.has('S') && Object.hasOwn(SHIFTED_ALIASES, base)) {
    modifiers.delete('S');
    base = SHIFTED_ALIASES[base] as string;
  }
  let allowed: string;
  if (Object.hasOwn(KEY_NAMES, base)) allowed = KEY_NAMES[base] as string;
  else if (modifiers.size > 0 && isPrintableChar(base)) allowed = CTRL_CHARS.has(base) ? 'CM' : 'M';
  else {
    const sameLetters = Object.keys(KEY_NAMES).find((name) => name.toLowerCase() === base.toLowerCase());
    throw unknownKey(key, sameLetters ? `names are case-sensitive, did you mean ${sameLetters}?` : `tmux 3.3a has no key "${base}" and would type it as text`);
  }
  const refused = [...modifiers].filter((m) => !allowed.includes(m));
  if (refused.length > 0) {
    throw unknownKey(key, `tmux 3.3a sends nothing or literal text for ${refused.map((m) => MODIFIER_NAMES[m]).join('')}${base}; ${base} takes only ${[...allowed].map((m) => MODIFIER_NAMES[m]).join(', ')}`);
  }
  return [...'CMS'].filter((m) => modifiers.has(m)).map((m) => MODIFIER_NAMES[m]).join('') + base;
}

/** `send-keys -t %N -- 'Enter' 'C-c' …`; every name is checked first (tmux would type unknown names). */
export function encodeSendKeys(target: PaneId, keys: readonly string[]): string {
  checkTarget(target);
  if (keys.length === 0) throw badArgument('send-keys needs at least one key', {});
  if (keys.length > MAX_HEX_ARGS) {
    throw new UsageError('COMMAND_TOO_LARGE', `at most ${MAX_HEX_ARGS} keys per call (tmux's parser overflows near 10,000 tokens)`, { keys: keys.length });
  }
  return `send-keys -t ${target} -- ${keys.map((k) => quote(normalizeKey(k))).join(' ')}`;
}
