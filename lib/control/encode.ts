/**
 * Word encoding for tmux 3.3a (cmd-parse.y) and the key-name table; the commands themselves are
 * built in tmux-commands.ts, the only module that writes tmux command text. Rules chosen:
 * - A free-text word is single-quoted: inside single quotes nothing is special (no `#` comments,
 *   `;` separators, `$VAR`/`~` expansion, `\` escapes or `%directives`), and `'` is written `'\''`.
 *   Each C0 byte and DEL becomes an adjacent double-quoted octal escape (`'a'"\012"'b'`), which the
 *   lexer joins into the same word: LF cannot stand raw (it ends the command line).
 * - NUL cannot be carried at all (tmux's words are C strings: `"\000"` cuts the word there), so
 *   quote() refuses it; text with NUL bytes reaches a pane through `send-keys -H`.
 * - A leading `-` is read as a flag even when quoted, so free text always follows `--`.
 * - Quoting is not escaping for formats: a position tmux format-expands (`#{…}`, `#(…)`) never gets
 *   caller text (see tmux-commands.ts).
 * See docs/protocol.md for the measurements behind these rules and the key table.
 */
import { UsageError } from '../common/errors.js';

/** Characters per `send-keys -l` command; tmux 3.3a accepted 1 MB lines, 1000 keeps each fast. */
export const MAX_TEXT_CHUNK_CHARS = 1000;
/** Hex arguments per `send-keys -H`: 5,000 took 0.68 s against 16 ms for 1,000 (superlinear parse). */
export const MAX_HEX_ARGS = 1000;

const CONTROL_RUN = /([\x00-\x1f\x7f])/;

function nulIn(word: string, what: string): UsageError | undefined {
  const at = word.indexOf('\0');
  // The text itself stays out of the error: it may be a password being typed.
  return at < 0 ? undefined : new UsageError('BAD_ARGUMENT', `${what} cannot contain a NUL byte (tmux's words are C strings); such bytes reach a pane as hex keys`, { index: at, length: word.length });
}

/**
 * One free-text word of a tmux command line: single-quoted runs with each control byte as an
 * adjacent `"\ooo"`. Throws UsageError BAD_ARGUMENT for NUL.
 */
export function quote(word: string): string {
  const nul = nulIn(word, 'a tmux argument');
  if (nul) throw nul;
  if (word.length === 0) return "''";
  return word
    .split(CONTROL_RUN)
    .filter((part) => part.length > 0)
    .map((part) => (part.length === 1 && CONTROL_RUN.test(part) ? `"\\${part.charCodeAt(0).toString(8).padStart(3, '0')}"` : `'${part.replaceAll("'", "'\\''")}'`))
    .join('');
}

/**
 * One word of a `tmux …` argv (the command-line form, no lexer). tmux splits the command line at a
 * word ending in `;` (cmd_parse_from_arguments) and turns a final `\;` back into `;`, so a final
 * `;` is written `\;`. NUL cannot cross exec.
 */
export function argvWord(word: string): string {
  const nul = nulIn(word, 'a tmux argv word');
  if (nul) throw nul;
  return word.endsWith(';') ? `${word.slice(0, -1)}\\;` : word;
}

/**
 * The value of a tmux option on its command line (`-S <socket>`, `-f <file>`): read by getopt
 * before any command, so a final `;` is just a character. NUL cannot cross exec.
 */
export function argvOption(word: string): string {
  const nul = nulIn(word, 'a tmux option value');
  if (nul) throw nul;
  return word;
}

export function isControl(code: number): boolean {
  return code < 0x20 || code === 0x7f;
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
