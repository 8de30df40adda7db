/**
 * What a person types in the console's terminal (xterm.js `onData`: characters and the escape
 * sequences of keys) as the gate's input verbs: runs of printable text for `sendText`, keys by
 * their tmux names for `sendKeys`. Named keys let tmux encode them for the program's modes
 * (application cursor keys, keypad), which the browser's terminal does not know: it shows frames.
 *
 * A sequence that is not a key (a terminal's answer to a query, a focus or mouse report) is
 * dropped: only keystrokes reach the program.
 */

export type InputAction = { readonly kind: 'text'; readonly text: string } | { readonly kind: 'keys'; readonly keys: readonly string[] };

/** CSI / SS3 finals of the cursor and editing keys. */
const FINAL_KEYS: Readonly<Record<string, string>> = { A: 'Up', B: 'Down', C: 'Right', D: 'Left', H: 'Home', F: 'End', P: 'F1', Q: 'F2', R: 'F3', S: 'F4', Z: 'BTab' };
/** `CSI n ~` keys. */
const TILDE_KEYS: Readonly<Record<string, string>> = {
  '1': 'Home', '2': 'IC', '3': 'DC', '4': 'End', '5': 'PageUp', '6': 'PageDown', '7': 'Home', '8': 'End',
  '15': 'F5', '17': 'F6', '18': 'F7', '19': 'F8', '20': 'F9', '21': 'F10', '23': 'F11', '24': 'F12',
};
/** xterm's modifier parameter (1 + bits: shift 1, alt 2, ctrl 4) as tmux prefixes. */
function modifierPrefix(param: string | undefined): string | undefined {
  if (param === undefined || param === '' || param === '1') return '';
  const n = Number(param) - 1;
  if (!Number.isInteger(n) || n < 1 || n > 7) return undefined;
  return `${n & 4 ? 'C-' : ''}${n & 2 ? 'M-' : ''}${n & 1 ? 'S-' : ''}`;
}

const CONTROL_KEYS: Readonly<Record<number, string>> = { 0x0d: 'Enter', 0x0a: 'Enter', 0x09: 'Tab', 0x7f: 'BSpace', 0x08: 'BSpace', 0x1b: 'Escape', 0x00: 'C-Space', 0x1c: 'C-\\', 0x1d: 'C-]', 0x1e: 'C-^', 0x1f: 'C-_' };

function controlKey(code: number): string | undefined {
  const named = CONTROL_KEYS[code];
  if (named) return named;
  if (code >= 0x01 && code <= 0x1a) return `C-${String.fromCharCode(code + 0x60)}`;
  return undefined;
}

function isPrintable(code: number): boolean {
  return code >= 0x20 && code !== 0x7f && !(code >= 0x80 && code <= 0x9f);
}

/** One escape sequence at `i` (text[i] is ESC): its key name (undefined: not a key) and its length. */
function escapeSequence(text: string, i: number): { key: string | undefined; length: number } {
  const next = text[i + 1];
  if (next === undefined) return { key: 'Escape', length: 1 };
  if (next === '[' || next === 'O') {
    // CSI: parameters 0x30–0x3f, intermediates 0x20–0x2f, one final 0x40–0x7e; SS3: one final.
    let j = i + 2;
    if (next === '[') while (j < text.length && text.charCodeAt(j) >= 0x20 && text.charCodeAt(j) <= 0x3f) j++;
    const final = text[j];
    if (final === undefined || text.charCodeAt(j) < 0x40 || text.charCodeAt(j) > 0x7e) return { key: undefined, length: j - i };
    const params = text.slice(i + 2, j);
    // A legacy (X10) mouse report, ESC [ M and three bytes of button and position: all of it goes.
    if (next === '[' && final === 'M' && params === '') return { key: undefined, length: Math.min(text.length - i, 6) };
    const length = j - i + 1;
    if (!/^[0-9;]*$/.test(params)) return { key: undefined, length }; // private (`?`, `>`): answers, not keys
    const [first, mod] = params.split(';');
    const base = final === '~' ? TILDE_KEYS[first ?? ''] : next === 'O' || first === '' || first === '1' ? FINAL_KEYS[final] : undefined;
    const prefix = modifierPrefix(final === '~' ? mod : (mod ?? (next === '[' && first !== '' && first !== '1' ? first : undefined)));
    if (base === undefined || prefix === undefined) return { key: undefined, length };
    return { key: `${prefix}${base}`, length };
  }
  const code = next.codePointAt(0) as number;
  const char = String.fromCodePoint(code);
  if (isPrintable(code)) return { key: `M-${char}`, length: 1 + char.length };
  const ctrl = controlKey(code);
  if (ctrl === undefined) return { key: undefined, length: 2 };
  return { key: ctrl.startsWith('C-') ? `C-M-${ctrl.slice(2)}` : `M-${ctrl}`, length: 2 };
}

/** The actions `data` stands for, in order; adjacent keys share one action. */
export function mapInput(data: string): InputAction[] {
  const actions: InputAction[] = [];
  let text = '';
  let keys: string[] = [];
  const flushText = (): void => {
    if (text) actions.push({ kind: 'text', text });
    text = '';
  };
  const flushKeys = (): void => {
    if (keys.length > 0) actions.push({ kind: 'keys', keys });
    keys = [];
  };
  const key = (name: string): void => {
    flushText();
    keys.push(name);
  };
  for (let i = 0; i < data.length; ) {
    const code = data.codePointAt(i) as number;
    if (code === 0x1b) {
      const seq = escapeSequence(data, i);
      if (seq.key !== undefined) key(seq.key);
      i += seq.length;
      continue;
    }
    if (isPrintable(code)) {
      flushKeys();
      const char = String.fromCodePoint(code);
      text += char;
      i += char.length;
      continue;
    }
    const ctrl = controlKey(code);
    if (ctrl !== undefined) key(ctrl);
    i += 1;
  }
  flushText();
  flushKeys();
  return actions;
}
