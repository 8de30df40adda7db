/**
 * The submit's Enter confirmation is judged on the grid, not on the parse counter (the digest is
 * memoised on that counter): output that changes no cell is not a reaction to the Enter, so the
 * Enter is still pressed again; a visible reaction still ends the confirmation at once.
 * Real tmux, a real python composer on a raw tty.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

/**
 * A composer that swallows the first Enter after its text, as codex and gemini swallow one that
 * comes too soon after typing. It goes by count, not by a clock: a 300 ms window took the Enter at
 * once when a loaded machine delivered it 430 ms after the echo (nothing to retry: the test failed).
 * On the swallowed Enter it writes, three times over 300 ms, bytes that change no cell: an SGR reset
 * and a cursor save + restore (a TUI redrawing the same screen).
 */
const SWALLOWING_REDRAWER = [
  'import os, tty, time',
  'tty.setraw(0)',
  'typed = b""; swallowed = False',
  'os.write(1, b"> ")',
  'while True:',
  '    c = os.read(0, 1)',
  '    if c == b"\\r":',
  '        if typed and not swallowed:',
  '            swallowed = True',
  '            for _ in range(3):',
  '                os.write(1, b"\\x1b[0m\\x1b7\\x1b8")',
  '                time.sleep(0.1)',
  '            continue',
  '        os.write(1, b"\\r\\nGOT[" + typed + b"]\\r\\n> ")',
  '        typed = b""; swallowed = False',
  '    else:',
  '        typed += c',
  '        os.write(1, c)',
].join('\n');

/** Takes every Enter at once. */
const PROMPT = [
  'import os, tty',
  'tty.setraw(0)',
  'typed = b""',
  'os.write(1, b"> ")',
  'while True:',
  '    c = os.read(0, 1)',
  '    if c == b"\\r":',
  '        os.write(1, b"\\r\\nGOT[" + typed + b"]\\r\\n> ")',
  '        typed = b""',
  '    else:',
  '        typed += c',
  '        os.write(1, c)',
].join('\n');

describe('submit: the Enter confirmation', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('py', '/usr/bin/python3')]);
  });
  afterAll(async () => t.cleanup());

  it('presses Enter again when the program answered the swallowed Enter with output that changes no cell', async () => {
    const s = await t.driver.create({ allowId: 'py', args: ['-c', SWALLOWING_REDRAWER] });
    await s.wait({ forText: '> ' });
    await s.sendText('hello there', { submit: true });
    expect((await s.wait({ forText: /GOT\[hello there\]/, timeoutMs: 5000 })).outcome).toBe('text');
    expect(s.read().content.match(/GOT/g)?.length).toBe(1);
    expect(s.transcript().filter((e) => e.kind === 'keys' && e.tags?.retry !== undefined).length).toBeGreaterThanOrEqual(1);
    await s.kill();
  });

  it('does not press Enter again when the screen changed', async () => {
    const s = await t.driver.create({ allowId: 'py', args: ['-c', PROMPT] });
    await s.wait({ forText: '> ' });
    await s.sendText('one', { submit: true });
    expect((await s.wait({ forText: /GOT\[one\]/, timeoutMs: 5000 })).outcome).toBe('text');
    await s.wait({ forIdleMs: 300 });
    expect(s.read().content.match(/GOT/g)?.length).toBe(1);
    expect(s.transcript().filter((e) => e.kind === 'keys' && e.tags?.retry !== undefined)).toEqual([]);
    await s.kill();
  });
});
