/**
 * A wait tells the echo of what we typed by where it was typed (the cursor's row then, its wrapped
 * continuation, followed through scrolling; in the output stream, the line that was in progress),
 * not by its content: output that repeats the typed text is output. Real bash and a real Python
 * REPL on both backends (tmux and spawn).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];

describe.each(['tmux', 'spawn'] as const)('echo by position on the %s backend', (backend) => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' }, backend }), allow('py', '/usr/bin/python3', { backend })]);
  });
  afterAll(async () => t.cleanup());

  it('matches "Hello Alice" printed after typing Alice at a read prompt, waiting while it comes', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'read-name' });
    await s.wait({ forText: '$ ' });
    await s.sendText('read -p "Name: " n; sleep 0.3; echo "Hello $n"', { submit: true });
    expect((await s.wait({ forText: 'Name: ' })).outcome).toBe('text');
    await s.sendText('Alice', { submit: true });
    // Pending while the line arrives: found in the output stream.
    const r = await s.wait({ forText: 'Hello Alice', timeoutMs: 5000 });
    expect(r.outcome).toBe('text');
    expect(s.read().content).toContain('Name: Alice\nHello Alice');
    await s.kill();
  });

  it('matches it on the screen when the wait begins after it was printed', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'read-late' });
    await s.wait({ forText: '$ ' });
    await s.sendText('read -p "Name: " n; echo "Hello $n"', { submit: true });
    await s.wait({ forText: 'Name: ' });
    await s.sendText('Alice', { submit: true });
    await s.wait({ forIdleMs: 300 });
    expect(s.read().content).toContain('Hello Alice');
    const r = await s.wait({ forText: /Hello Alice$/m, timeoutMs: 3000 });
    expect(r.outcome).toBe('text');
    expect(r.elapsedMs).toBeLessThan(1000);
    await s.kill();
  });

  it('never takes the echo itself for output, also after output scrolled its row up the screen', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'echo-only', cols: 60, rows: 12 });
    // Closed also when an assertion fails, so that a retry can make its drive under the same name.
    try {
      await s.wait({ forText: '$ ' });
      // Each step types only once the prompt it types at shows, and both prompts come 0.3 s late,
      // so that a step that does not wait for its prompt fails every run, not one run in thirty.
      // (It did: typed before bash's prompt, a line is echoed twice, by the terminal at once and by
      // readline after its prompt; that second echo holds "Name: " and is output to a wait, so the
      // word was typed before read's prompt and echoed after it, not where it was typed.)
      // Fill the screen so that what follows scrolls it.
      await s.sendText('seq 1 20; sleep 0.3', { submit: true });
      await s.wait({ forText: /^20\n\$ $/m });
      // read -n 19 takes the keys as they come and returns after the word's 19th character, with
      // no Enter: the word is typed but not submitted, then five lines scroll its row up.
      await s.sendText('sleep 0.3; read -n 19 -p "Name: " n; echo; seq 101 105', { submit: true });
      await s.wait({ forText: /^Name: $/m });
      await s.sendText('Zebedee-unique-word');
      const r = await s.wait({ forText: 'Zebedee-unique-word', timeoutMs: 3000 });
      expect(r.outcome, JSON.stringify(s.read().content)).toBe('timeout');
      const rows = s.read().content.split('\n');
      const echoRow = rows.findIndex((row) => row.includes('Name: Zebedee-unique-word'));
      expect(rows.slice(echoRow + 1, echoRow + 6)).toEqual(['101', '102', '103', '104', '105']);
      expect(echoRow).toBeLessThan(6);
    } finally {
      await s.kill();
    }
  });

  it('leaves out a long typed line that wrapped onto the next rows, and matches its output', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'wrapped', cols: 40, rows: 12 });
    await s.wait({ forText: '$ ' });
    const word = 'W'.repeat(30);
    await s.sendText(`read -p "> " n; sleep 0.3; echo "got:$n"`, { submit: true });
    await s.wait({ forText: '> ' });
    // 90 typed characters after the prompt wrap over three rows; the 2nd and 3rd hold only typed text.
    await s.sendText(`${word}${word}${word}`);
    expect((await s.wait({ forText: word, timeoutMs: 800 })).outcome).toBe('timeout');
    await s.sendKeys('Enter');
    expect((await s.wait({ forText: `got:${word}`, timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });

  it('matches a program that does not echo and prints its answer where the input was typed', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, name: 'no-echo' });
    await s.wait({ forText: '$ ' });
    // Echo off: neither the typed word nor its Enter shows; the answer lands on the input's row.
    await s.sendText('stty -echo; read n; stty echo; echo "got $n"', { submit: true });
    await s.wait({ forIdleMs: 200 });
    await s.sendText('Alice', { submit: true });
    const r = await s.wait({ forText: 'got Alice', timeoutMs: 5000 });
    expect(r.outcome).toBe('text');
    await s.kill();
  });

  it('matches a REPL printing back a value that was typed', async () => {
    const s = await t.driver.create({ allowId: 'py', args: ['-q'], name: 'repl' });
    expect((await s.wait({ forText: '>>> ', timeoutMs: 10_000 })).outcome).toBe('text');
    await s.sendText("'Alice'", { submit: true });
    const r = await s.wait({ forText: /^'Alice'$/m, timeoutMs: 5000 });
    expect(r.outcome).toBe('text');
    await s.sendText('x = "Bob-value"', { submit: true });
    await s.wait({ forText: '>>> ' });
    await s.sendText('x', { submit: true });
    expect((await s.wait({ forText: /^'Bob-value'$/m, timeoutMs: 5000 })).outcome).toBe('text');
    await s.kill();
  });
});
