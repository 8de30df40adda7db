/**
 * The classes of issue 12 ("what was wrong on real screens") as structural rules, each on a small
 * screen parsed by the real mirror, with the hostile case beside it: the rule must not fire where
 * the structure says otherwise. The recorded frames (recorded-cli-replay.test.ts) are the real
 * screens; these pin the rule, not the frame.
 */
import { describe, expect, it } from 'vitest';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { decideAutoAnswer } from '../../lib/perceive/auto-answer.js';
import { classifyScreen } from '../../lib/perceive/classify-screen.js';
import { loadProfiles } from '../../lib/perceive/profile.js';
import type { ProcessActivitySample } from '../../lib/perceive/activity.js';
import { ALT, HIDE, at, quiet, screen } from './screens.js';

const profiles = loadProfileFiles();
const shell = profiles.get('shell');
const claude = profiles.get('claude-code');
const codex = profiles.get('codex');
const gemini = profiles.get('gemini');

/** Rows drawn in a rounded box `width` columns wide (a title in the top border when given). */
function boxed(rows: readonly string[], width: number, indent = '', title = ''): string {
  const inner = width - 2;
  const top = `${indent}╭${title}${'─'.repeat(inner - [...title].length)}╮`;
  const body = rows.map((r) => `${indent}│${r}${' '.repeat(Math.max(0, inner - [...r].length))}│`);
  return [top, ...body, `${indent}╰${'─'.repeat(inner)}╯`].join('\n');
}

/** A process sample taken in the quiet period of `quiet()` (output stopped at 5 000 ms). */
const sample = (readingTerminal: boolean, runnable = false): ProcessActivitySample => ({ at: 5_300, processes: [], readingTerminal, runnable });

describe('loading (class 1): a blank alternate screen is not waiting', () => {
  it('a TUI that switched to the alternate screen and drew nothing is working, not screen_settled', () => {
    const v = classifyScreen(screen(`${ALT}${HIDE}`), quiet(), codex);
    expect(v).toMatchObject({ state: 'working', reason: 'loading' });
    expect(classifyScreen(screen(`${ALT}${HIDE}`), quiet(), shell).reason).toBe('loading');
  });

  it('a composer program on the main screen showing neither composer nor dialog is loading; a shell there is not', () => {
    const splash = `${' '.repeat(10)}Welcome to Claude Code\n\n`;
    expect(classifyScreen(screen(splash), quiet(), claude)).toMatchObject({ state: 'working', reason: 'loading' });
    expect(classifyScreen(screen(splash), quiet(), shell)).toMatchObject({ state: 'working', reason: 'cursor_not_parked' });
  });

  it('an alternate screen with anything drawn on it still settles (htop, less)', () => {
    expect(classifyScreen(screen(`${ALT}${HIDE}  CPU [|||   12%]`), quiet(), shell)).toMatchObject({ state: 'awaiting-input', reason: 'screen_settled' });
  });

  it("codex's start-up logo over a drawn composer is a working marker: keys typed now are held", () => {
    const logo = '⣀⣤⣤⣤⣀⣀⣠⣶⣿⣿⣿⣿';
    const v = classifyScreen(screen(`${ALT}  >_ OpenAI Codex\n\n   ${logo}\n${at(10, 0)}› Ask Codex to do anything${at(10, 2)}`, { cols: 60, rows: 14 }), quiet(), codex);
    expect(v).toMatchObject({ state: 'working', reason: 'working_marker', marker: 'startup-logo' });
  });
});

describe('queued (class 2)', () => {
  it('"Waiting for startup · esc cancel" under a held message is input_queued, not composer_ready', () => {
    const v = classifyScreen(screen(`${ALT}  >_ OpenAI Codex\n${at(10, 0)}› hello\n\n  Waiting for startup  · esc cancel${at(10, 7)}`, { cols: 60, rows: 14 }), quiet(), codex);
    expect(v).toMatchObject({ state: 'working', reason: 'input_queued', queued: true });
  });
});

describe('stale dialog (class 3): a dialog is live only if it is the last thing drawn', () => {
  const box = boxed([' Do you trust the files in this folder?', '', ' ● 1. Trust folder', "   2. Don't trust"], 44, ' ');

  it('the answered box with output printed under it, the cursor on a fresh line below, is no live dialog', () => {
    const v = classifyScreen(screen(`${box}\n\n Gemini CLI is restarting to apply the trust changes...\n`), quiet(), gemini);
    expect(v.dialog).toBeUndefined();
    expect(v.state).toBe('working');
  });

  it('the same box with the cursor hidden under it (Ink draws it so) is live', () => {
    const v = classifyScreen(screen(`${box}\n\n${HIDE}`), quiet(), gemini);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected', dialog: { kind: 'trust' } });
  });

  it('a hint row under the box, with the cursor parked at its end, keeps the box live', () => {
    const v = classifyScreen(screen(`${box}\n Enter to select `), quiet(), gemini);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected' });
  });
});

describe('retrying (class 4) and menus under the composer', () => {
  const rule = '─'.repeat(58);
  it('"✻ Unable to connect … Retrying in 2s" above a composer with typed text is working', () => {
    const v = classifyScreen(screen(`${HIDE}❯ hello\n\n✻ Unable to connect to API (ConnectionRefused) · Retrying in 2s · attempt 4/10\n\n${rule}\n❯ also check the tests\n${rule}`, { cols: 100, rows: 14 }), quiet(), claude);
    expect(v).toMatchObject({ state: 'working', reason: 'working_marker', marker: 'retrying' });
  });

  it('an idle composer with a slash menu under it is awaiting input: the hidden cursor sits on the composer', () => {
    const menu = Array.from({ length: 16 }, (_, i) => `/command-${i}                Does thing ${i}`).join('\n');
    const v = classifyScreen(screen(`${rule}\n❯ /\n${rule}\n${menu}${at(1, 3)}${HIDE}`, { cols: 80, rows: 20 }), quiet(), claude);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'composer_ready' });
  });

  it('the same menu while a turn retries above the composer is working (the marker is found above the composer)', () => {
    const menu = Array.from({ length: 16 }, (_, i) => `/command-${i}                Does thing ${i}`).join('\n');
    const top = '✻ Unable to connect to API (FailedToOpenSocket) · Retrying in 1s · attempt 3/10';
    const v = classifyScreen(screen(`${top}\n${rule}\n❯ /\n${rule}\n${menu}${at(2, 3)}${HIDE}`, { cols: 90, rows: 22 }), quiet(), claude);
    expect(v).toMatchObject({ state: 'working', reason: 'working_marker' });
  });
});

describe('a "(y/n)" with no reader (class 5): the process sample decides', () => {
  it('nothing reads the terminal (the sample of this quiet period) ⇒ working, no dialog', () => {
    const v = classifyScreen(screen('Continue? (y/n) '), quiet({ sample: sample(false) }), shell);
    expect(v).toMatchObject({ state: 'working', reason: 'no_reader' });
    expect(v.dialog).toBeUndefined();
  });

  it('a program blocked reading its terminal ⇒ the live confirm dialog', () => {
    expect(classifyScreen(screen('Continue? (y/n) '), quiet({ sample: sample(true) }), shell)).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected', dialog: { kind: 'confirm' } });
  });

  it('a foreground process waiting where a read may come from (epoll: readsNothing false) keeps the dialog', () => {
    expect(classifyScreen(screen('Continue? (y/n) '), quiet({ sample: { ...sample(false), readsNothing: false } }), shell).reason).toBe('dialog_detected');
    expect(classifyScreen(screen('Continue? (y/n) '), quiet({ sample: { ...sample(false), readsNothing: true } }), shell).reason).toBe('no_reader');
  });

  it('no sample (or one older than the last output) is no evidence: the dialog stands', () => {
    expect(classifyScreen(screen('Continue? (y/n) '), quiet(), shell).reason).toBe('dialog_detected');
    expect(classifyScreen(screen('Continue? (y/n) '), quiet({ sample: { ...sample(false), at: 4_000 } }), shell).reason).toBe('dialog_detected');
  });

  it('a dialog in a box on the alternate screen is not judged by the sample (a TUI reads through epoll)', () => {
    const s = screen(`${ALT}${HIDE}┌────────────────────┐\n│ Delete it?         │\n│  <Yes>     <No>    │\n└────────────────────┘`);
    expect(classifyScreen(s, quiet({ sample: sample(false) }), shell).reason).toBe('dialog_detected');
  });
});

describe('entry boxes (auth): a one-row box is a text field the program waits on', () => {
  it("codex's titled API-key box is a live auth dialog, escalated under every policy", () => {
    const v = classifyScreen(screen(`${ALT}${HIDE}  Paste or type your API key below.\n\n${boxed(['Paste or type your API key'], 40, '', 'API key')}\n  Press enter to save`), quiet(), codex);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'dialog_detected', dialog: { kind: 'auth' } });
    expect(v.dialog?.structure).toContain('field');
    for (const policy of ['safe-only', 'all'] as const) expect(decideAutoAnswer(v.dialog!, policy, () => 0).action).toBe('escalate');
  });

  it("a field nested in gemini's box takes the box's words (the question is in the outer box)", () => {
    const field = boxed([' not-a-key'], 34).split('\n').map((r) => ` ${r} `);
    const s = screen(`${HIDE}${boxed([' Enter Gemini API Key', ...field], 38)}`);
    const v = classifyScreen(s, quiet(), gemini);
    expect(v).toMatchObject({ state: 'awaiting-input', dialog: { kind: 'auth', id: 'auth-method', top: 0 } });
  });

  it('a boxed composer (the input line inside a one-row box) is the composer, not an entry dialog', () => {
    const v = classifyScreen(screen(`${HIDE}${boxed([' > Type your message'], 32)}${at(1, 4)}`), quiet(), gemini);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'composer_ready' });
    expect(v.dialog).toBeUndefined();
  });
});

describe('dialog kinds and the safe trust answer (class 10)', () => {
  it("codex's trust prompt stays trust although its small print says \"permission\"", () => {
    const v = classifyScreen(
      screen(`${ALT}${HIDE}  Trust this folder? Codex can read, edit, and run files here, subject to your permission\n  settings.\n\n› 1. Trust and continue\n  2. Back\n\n  enter continue · esc back`, { cols: 100, rows: 12 }),
      quiet(),
      codex,
    );
    expect(v.dialog).toMatchObject({ kind: 'trust', id: 'trust-directory' });
  });

  it('a named dialog is still raised by destructive and sign-in words', () => {
    const v = classifyScreen(screen(`${ALT}${HIDE}  Trust this folder? This will delete your cache.\n\n› 1. Trust and continue\n  2. Back`, { cols: 100, rows: 12 }), quiet(), codex);
    expect(v.dialog?.kind).toBe('destructive');
  });

  const trust = (first: string, second: string, pointer: 0 | 1): string =>
    `${HIDE} Quick safety check: Is this a project you created or one you trust?\n\n ${pointer === 0 ? '❯' : ' '} 1. ${first}\n ${pointer === 1 ? '❯' : ' '} 2. ${second}\n\n Enter to confirm · Esc to cancel`;

  it("Claude Code's trust gate is answered under safe-only while \"Yes, I trust this folder\" is highlighted", () => {
    const v = classifyScreen(screen(trust('Yes, I trust this folder', 'No, exit', 0), { cols: 90 }), quiet(), claude);
    expect(v.dialog).toMatchObject({ kind: 'trust', safe: true, answer: ['Enter'] });
    expect(decideAutoAnswer(v.dialog!, 'safe-only', () => 0)).toEqual({ action: 'answer', keys: ['Enter'] });
  });

  it('the same gate with the highlight moved to "No, exit" is not safe (Enter would answer No)', () => {
    const v = classifyScreen(screen(trust('Yes, I trust this folder', 'No, exit', 1), { cols: 90 }), quiet(), claude);
    expect(v.dialog).toMatchObject({ kind: 'trust', safe: false });
    expect(decideAutoAnswer(v.dialog!, 'safe-only', () => 0).action).toBe('escalate');
  });

  it('a profile naming a required highlight is validated like every pattern', () => {
    expect(() => loadProfiles([{ name: 'bad.json', data: { id: 'bad', dialogs: [{ id: 'd', pattern: 'x', kind: 'menu', answer: ['Enter'], safe: true, selected: '(a+)+$' }] } }])).toThrow(/selected/);
  });
});
