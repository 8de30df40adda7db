import { describe, expect, it } from 'vitest';
import { classifyScreen } from '../../lib/perceive/classify-screen.js';
import { loadProfiles } from '../../lib/perceive/profile.js';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { ALT, HIDE, INV, RESET, at, flowing, quiet, screen } from './screens.js';

const profiles = loadProfileFiles();
const shell = profiles.get('shell');

/** A whiptail-like box: question, buttons, one highlighted. */
function boxDialog(question: string, buttons: [string, string], highlight: 0 | 1): string {
  const w = 36;
  const row = (text: string): string => `│${text.padEnd(w - 2)}│`;
  const [a, b] = buttons.map((t, i) => (i === highlight ? `${INV}<${t}>${RESET}` : `<${t}>`));
  return [`${ALT}${HIDE}`, `┌${'─'.repeat(w - 2)}┐`, row(''), row(` ${question}`), row(''), `│      ${a}          ${b}${' '.repeat(w - 2 - 6 - buttons[0].length - 2 - 10 - buttons[1].length - 2)}│`, `└${'─'.repeat(w - 2)}┘`].join('\n');
}

describe('dialogs from structure', () => {
  it('a box with buttons is a confirm dialog with the highlighted button selected', () => {
    const v = classifyScreen(screen(boxDialog('Proceed with the upgrade?', ['Yes', 'No'], 0)), quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected', confidence: 'high' });
    expect(v.dialog).toMatchObject({ kind: 'confirm', safe: false, structure: ['box', 'buttons'], options: ['Yes', 'No'], selected: 0 });
  });

  it('risk words make it destructive, whatever the layout', () => {
    const v = classifyScreen(screen(boxDialog('Delete all files?', ['Yes', 'No'], 1)), quiet(), shell);
    expect(v.dialog).toMatchObject({ kind: 'destructive', safe: false, selected: 1 });
  });

  it('a numbered list with a pointer is a menu; the pointer is the selection', () => {
    const s = screen(`${ALT}${HIDE}  Choose how you want to use it.\n\n> 1. Sign up\n     details\n\n  2. Continue as guest\n\n  3. Quit\n\n  Press enter to continue`);
    const v = classifyScreen(s, quiet(), shell);
    expect(v.dialog).toMatchObject({ kind: 'menu', structure: ['options', 'selector'], options: ['Sign up', 'Continue as guest', 'Quit'], selected: 0 });
  });

  it('a numbered list with nothing selected and no prompt under it is just output', () => {
    const s = screen('Tips for getting started:\n1. Create files\n2. /help for more\n3. Ask questions\n');
    expect(classifyScreen(s, quiet(), shell).dialog).toBeUndefined();
  });

  it('a numbered list in a box with a pointer: box, options, selector', () => {
    const w = 44;
    const r = (t: string): string => `│ ${t.padEnd(w - 3)}│`;
    const s = screen([`╭${'─'.repeat(w - 2)}╮`, r('Do you trust this folder?'), r(''), r('● 1. Trust folder'), r('  2. Trust parent folder'), r("  3. Don't trust"), `╰${'─'.repeat(w - 2)}╯`].join('\n') + HIDE, { cols: 50 });
    const v = classifyScreen(s, quiet(), shell);
    expect(v.dialog).toMatchObject({ structure: ['box', 'options', 'selector'], options: ['Trust folder', 'Trust parent folder', "Don't trust"], selected: 0 });
  });

  it('a pointer list (fzf-like) on the alternate screen is a select dialog', () => {
    const s = screen(`${ALT}  apple\n> banana\n  cherry\n\n> ${at(4, 2)}`);
    const v = classifyScreen(s, quiet(), shell);
    expect(v.dialog).toMatchObject({ kind: 'select', options: ['apple', 'banana', 'cherry'], selected: 1 });
  });

  it('a menu answered earlier, above a fresh shell prompt, is not a dialog', () => {
    const s = screen('> 1. one\n  2. two\nchose one\n$ ');
    const v = classifyScreen(s, quiet(), shell);
    expect(v).toMatchObject({ reason: 'cursor_parked' });
    expect(v.dialog).toBeUndefined();
  });

  it('an enumerated list with the prompt right under it (bash select) is a menu', () => {
    const v = classifyScreen(screen('1) start\n2) stop\n3) status\n#? '), quiet(), shell);
    expect(v.dialog).toMatchObject({ kind: 'menu', structure: ['options', 'prompt'], options: ['start', 'stop', 'status'] });
  });
});

describe('(y/n) choices: structure decides, text only reinforces', () => {
  it('a [y/N] choice the cursor is parked after is a confirm dialog; the capital is the default', () => {
    const v = classifyScreen(screen('Continue with the upgrade? [y/N] '), quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected', confidence: 'high' });
    expect(v.dialog).toMatchObject({ kind: 'confirm', structure: ['choice'], options: ['y', 'N'], selected: 1 });
  });

  it('a "(y/n)" printed mid-output, away from the cursor, is no dialog', () => {
    const s = screen('Proceed? (y/n)\nprocessing item 1\nprocessing item 2\n');
    const v = classifyScreen(s, quiet(), shell);
    expect(v.state).toBe('working');
    expect(v.dialog).toBeUndefined();
  });

  it('a "(y/n)" under the cursor while output flows is working', () => {
    expect(classifyScreen(screen('step 1\nProceed? (y/n) '), flowing(), shell).state).toBe('working');
  });

  it('a password prompt is an auth dialog', () => {
    const v = classifyScreen(screen('[sudo] password for root: '), quiet(), shell);
    expect(v.dialog).toMatchObject({ kind: 'auth', structure: ['prompt'] });
  });
});

describe('known dialogs and the digest', () => {
  const custom = loadProfiles([
    {
      name: 'custom.json',
      data: {
        id: 'custom',
        dialogs: [
          { id: 'theme', pattern: 'Choose a theme', kind: 'menu', answer: ['Enter'], safe: true },
          { id: 'cleanup', pattern: 'Clean up the cache', kind: 'confirm', answer: ['y', 'Enter'], safe: true },
        ],
      },
    },
  ]).get('custom');

  it('a known dialog names the dialog and gives its answer', () => {
    const v = classifyScreen(screen(`${ALT}Choose a theme\n\n❯ 1. Dark\n  2. Light`), quiet(), custom);
    expect(v.dialog).toMatchObject({ id: 'theme', kind: 'menu', safe: true, answer: ['Enter'] });
  });

  it('a known safe dialog that mentions deletion becomes destructive and unsafe', () => {
    const v = classifyScreen(screen('Clean up the cache and delete old builds? [y/N] '), quiet(), custom);
    expect(v.dialog).toMatchObject({ id: 'cleanup', kind: 'destructive', safe: false });
  });

  it('text alone never makes a dialog: the known pattern in plain output is not one', () => {
    const v = classifyScreen(screen('Choose a theme\nsomething else\n'), quiet(), custom);
    expect(v.dialog).toBeUndefined();
  });

  it('the digest is stable across redraws (selection moved, counters changed) and tells dialogs apart', () => {
    const menu = (sel: number, secs: number, third = 'Quit'): string =>
      `${ALT}${HIDE}Choose an action (${secs}s left)\n\n${['Start', 'Stop', third].map((o, i) => `${i === sel ? '❯' : ' '} ${i + 1}. ${o}`).join('\n')}`;
    const d = (s: string): string => classifyScreen(screen(s), quiet(), shell).dialog?.digest ?? 'none';
    expect(d(menu(0, 30))).toBe(d(menu(2, 29)));
    expect(d(menu(0, 30))).not.toBe(d(menu(0, 30, 'Restart')));
    expect(d(menu(0, 30))).toMatch(/^[0-9a-f]{16}$/);
  });
});
