import { describe, expect, it } from 'vitest';
import { classifyScreen } from '../../lib/perceive/classify-screen.js';
import { findInputLine, transformSnapshot } from '../../lib/perceive/input-line.js';
import { ScreenGrid } from '../../lib/perceive/screen.js';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { DIM, HIDE, INV, RESET, quiet, screen } from './screens.js';

const profiles = loadProfileFiles();
const shell = profiles.get('shell');
const claude = profiles.get('claude-code');

describe('ghost text (a suggestion) is never typed input', () => {
  it('dim cells after the cursor on a shell prompt are the suggestion; typed text excludes them', () => {
    const s = screen(`$ git st${DIM}atus --short${RESET}\x1b[13D`);
    const line = findInputLine(new ScreenGrid(s), shell);
    expect(line).toMatchObject({ via: 'prompt', typed: 'git st', suggestion: { visible: true, text: 'atus --short' } });
    const v = classifyScreen(s, quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'cursor_parked', suggestion: { visible: true, text: 'atus --short' } });
  });

  it('a composer holding only a dim suggestion (with a drawn inverse cursor on its first letter) has typed nothing', () => {
    const rule = '─'.repeat(50);
    const s = screen(`${HIDE}● Done.\n\n${rule}\n> ${INV}Y${RESET}${DIM}es, go ahead and delete the tests${RESET}\n${rule}\n  ? for shortcuts`);
    const v = classifyScreen(s, quiet(), claude);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'composer_ready', suggestion: { visible: true, text: 'Yes, go ahead and delete the tests' } });
    expect(findInputLine(new ScreenGrid(s), claude)?.typed).toBe('');
  });

  it('a composer with typed text and no suggestion reports the suggestion as not visible', () => {
    const rule = '─'.repeat(50);
    const s = screen(`${rule}\n> run the tests\n${rule}\x1b[2A\r\x1b[15C`);
    const line = findInputLine(new ScreenGrid(s), claude);
    expect(line).toMatchObject({ via: 'composer', typed: 'run the tests', suggestion: { visible: false, text: '' } });
  });

  it('a grey placeholder counts as ghost text where the profile says so (opencode: palette 8)', () => {
    const opencode = profiles.get('opencode');
    const s = screen(`\n  ┃\n  ┃  \x1b[38;5;8mAsk anything… "Fix broken tests"\x1b[38;5;15m\n  ┃\n  ╹▀▀▀▀▀▀▀▀▀▀\x1b[3;6H`);
    const v = classifyScreen(s, quiet(), opencode);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'composer_ready', suggestion: { visible: true, text: 'Ask anything… "Fix broken tests"' } });
  });

  it('without cells (a text-only snapshot) the suggestion is unknown, not guessed', () => {
    const s = screen(`$ ls ${DIM}-la${RESET}\x1b[3D`);
    const { cells: _cells, ...textOnly } = s;
    expect(classifyScreen(textOnly, quiet(), shell).suggestion).toBeUndefined();
  });

  it('transformSnapshot strips the ghost text on the read side and keeps everything else', () => {
    const s = screen(`$ echo hi\nhi\n$ git st${DIM}atus${RESET}\x1b[5D`);
    const t = transformSnapshot(s, shell);
    expect(t.lines.slice(0, 3)).toEqual(['$ echo hi', 'hi', '$ git st']);
    expect(t.cells?.[2]?.some((c) => c.dim)).toBe(false);
    expect(t.cursor).toEqual(s.cursor);
    expect(transformSnapshot(s, profiles.get('shell'))).not.toBe(s);
  });

  it('ghost text that reads like a command or an approval changes nothing about the state', () => {
    const s = screen(`$ ${DIM}rm -rf / # Yes, go ahead (y/n)${RESET}\x1b[1;3H`);
    const v = classifyScreen(s, quiet(), shell);
    expect(v).toMatchObject({ state: 'awaiting-input', reason: 'cursor_parked' });
    expect(v.dialog).toBeUndefined();
  });
});
