/**
 * Key names to the bytes a terminal sends, for a backend that writes to the pty itself. The names
 * are the tmux backend's (validated by `normalizeKey`, so an unknown name fails with the same
 * UNKNOWN_KEY_NAME), and the bytes are the ones tmux 3.3a writes to a pane for them (input-keys.c;
 * every entry is checked against a real server in test/backends/spawn/key-bytes.test.ts). A program then
 * gets the same bytes under either backend, and they match the TERM both give it (tmux-256color:
 * khome = ESC[1~, kend = ESC[4~).
 *
 * Two terminal modes change the bytes, as in tmux: DECCKM (application cursor keys: unmodified
 * arrows send ESC O A instead of ESC [ A) and DECKPAM (application keypad: KP keys send ESC O x).
 * Only the terminal's own emulator knows them, so the caller passes them in.
 */
import { normalizeKey } from '../../lib/control/encode.js';

export interface KeyModes {
  /** DECCKM (`ESC[?1h`). */
  readonly applicationCursorKeys: boolean;
  /** DECKPAM (`ESC =`). */
  readonly applicationKeypad: boolean;
}

export const NORMAL_KEY_MODES: KeyModes = Object.freeze({ applicationCursorKeys: false, applicationKeypad: false });

const ESC = '\x1b';

/**
 * Keys that take C-, M- and S- (KEY_NAMES 'CMS'). Unmodified they send `plain`; with modifiers,
 * `ESC [ param ; m final` where m = 1 + (S ? 1) + (M ? 2) + (C ? 4), xterm's encoding.
 */
interface ModifiableKey {
  readonly plain: string;
  /** The unmodified bytes under DECCKM, for the four arrows. */
  readonly applicationCursor?: string;
  readonly param: string;
  readonly final: string;
}

const arrow = (final: string): ModifiableKey => ({ plain: `${ESC}[${final}`, applicationCursor: `${ESC}O${final}`, param: '1', final });
const tilde = (param: string): ModifiableKey => ({ plain: `${ESC}[${param}~`, param, final: '~' });
const ss3 = (final: string): ModifiableKey => ({ plain: `${ESC}O${final}`, param: '1', final });

const MODIFIABLE: Readonly<Record<string, ModifiableKey>> = Object.freeze({
  Up: arrow('A'),
  Down: arrow('B'),
  Right: arrow('C'),
  Left: arrow('D'),
  Home: { plain: `${ESC}[1~`, param: '1', final: 'H' },
  End: { plain: `${ESC}[4~`, param: '1', final: 'F' },
  Insert: tilde('2'),
  IC: tilde('2'),
  Delete: tilde('3'),
  DC: tilde('3'),
  PageUp: tilde('5'),
  PgUp: tilde('5'),
  PPage: tilde('5'),
  PageDown: tilde('6'),
  PgDn: tilde('6'),
  NPage: tilde('6'),
  F1: ss3('P'),
  F2: ss3('Q'),
  F3: ss3('R'),
  F4: ss3('S'),
  F5: tilde('15'),
  F6: tilde('17'),
  F7: tilde('18'),
  F8: tilde('19'),
  F9: tilde('20'),
  F10: tilde('21'),
  F11: tilde('23'),
  F12: tilde('24'),
});

/** Keys that take only M- (an ESC in front), and Space, which also takes C- (NUL). */
const SIMPLE: Readonly<Record<string, string>> = Object.freeze({
  Enter: '\r',
  Escape: ESC,
  Tab: '\t',
  BTab: `${ESC}[Z`,
  // tmux's `backspace` option defaults to DEL (^?), which is also the pty's VERASE.
  BSpace: '\x7f',
  Space: ' ',
});

/** Keypad keys: their character, or ESC O x under DECKPAM. tmux 3.3a sends LF for KPEnter. */
const KEYPAD: Readonly<Record<string, readonly [normal: string, application: string]>> = Object.freeze({
  'KP/': ['/', `${ESC}Oo`],
  'KP*': ['*', `${ESC}Oj`],
  'KP-': ['-', `${ESC}Om`],
  'KP+': ['+', `${ESC}Ok`],
  'KP.': ['.', `${ESC}On`],
  KPEnter: ['\n', `${ESC}OM`],
  KP0: ['0', `${ESC}Op`],
  KP1: ['1', `${ESC}Oq`],
  KP2: ['2', `${ESC}Or`],
  KP3: ['3', `${ESC}Os`],
  KP4: ['4', `${ESC}Ot`],
  KP5: ['5', `${ESC}Ou`],
  KP6: ['6', `${ESC}Ov`],
  KP7: ['7', `${ESC}Ow`],
  KP8: ['8', `${ESC}Ox`],
  KP9: ['9', `${ESC}Oy`],
});

/** C- on a character: the C0 code (normalizeKey admits only characters that have one). */
function controlOf(char: string): string {
  if (char === '?') return '\x7f';
  return String.fromCharCode((char.codePointAt(0) as number) & 0x1f);
}

function splitModifiers(name: string): { readonly ctrl: boolean; readonly meta: boolean; readonly shift: boolean; readonly base: string } {
  let base = name;
  const mods = new Set<string>();
  // normalizeKey's output: at most one each of C-, M-, S-, in that order, before a base of ≥ 1 char.
  while (base.length > 2 && base[1] === '-' && 'CMS'.includes(base[0] as string)) {
    mods.add(base[0] as string);
    base = base.slice(2);
  }
  return { ctrl: mods.has('C'), meta: mods.has('M'), shift: mods.has('S'), base };
}

/** The bytes one key name sends. Throws UsageError UNKNOWN_KEY_NAME for names tmux would not send. */
export function keyBytes(key: string, modes: KeyModes = NORMAL_KEY_MODES): Uint8Array {
  const name = normalizeKey(key);
  return Buffer.from(keyString(name, modes), 'utf8');
}

function keyString(name: string, modes: KeyModes): string {
  // A single character (normalizeKey passed it through whole): itself, even 'C' or 'M'.
  if ([...name].length === 1) return name;
  const { ctrl, meta, shift, base } = splitModifiers(name);
  const modifiable = MODIFIABLE[base];
  if (modifiable) {
    if (!ctrl && !meta && !shift) return modes.applicationCursorKeys && modifiable.applicationCursor ? modifiable.applicationCursor : modifiable.plain;
    const m = 1 + (shift ? 1 : 0) + (meta ? 2 : 0) + (ctrl ? 4 : 0);
    return `${ESC}[${modifiable.param};${m}${modifiable.final}`;
  }
  const prefix = meta ? ESC : '';
  const keypad = KEYPAD[base];
  if (keypad) return prefix + (modes.applicationKeypad ? keypad[1] : keypad[0]);
  const simple = SIMPLE[base];
  if (simple !== undefined) return prefix + (ctrl ? '\0' : simple); // only Space admits C-
  return prefix + (ctrl ? controlOf(base) : base);
}
