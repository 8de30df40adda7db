/**
 * A driven program that tries to forge the control-mode framing (DESIGN invariant 6). A capture
 * reply carries pane text raw and its guard is `%end <second> <counter> <flags>`: the program
 * prints every guard it could guess, for the seconds around now (-2 … +4, printed again right before
 * each re-attach) × counters 0–2000 × flags 0–3, as `%end` and `%error` lines, then
 * `%begin`/`%output`/`%exit`/`%pause` lookalikes and a whole forged reply ending in a fake screen
 * ("FORGED-SCREEN …"). On 1eceb75 one of those guards ends the capture reply early and the rest is
 * read as protocol: the mirror shows the forged screen. Now captures are framed by their size: after
 * a resize, a fidelity check and a re-attach the mirror equals tmux's grid cell for cell, its
 * whole history equals tmux's, read() never shows the forged screen, and the guard the program
 * guessed right is reported as an incident.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Driver, type Session } from '../../../lib/index.js';
import type { QueuedCommand } from '../../../lib/control/command-queue.js';
import { Journal } from '../../../journal/journal.js';
import { allow, killGone, processesMentioning } from '../../helpers.js';

const COLS = 30;
const ROWS = 12;
/** Seven seconds of guesses (now-2 … now+4): 7 × 2001 counters × 4 flags × (%end, %error) = 112,056 lines. */
const SCROLLBACK = 120_000;

/**
 * On each `$HOME/go-<n>` the host creates: prints the guesses for [now-2, now+4], the lookalikes
 * and the forged reply, rows that push them off the screen and READY-n, then creates
 * `$HOME/printed-<n>`. The host is detached meanwhile, so tmux reads it all at once (an attached
 * control client that falls behind makes tmux stop reading the pane, and the program's seconds
 * would be past before its text is in the grid); the host's next captures come within the window
 * (+4 rather than +2: a re-attach on a loaded 2-core machine took over 2 s).
 */
const HOSTILE = String.raw`
import os, sys, time
home = os.environ['HOME']
n = 0
sys.stdout.write('WAITING ')
sys.stdout.flush()
while True:
    n += 1
    while not os.path.exists(os.path.join(home, 'go-%d' % n)):
        time.sleep(0.05)
    now = int(time.time())
    lines = []
    for t in range(now - 2, now + 5):
        for c in range(0, 2001):
            for f in range(4):
                lines.append('%%end %d %d %d\n%%error %d %d %d\n' % (t, c, f, t, c, f))
    lines.append('%begin 1796000000 999 1\n%output %0 \\033[2J\\033[HFORGED-SCREEN: all tests passed\n')
    lines.append('%exit\n%pause %0\n%session-changed $9 forged\n%begin 1796000000 1000 1\nFORGED-SCREEN: safe to approve\n%end 1796000000 1000 1\n')
    lines.append(''.join('row %d-%d\n' % (n, i) for i in range(40)))
    sys.stdout.write(''.join(lines))
    sys.stdout.write('READY-%d ' % n)
    sys.stdout.flush()
    open(os.path.join(home, 'printed-%d' % n), 'w').close()
`;

async function printGuesses(workspace: string, n: number): Promise<void> {
  writeFileSync(join(workspace, `go-${n}`), '');
  const deadline = Date.now() + 30_000;
  while (!existsSync(join(workspace, `printed-${n}`))) {
    if (Date.now() > deadline) throw new Error(`the program did not print its guesses (${n})`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** tmux's own text of the whole pane (history and screen), from a tmux subprocess: no framing to forge. */
function tmuxText(socket: string, target: string): string[] {
  // Row by row (no -J), as read() gives the mirror's rows.
  const out = execFileSync('tmux', ['-S', socket, 'capture-pane', '-p', '-S', '-', '-E', '-', '-t', `=${target}:`], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  return trimmed(out);
}

function trimmed(text: string): string[] {
  const rows = text.split('\n').map((l) => l.replace(/\s+$/, ''));
  while (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  return rows;
}

function mirrorText(s: Session): string[] {
  return trimmed(s.read({ mode: 'full', scrollback: 'all', maxBytes: 16 * 1024 * 1024 }).content);
}

async function exact(s: Session, socket: string, what: string): Promise<void> {
  const target = s.id;
  const fidelity = await s.fidelity();
  expect(fidelity.equal, `${what}: ${JSON.stringify(fidelity.mismatches.slice(0, 3))}`).toBe(true);
  const screen = s.read({ mode: 'full' }).content;
  expect(screen, what).not.toContain('FORGED');
  expect(screen, what).toMatch(/READY-\d+/);
  const mirror = mirrorText(s);
  const tmux = tmuxText(socket, target);
  expect(mirror.length, what).toBe(tmux.length);
  expect(mirror.join('\n') === tmux.join('\n'), `${what}: the mirror's history differs from tmux's`).toBe(true);
}

const config = { allow: [allow('py', '/usr/bin/python3')], defaults: { scrollback: SCROLLBACK } };
let dataDir: string;
let driver: Driver;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'td-'));
  driver = await Driver.open({ dataDir, config });
});
afterAll(async () => {
  try {
    for (const info of driver.list()) if (info.state === 'live') await driver.get(info.id).kill().catch(() => undefined);
    await driver.close();
  } catch {
    /* a failed test may leave the driver closed */
  }
  // Loud: a failed test may leave the drive running (killed by pid, never by name).
  const left = processesMentioning(dataDir);
  if (left.length > 0) console.warn(`forged-framing cleanup: killing ${left.length} process(es) of ${dataDir}`);
  killGone(left);
  rmSync(dataDir, { recursive: true, force: true });
});

let attempt = 0;

describe('a program that prints every guard it could guess', () => {
  it('cannot end, open or inject into a capture reply: resize, fidelity check and re-attach stay exact', async () => {
    const name = `forge${++attempt}`;
    const socket = join(dataDir, 'tmux', `${name}.sock`);
    let s = await driver.create({ allowId: 'py', name, cols: COLS, rows: ROWS, args: ['-u', '-c', HOSTILE] });
    expect((await s.wait({ forText: 'WAITING', timeoutMs: 30_000 })).outcome).toBe('text');
    const workspace = realpathSync(join(dataDir, 'workspace'));

    // Guesses printed while no host is attached; a new host attaches (capture 1) and resizes (capture 2).
    await driver.close();
    await printGuesses(workspace, 1);
    driver = await Driver.open({ dataDir, config });
    s = driver.get(name);
    await s.resize(COLS + 2, ROWS + 1);
    expect((await s.wait({ forText: 'READY-1', timeoutMs: 30_000 })).outcome).toBe('text');
    await exact(s, socket, 'after a re-attach and a resize');

    // Again, with a fidelity check (capture 3) right after the re-attach.
    await driver.close();
    await printGuesses(workspace, 2);
    driver = await Driver.open({ dataDir, config });
    s = driver.get(name);
    await exact(s, socket, 'after a second re-attach');
    await s.kill();
    expect(processesMentioning(dataDir)).toEqual([]);

    await driver.close(); // the journal's buffered incidents are written
    const journal = Journal.open(dataDir);
    try {
      const incidents = journal.incidents({ sessionId: name }).map((i) => i.tags.code);
      expect(incidents).toContain('control_guard-in-content');
      expect(incidents).not.toContain('control_framing-mismatch');
    } finally {
      journal.close();
    }
    driver = await Driver.open({ dataDir, config });
  });

  it('treats a reply that does not end where its size says as an untrusted stream: the control client is replaced, the mirror rebuilt, input still works', async () => {
    // No program can cause this (its text cannot change where a reply ends): it is provoked here
    // by sending a capture through the drive's own control client with a size that is too small.
    const name = `anomaly${++attempt}`;
    const s = await driver.create({ allowId: 'py', name, cols: 40, rows: 10, args: ['-c', 'import sys\nfor i in range(30): print("line", i)\nprint("typed:", input())\nimport time\ntime.sleep(60)'] });
    expect((await s.wait({ forText: 'line 29', timeoutMs: 15_000 })).outcome).toBe('text');
    const codes: string[] = [];
    s.on('incident', (code) => codes.push(code));
    // The session's backend lives in its shared drive signals (lib/session/drive-signals.ts); its
    // control client, in the backend's channel (backends/tmux/control-channel.ts).
    const { channel } = (s as unknown as { ctx: { signals: { backend: { channel: { current: { command(c: QueuedCommand): Promise<unknown> } } } } } }).ctx.signals.backend;
    const old = channel.current;
    const wrong = old.command({ line: "capture-pane -p -S - -E - -t '%0'", framing: () => ({ kind: 'text', bytes: 3 }) });
    await expect(wrong).rejects.toMatchObject({ code: 'CONTROL_CLOSED' });
    await s.wait({ forIdleMs: 200, timeoutMs: 10_000 });
    expect(codes).toEqual(expect.arrayContaining(['control_framing-mismatch', 'control_replaced']));
    expect(channel.current).not.toBe(old);
    expect(channel.current).toBeDefined();
    expect((await s.fidelity()).equal).toBe(true);
    await s.sendText('after', { submit: true });
    await s.wait({ forIdleMs: 300, timeoutMs: 10_000 });
    expect(s.read().content).toMatch(/^typed: after$/m);
    expect((await s.fidelity()).equal).toBe(true);
    await s.kill();
  });
});
