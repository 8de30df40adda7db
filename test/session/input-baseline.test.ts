/**
 * The input baseline (the screen rows as they were when keys were sent) is read by whatever needs
 * it first: a wait, or the output that changes the screen (not while tmux handles the keys, nor at
 * their reply: docs/benchmarks.md, 2026-12-02 10:31). Keys with no echo (stty -echo) leave it to a
 * wait or to the program's later output. A wait that begins later must still tell rows the program
 * changed after the input from rows that already showed the same text. Real bash on a real tmux
 * server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

describe('the input baseline of keys with no echo (tmux backend)', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  it('counts only rows changed after the input, whether the wait begins before or after the output', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'silent-keys' });
    await s.wait({ forText: '$ ' });
    // GOT-NEW is on the screen before the keys; the program prints it again 2 s after them.
    await s.sendText('stty -echo; echo GOT-NEW; read -r -n 3 line; sleep 2; echo; echo "GOT-$line"; echo E""ND', { submit: true });
    await s.wait({ forIdleMs: 300, timeoutMs: 10_000 });
    await s.sendText('NEW');
    // Within 500 ms of the keys nothing new is printed: the old GOT-NEW rows are the baseline's.
    expect((await s.wait({ forText: 'GOT-NEW', timeoutMs: 500 })).outcome).toBe('timeout');
    expect((await s.wait({ forText: /^END$/m, timeoutMs: 10_000 })).outcome).toBe('text');
    // Begun after the second GOT-NEW was printed: found on a row that changed since the input.
    expect((await s.wait({ forText: 'GOT-NEW', timeoutMs: 2000 })).outcome).toBe('text');
    expect(s.read().content).toMatch(/GOT-NEW\n[\s\S]*\nGOT-NEW\nEND/);
    await s.kill();
  });

  it('reads the screen anew for keys typed after output that came between an echo and them (the read ahead of that echo is stale)', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'ahead-stale' });
    await s.wait({ forText: '$ ' });
    // LATE-LINE is printed 1 s from now, while keys sit on the prompt.
    await s.sendText('(sleep 1; echo LATE-LINE) &', { submit: true });
    await s.wait({ forIdleMs: 300, timeoutMs: 10_000 });
    // Typed and echoed one key at a time: after each echo the next key's mark and baseline are read ahead.
    for (const key of ['e', 'c', 'h', 'o']) await s.sendText(key);
    expect((await s.wait({ forText: 'LATE-LINE', timeoutMs: 5000 })).outcome).toBe('text');
    // Typed after LATE-LINE moved the cursor to the row below it: its mark and baseline are read now.
    await s.sendText(' QZ');
    await s.wait({ forIdleMs: 200, timeoutMs: 5000 });
    expect(s.cursorLine().text).toBe(' QZ');
    // LATE-LINE was on the screen before the keys, and QZ is their echo, where they were typed: neither is new.
    expect((await s.wait({ forText: 'LATE-LINE', timeoutMs: 500 })).outcome).toBe('timeout');
    expect((await s.wait({ forText: 'QZ', timeoutMs: 500 })).outcome).toBe('timeout');
    // What the program prints after them is: Enter runs the line bash holds, `echo QZ`.
    await s.sendKeys('Enter');
    expect((await s.wait({ forText: /^QZ$/m, timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });

  it('reads the screen anew for keys typed after a resize between an echo and them (the cursor row the read ahead saw is gone)', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'ahead-resize', cols: 80, rows: 24 });
    await s.wait({ forText: '$ ' });
    // The prompt on the last of 24 rows: after the resize to 12 it is on row 11, not 23.
    await s.sendText('seq 1 40', { submit: true });
    expect((await s.wait({ forText: /^40\n\$ $/m, timeoutMs: 5000 })).outcome).toBe('text');
    await s.wait({ forIdleMs: 300, timeoutMs: 5000 });
    // One key at a time: after each echo the next key's mark and baseline are read ahead.
    for (const key of ['e', 'c', 'h', 'o']) await s.sendText(key);
    await s.wait({ forIdleMs: 300, timeoutMs: 5000 });
    await s.resize(80, 12);
    await s.wait({ forIdleMs: 300, timeoutMs: 5000 });
    expect(s.read().content.split('\n')).toHaveLength(12);
    await s.sendText(' QZ');
    await s.wait({ forIdleMs: 200, timeoutMs: 5000 });
    expect(s.cursorLine().text).toBe('$ echo QZ');
    // QZ is the keys' echo where they were typed (the row found after the resize): not new output.
    expect((await s.wait({ forText: 'QZ', timeoutMs: 500 })).outcome).toBe('timeout');
    await s.sendKeys('Enter');
    expect((await s.wait({ forText: /^QZ$/m, timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });
});
