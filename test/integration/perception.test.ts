/**
 * Perception on real sessions: states settle from structure and /proc, not from polling; a
 * destructive dialog is never answered; ghost text is reported, never typed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Attention, Session } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];
const STUCK_MS = 1500;

function collect(s: Session): Attention[] {
  const seen: Attention[] = [];
  s.on('attention', (a) => seen.push(a));
  return seen;
}

describe('perception on real programs', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver(
      [
        allow('bash', '/bin/bash', { env: { PS1: '$ ' } }),
        allow('bash-all', '/bin/bash', { env: { PS1: '$ ' }, autoAnswer: 'all' }),
        allow('py', '/usr/bin/python3'),
      ],
      { worker: { stuckMs: STUCK_MS } },
    );
  });
  afterAll(async () => t.cleanup());

  async function bash(allowId = 'bash'): Promise<Session> {
    const s = await t.driver.create({ allowId, args: BASH });
    await s.wait({ forText: '$ ' });
    return s;
  }

  it('a bash prompt settles to awaiting-input (cursor parked, reading its tty), with an attention event', async () => {
    const s = await bash();
    const seen = collect(s);
    await s.sendText('true', { submit: true });
    await s.wait({ forIdleMs: 400 });
    expect(s.status()).toMatchObject({ state: 'awaiting-input', confidence: 'high' });
    expect(seen.some((a) => a.kind === 'input_needed')).toBe(true);
    await s.kill();
  });

  it('a CPU-bound loop stays working past stuckMs (busy, not stuck)', async () => {
    const s = await bash();
    await s.sendText('while :; do :; done', { submit: true });
    await new Promise((r) => setTimeout(r, STUCK_MS + 1200));
    expect(s.status()).toMatchObject({ state: 'working', busy: 'cpu' });
    await s.signal('interrupt');
    await s.kill();
  });

  it('a program blocked forever with no CPU becomes stuck after stuckMs, with an attention event', async () => {
    const s = await bash();
    const seen = collect(s);
    await s.sendText('sleep 1000', { submit: true });
    await new Promise((r) => setTimeout(r, STUCK_MS + 1200));
    expect(s.status()).toMatchObject({ state: 'stuck', reason: 'no_progress' });
    expect(seen.some((a) => a.kind === 'stuck')).toBe(true);
    await s.kill();
  });

  it('a whiptail "Delete all files?" is awaiting-input with a destructive dialog, and is never auto-answered, even with autoAnswer: all', async () => {
    const s = await bash('bash-all');
    const seen = collect(s);
    const answered: string[] = [];
    s.on('answered', (d) => answered.push(d));
    await s.sendText('whiptail --title Confirm --yesno "Delete all files?" 10 40; echo "rc=$?"', { submit: true });
    await s.wait({ forText: '<No>' });
    await s.wait({ forIdleMs: 600 });
    const st = s.status();
    expect(st.state).toBe('awaiting-input');
    expect(st.dialog).toMatchObject({ kind: 'destructive', safe: false });
    expect(seen.some((a) => a.kind === 'input_needed' && a.reason === 'dialog_destructive')).toBe(true);
    expect(answered).toEqual([]);
    expect(s.read().content).not.toContain('rc=');
    await s.kill();
  });

  it('a wait on a program printing every 100 ms times out with producing: true and a keep-waiting hint', async () => {
    const s = await bash();
    await s.sendText('while :; do echo tick; sleep 0.1; done', { submit: true });
    const r = await s.wait({ forIdleMs: 1000, timeoutMs: 1500 });
    expect(r).toMatchObject({ outcome: 'timeout', producing: true });
    expect(r.hint).toMatch(/keep|larger timeoutMs|still arriving/);
    expect(r.status.state).toBe('working');
    await s.kill();
  });

  it('a fake "(y/n)" printed while output flows stays working', async () => {
    const s = await bash();
    await s.sendText('for i in $(seq 1 30); do echo "Continue? (y/n)"; sleep 0.05; done; sleep 5', { submit: true });
    await new Promise((r) => setTimeout(r, 600));
    const st = s.status();
    expect(st.state).toBe('working');
    expect(st.dialog).toBeUndefined();
    await s.kill();
  });

  it('a composer with a dim suggestion reports it, keeps it out of the text, and submit does not send it', async () => {
    // A tiny composer: a prompt, then a dim suggestion after the cursor, like an AI CLI's ghost text.
    const composer = [
      'import os, sys, tty',
      'tty.setraw(0)',
      'def draw(typed):',
      '    os.write(1, b"\\r\\x1b[2K> " + typed + (b"" if typed else b"\\x1b[2mexplain this codebase\\x1b[0m") + b"\\r\\x1b[" + str(2 + len(typed)).encode() + b"C")',
      'typed = b""',
      'draw(typed)',
      'while True:',
      '    c = os.read(0, 1)',
      '    if c in (b"\\r", b"\\n"):',
      '        os.write(1, b"\\r\\nGOT[" + typed + b"]\\r\\n")',
      '        typed = b""',
      '    elif c == b"\\x03":',
      '        break',
      '    else:',
      '        typed += c',
      '    draw(typed)',
    ].join('\n');
    const s = await t.driver.create({ allowId: 'py', args: ['-c', composer] });
    await s.wait({ forText: 'explain', timeoutMs: 5000 });
    await s.wait({ forIdleMs: 300 });
    const r = s.read();
    expect(r.suggestion).toMatchObject({ visible: true, text: expect.stringContaining('explain this codebase') });
    await s.sendText('hi', { submit: true });
    expect((await s.wait({ forText: /GOT\[/ })).outcome).toBe('text');
    expect(s.read().content).toContain('GOT[hi]');
    expect(s.read().content).not.toContain('GOT[hiexplain');
    await s.kill();
  });
});

describe('the idle reaper', () => {
  it('evicts an idle drive after idleTtlMs, and never a CPU-busy one or one whose screen keeps changing', async () => {
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], { worker: { idleTtlMs: 1500, stuckMs: 60_000 } });
    try {
      // Each busy drive is set going as soon as its prompt shows, and the idle one is made last: on
      // a loaded machine three creates can outlast idleTtlMs, and a drive still at its first prompt
      // by then is rightly reaped (the idle one was, before its own wait: "the mirror is disposed").
      const busy = await t.driver.create({ allowId: 'bash', args: BASH, name: 'busy' });
      await busy.wait({ forText: '$ ' });
      await busy.sendText('while :; do :; done', { submit: true });
      const ticking = await t.driver.create({ allowId: 'bash', args: BASH, name: 'ticking' });
      await ticking.wait({ forText: '$ ' });
      await ticking.sendText('while :; do date +%N; sleep 0.3; done', { submit: true });
      const idle = await t.driver.create({ allowId: 'bash', args: BASH, name: 'idle' });
      await idle.wait({ forText: '$ ' });
      await new Promise((r) => setTimeout(r, 1500 + 2500));
      const states = Object.fromEntries(t.driver.list().map((i) => [i.id, i]));
      expect(states.idle).toMatchObject({ state: 'failed', reason: 'evicted:worker.idlettlms' });
      expect(() => idle.read()).toThrow(expect.objectContaining({ code: 'SESSION_CLOSED', message: expect.stringContaining('evicted') }));
      expect(states.busy?.state).toBe('live');
      expect(states.ticking?.state).toBe('live');
    } finally {
      await t.cleanup();
    }
  });
});

describe('soft newlines', () => {
  it("sends a multi-line message as one submission with the profile's convention (M-Enter for aider)", async () => {
    // A raw receiver: prints the bytes of each submission (up to a CR not preceded by ESC) in hex.
    const receiver = [
      'import os, tty',
      'tty.setraw(0)',
      'buf = b""',
      'os.write(1, b"> ")',
      'while True:',
      '    c = os.read(0, 1)',
      '    if c == b"\\r" and not buf.endswith(b"\\x1b"):',
      '        os.write(1, b"\\r\\nSUBMIT " + buf.hex().encode() + b"\\r\\n> ")',
      '        buf = b""',
      '    else:',
      '        buf += c',
    ].join('\n');
    const t = await openDriver([allow('aider', '/usr/bin/python3', { profile: 'aider' })]);
    try {
      const s = await t.driver.create({ allowId: 'aider', args: ['-c', receiver] });
      await s.wait({ forText: '> ' });
      await s.sendText('first line\nsecond line', { submit: true });
      expect((await s.wait({ forText: /SUBMIT [0-9a-f]+/ })).outcome).toBe('text');
      const hex = /SUBMIT ([0-9a-f]+)/.exec(s.read().content)?.[1] ?? '';
      expect(Buffer.from(hex, 'hex').toString('latin1')).toBe('first line\x1b\rsecond line');
      expect(s.read().content.match(/SUBMIT/g)?.length).toBe(1);
      await s.kill();
    } finally {
      await t.cleanup();
    }
  });
});

describe('submit', () => {
  it('presses Enter again when a composer swallowed the first one (screen unchanged, text still on the input line)', async () => {
    // A composer that ignores an Enter coming less than 300 ms after the last typed character, as
    // some AI CLIs do while they still take the text for a paste.
    const composer = [
      'import os, tty, time',
      'tty.setraw(0)',
      'typed = b""; last = 0.0',
      'os.write(1, b"> ")',
      'while True:',
      '    c = os.read(0, 1)',
      '    now = time.monotonic()',
      '    if c == b"\\r":',
      '        if now - last < 0.3:',
      '            continue',
      '        os.write(1, b"\\r\\nGOT[" + typed + b"]\\r\\n> ")',
      '        typed = b""',
      '    else:',
      '        typed += c; last = now',
      '        os.write(1, c)',
    ].join('\n');
    const t = await openDriver([allow('py', '/usr/bin/python3')]);
    try {
      const s = await t.driver.create({ allowId: 'py', args: ['-c', composer] });
      await s.wait({ forText: '> ' });
      await s.sendText('hello there', { submit: true });
      expect((await s.wait({ forText: /GOT\[hello there\]/, timeoutMs: 5000 })).outcome).toBe('text');
      expect(s.read().content.match(/GOT/g)?.length).toBe(1);
      expect(s.transcript().filter((e) => e.kind === 'keys' && e.tags?.retry !== undefined).length).toBeGreaterThanOrEqual(1);
      await s.kill();
    } finally {
      await t.cleanup();
    }
  });
});
