/**
 * `await send…(); await wait({ forText })`: a send's call settles once its audit record is written,
 * which is at the end of the keys' first output event (lib/session/input-gate.ts), so the program's
 * answer may be handled before the wait begins. The wait reads that output first (the send's own,
 * kept until its call's turn ends): a prompt whose row looks like one the screen already had (the
 * screen cannot tell it is new) is still found, and the echo of what was typed still never matches.
 * Real bash and a real Python REPL, on both backends; the spawn backend (node-pty) hands the whole
 * answer over in one read, which made the first case fail before the output was kept.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];

describe.each(['spawn', 'tmux'] as const)('a text wait right after a send on the %s backend', (backend) => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' }, backend }), allow('py', '/usr/bin/python3', { backend })]);
  });
  afterAll(async () => t.cleanup());

  it('finds an answer and a prompt the screen already showed, handled before the wait began', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'again' });
    await s.wait({ forText: '$ ' });
    await s.sendText('echo first', { submit: true });
    expect((await s.wait({ forText: /^first\n\$ $/m, timeoutMs: 5000 })).outcome).toBe('text');
    for (let i = 0; i < 5; i++) {
      // The same command from history: the same rows again, "first" and "$ ".
      await s.sendKeys(['Up', 'Enter']);
      expect((await s.wait({ forText: /^first\n\$ $/m, timeoutMs: 5000 })).outcome, `round ${i}`).toBe('text');
    }
    await s.kill();
  });

  it('never matches the echo of the keys typed, read before the wait began', async () => {
    const s = await t.driver.create({ allowId: 'py', args: ['-q'], name: 'echo-only' });
    await s.wait({ forText: '>>> ' });
    await s.sendText('needle_1234');
    // Its echo came with the call (or after): it is ours, not the program's.
    expect((await s.wait({ forText: 'needle_1234', timeoutMs: 400 })).outcome).toBe('timeout');
    await s.sendKeys('Enter');
    // Python's answer repeats the name in its NameError: that is output.
    expect((await s.wait({ forText: "name 'needle_1234' is not defined", timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });
});

describe('a text wait right after a send, in a full-screen program (vim through real tmux)', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('vim', '/usr/bin/vim.basic')]);
  });
  afterAll(async () => t.cleanup());

  it("finds the answer vim draws on its command line, the same row each time, never the typed command's echo", async () => {
    const s = await t.driver.create({ allowId: 'vim', args: ['-u', 'NONE', '-N', '-i', 'NONE'], name: 'vim-echo', cols: 80, rows: 24 });
    await s.wait({ forIdleMs: 300 });
    for (let i = 0; i < 5; i++) {
      // The typed command holds "done-" but not the answer; vim redraws the command line with it.
      await s.sendText(`:echo "done-" . (6*7+${i})`);
      expect((await s.wait({ forText: `done-${42 + i}`, timeoutMs: 300 })).outcome, `round ${i}: the echo`).toBe('timeout');
      await s.sendKeys('Enter');
      expect((await s.wait({ forText: `done-${42 + i}`, timeoutMs: 5000 })).outcome, `round ${i}`).toBe('text');
    }
    // The same answer again: the row vim draws it on already shows it, so only the output can tell
    // (through tmux vim's answer came after the call's first output in every run here: the live
    // stream finds it; the bash test above is the one that needs the kept output).
    await s.sendText(':echo "done-" . (6*7+4)');
    await s.sendKeys('Enter');
    expect((await s.wait({ forText: 'done-46', timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });
});
