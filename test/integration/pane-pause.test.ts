/**
 * A pane tmux pauses for the drive's control client (pause-after: the host fell behind, tmux dropped
 * the queued output) is rebuilt from a capture, continued, and reported as a `resync` event with
 * reason `pause`. The pause is made by tmux itself, through `refresh-client -t <the drive's control
 * client> -A '%N:pause'` from a second tmux process: the same %pause tmux sends when output ages.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];

function tmux(socket: string, args: readonly string[]): string {
  return execFileSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', timeout: 10_000 });
}

describe('a paused pane', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('is rebuilt from a capture and continued: resync events name the reason, output flows again, the mirror equals the grid of tmux', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, cols: 80, rows: 24 });
    try {
      expect((await s.wait({ forText: '$ ', timeoutMs: 10_000 })).outcome).toBe('text');
      const reasons: string[] = [];
      s.on('resync', (reason) => reasons.push(reason));
      await s.resyncNow();
      expect(reasons).toEqual(['requested']);

      const argv = s.attachCommand();
      const socket = argv[argv.indexOf('-S') + 1] as string;
      const control = tmux(socket, ['list-clients', '-F', '#{client_control_mode} #{client_name}'])
        .split('\n')
        .filter((l) => l.startsWith('1 '))
        .map((l) => l.slice(2));
      expect(control).toHaveLength(1);
      // One pane per drive server.
      const pane = tmux(socket, ['list-panes', '-a', '-F', '#{pane_id}']).trim();
      tmux(socket, ['refresh-client', '-t', control[0] as string, '-A', `${pane}:pause`]);
      await expect.poll(() => reasons, { timeout: 10_000 }).toEqual(['requested', 'pause']);

      // Continued by the resync: new output arrives as output again and reaches the screen.
      let output = 0;
      s.on('output', (d) => void (output += d.length));
      await s.sendText('echo after-$((40+2))', { submit: true });
      expect((await s.wait({ forText: 'after-42', timeoutMs: 10_000 })).outcome).toBe('text');
      expect(output).toBeGreaterThan(0);
      expect(s.read().content).toMatch(/^after-42$/m);
      expect((await s.fidelity()).equal).toBe(true);
    } finally {
      await s.kill();
    }
  });
});
