/**
 * Operator takeover: a person attaches a real terminal (node-pty) with attachCommand() while the
 * library drives; both see the same screen, the window size does not change, the driver notices
 * the operator, and detaching leaves the drive running.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pty from 'node-pty';
import type { Session } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

function nextOperators(s: Session, count: number): Promise<void> {
  return new Promise((ok) => {
    const sub = s.on('operators', (clients) => {
      if (clients.length === count) {
        sub.dispose();
        ok();
      }
    });
  });
}

describe('operator takeover', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  it('shares the screen with an attached operator, keeps the size, and survives the detach', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 80, rows: 24 });
    await s.wait({ forText: '$ ' });
    const [file, ...args] = s.attachCommand();
    const attached = nextOperators(s, 1);
    const term = pty.spawn(file!, args, { cols: 120, rows: 40, env: { TERM: 'xterm-256color', PATH: '/usr/bin:/bin' } });
    let seen = '';
    term.onData((d) => {
      seen += d;
    });
    await attached;
    expect(s.operators.length).toBe(1);
    term.write('echo typed-by-operator-$((3 * 3))\r');
    expect((await s.wait({ forText: 'typed-by-operator-9', timeoutMs: 5000 })).outcome).toBe('text');
    await s.sendText('echo typed-by-library', { submit: true });
    expect((await s.wait({ forText: /^typed-by-library$/m })).outcome).toBe('text');
    await new Promise((r) => setTimeout(r, 300));
    expect(seen).toContain('typed-by-library');
    expect(s.read()).toMatchObject({ cols: 80, rows: 24 });
    await s.wait({ forIdleMs: 200 });
    expect((await s.fidelity()).equal).toBe(true);
    const detached = nextOperators(s, 0);
    term.write('\x02d'); // the tmux prefix (C-b) then d: detach
    await detached;
    expect(s.status().state).not.toBe('exited');
    await s.sendText('echo still-driven', { submit: true });
    expect((await s.wait({ forText: /^still-driven$/m })).outcome).toBe('text');
    term.kill();
    await s.kill();
  });

  it('a read-only operator sees the screen but cannot type', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'] });
    await s.wait({ forText: '$ ' });
    const [file, ...args] = s.attachCommand({ readOnly: true });
    expect(args).toContain('-r');
    const attached = nextOperators(s, 1);
    const term = pty.spawn(file!, args, { cols: 80, rows: 24, env: { TERM: 'xterm-256color', PATH: '/usr/bin:/bin' } });
    await attached;
    term.write('echo should-not-arrive\r');
    const r = await s.wait({ forText: 'should-not-arrive', timeoutMs: 800 });
    expect(r.outcome).toBe('timeout');
    term.kill();
    await s.kill();
  });

  it('an operator who left the pane in copy mode does not swallow the library\'s keys: the mode is left first', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 80, rows: 24 });
    await s.wait({ forText: '$ ' });
    const [file, ...args] = s.attachCommand();
    const attached = nextOperators(s, 1);
    const term = pty.spawn(file!, args, { cols: 80, rows: 24, env: { TERM: 'xterm-256color', PATH: '/usr/bin:/bin' } });
    let seen = '';
    term.onData((d) => {
      seen += d;
    });
    await attached;
    // Keys typed before the client has drawn the session can be lost (tmux 3.3a itself: with no
    // tmux-drive and an empty config, C-b [ typed at %client-session-changed entered copy mode in
    // 8 of 10 runs, 10 of 10 after 300 ms): type once the terminal shows the prompt, as a person would.
    for (let i = 0; i < 100 && !seen.includes('$ '); i++) await new Promise((r) => setTimeout(r, 20));
    term.write('\x02['); // the tmux prefix (C-b) then [: copy mode, its position shown top right
    for (let i = 0; i < 100 && !/\[0\/\d+\]/.test(seen); i++) await new Promise((r) => setTimeout(r, 50));
    expect(seen).toMatch(/\[0\/\d+\]/);
    // No event says the library has heard %pane-mode-changed and asked tmux: give it a generous moment.
    await new Promise((r) => setTimeout(r, 1000));
    // In copy mode these keys would be copy-mode commands (e: forward word end, c, h, o …) and never reach bash.
    await s.sendText('echo after-copy-mode', { submit: true });
    expect((await s.wait({ forText: /^after-copy-mode$/m, timeoutMs: 5000 })).outcome).toBe('text');
    term.kill();
    await s.kill();
  });
});
