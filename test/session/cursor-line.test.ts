/**
 * Session.cursorLine against a real program in a pty: the line under the cursor as read() shows
 * its rows (a wrapped line whole), a secret on it redacted also when it began rows above, and the
 * caller's request counted like a read.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { b62 } from '../fake-secrets.js';
import { spawnSession, type SpawnSession } from './spawn-session.js';

/**
 * Prints `text` with no newline after it, then echoes what is typed until EOF (the tty echoes). It
 * prints 0.3 s late, so that a test that does not wait for its text fails every run (a wait for
 * 200 ms of quiet failed now and then under load: python had printed nothing yet).
 */
const printThenRead = (text: string): string[] => ['/usr/bin/python3', '-c', `import sys, time\ntime.sleep(0.3)\nsys.stdout.write(${JSON.stringify(text)})\nsys.stdout.flush()\nsys.stdin.read()`];

/** The rows read() shows from `first`, `count` of them (digest mode: right-trimmed). */
const readRows = (d: SpawnSession, first: number, count: number): string => d.session.read({ mode: 'full' }).content.split('\n').slice(first, first + count).join('\n');

let open: SpawnSession | undefined;
afterEach(async () => {
  await open?.close();
  open = undefined;
});

describe('Session.cursorLine', () => {
  it('is the cursor row as read() shows it, and follows typing', async () => {
    open = await spawnSession(printThenRead('first line\n> '));
    const s = open.session;
    await s.wait({ forText: '> ', timeoutMs: 5000 });
    await s.sendText('hello');
    await s.wait({ forIdleMs: 200, timeoutMs: 5000 }); // a wait for text never matches our own echo
    const line = s.cursorLine();
    expect(line.text).toBe('> hello');
    expect(line).toMatchObject({ firstRow: 1, rowCount: 1, cursor: { x: 7, y: 1 }, redactions: 0, untrusted: true });
    expect(line.text).toBe(readRows(open, line.firstRow, line.rowCount));
  });

  it('a line typed past the right margin is read whole, from the row it starts on', async () => {
    open = await spawnSession(printThenRead('$ '));
    const s = open.session;
    await s.wait({ forText: '$ ', timeoutMs: 5000 });
    const typed = 'w'.repeat(100); // 80 columns: the echo wraps onto a second row
    await s.sendText(typed);
    await s.wait({ forIdleMs: 200, timeoutMs: 5000 });
    const line = s.cursorLine();
    expect(line).toMatchObject({ firstRow: 0, rowCount: 2, cursor: { y: 1 } });
    expect(line.text).toBe(`$ ${'w'.repeat(78)}\n${'w'.repeat(22)}`);
    expect(line.text).toBe(readRows(open, 0, 2));
  });

  it('a private key whose header is rows above the cursor is redacted on the cursor line (raw only when asked)', async () => {
    const tail = b62(70, 6);
    open = await spawnSession(printThenRead(`$ cat key\n-----BEGIN OPENSSH PRIVATE KEY-----\n${b62(70, 5)}\n${tail}`));
    const s = open.session;
    await s.wait({ forText: tail, timeoutMs: 5000 }); // its last text: the cursor is after it
    expect(s.read({ redact: false }).content).toContain(tail); // the secret is on the screen
    const line = s.cursorLine();
    expect(line.firstRow).toBe(3);
    expect(line.text).not.toContain(tail);
    expect(line.redactions).toBeGreaterThan(0);
    expect(s.read().content).not.toContain(tail);
    expect(s.cursorLine({ redact: false }).text).toBe(tail);
  });

  it('a token the program leaves the cursor after is redacted', async () => {
    const token = `ghp_${b62(36, 15)}`;
    open = await spawnSession(printThenRead(`export GH=${token}`));
    const s = open.session;
    // Its text, not 200 ms of quiet: python starting slower than that under load printed nothing yet.
    await s.wait({ forText: token, timeoutMs: 5000 });
    expect(s.cursorLine({ redact: false }).text).toBe(`export GH=${token}`);
    const line = s.cursorLine();
    expect(line.text).not.toContain(token.slice(4, 16));
    expect(line.text.startsWith('export GH=')).toBe(true);
    expect(line.redactions).toBe(1);
  });

  it('counts against maxRequestsPerSession like read()', async () => {
    open = await spawnSession(printThenRead('$ '), { limits: { maxRequestsPerSession: 2 } });
    const s = open.session;
    s.cursorLine();
    s.cursorLine();
    expect(() => s.cursorLine()).toThrow(expect.objectContaining({ code: 'LIMIT_REACHED' }));
  });
});
