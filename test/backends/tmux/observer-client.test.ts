/**
 * A hot standby's observer client against a real tmux 3.3a server (a `cat` pane): tmux lists it
 * read-only and sent no output, and it receives no %output while the pane prints. Read-only is a
 * label for a control client in tmux 3.3a, not a fence: a command on its stdin is run (tmux checks
 * read-only only for commands from a client's command line and for typed keys), which this test
 * pins, so that the design's reliance on it stays visible: nothing in the library writes through an
 * observer (TmuxObserver has no input), and the drive's lease is what fences input.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlClient } from '../../../backends/tmux/control-client.js';
import { systemClock } from '../../../backends/process/system-clock.js';
import type { ControlEvent } from '../../../lib/control/parser.js';

let dir: string;
let socket: string;
const tmux = (...args: string[]): string => spawnSync('tmux', ['-S', socket, ...args], { encoding: 'utf8', timeout: 5000 }).stdout;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'td-obs-'));
  socket = join(dir, 'o.sock');
  expect(spawnSync('tmux', ['-S', socket, '-f', '/dev/null', 'new-session', '-d', '-s', 'obs', '-x', '80', '-y', '24', '--', 'cat'], { timeout: 5000 }).status).toBe(0);
});

afterAll(() => {
  spawnSync('tmux', ['-S', socket, 'kill-server'], { timeout: 5000 });
  rmSync(dir, { recursive: true, force: true });
});

describe('an observer control client (tmux 3.3a)', () => {
  it('is listed read-only with no-output and receives no pane output; a command on its stdin is not refused (read-only is no fence)', async () => {
    const events: ControlEvent[] = [];
    const client = await ControlClient.attach({
      tmuxPath: 'tmux',
      socket,
      session: 'obs',
      clock: systemClock,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      timeoutMs: 5000,
      observer: true,
      onEvent: (e) => events.push(e),
      onClosed: () => undefined,
    });
    try {
      expect(tmux('list-clients', '-F', '#{client_pid}|#{client_readonly}|#{client_flags}')).toMatch(new RegExp(`^${client.pid}\\|1\\|.*no-output`, 'm'));

      // The pane prints (keys from outside); once tmux's grid shows it, a reply on the observer
      // comes after any output tmux would have queued for it: there is none.
      tmux('send-keys', '-t', 'obs', 'printed-by-cat', 'Enter');
      await expect.poll(() => tmux('capture-pane', '-p', '-t', 'obs'), { timeout: 5000 }).toContain('printed-by-cat');
      await client.command({ line: "display-message -p -- '#{client_readonly}'" });
      expect(events.filter((e) => e.kind === 'output')).toEqual([]);

      // tmux 3.3a runs a control client's stdin commands whatever its read-only flag.
      await client.command({ line: 'send-keys -t obs through-the-observer Enter' });
      await expect.poll(() => tmux('capture-pane', '-p', '-t', 'obs'), { timeout: 5000 }).toContain('through-the-observer');
    } finally {
      await client.detach();
    }
  });
});
