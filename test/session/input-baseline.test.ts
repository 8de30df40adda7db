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
});
