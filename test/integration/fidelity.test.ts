/**
 * Mirror fidelity: after scripted interaction with real programs, the mirror fed by the live
 * %output stream equals tmux's own grid cell for cell (characters, attributes) and cursor; also
 * after a resize and after a forced resync.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const BASH = ['--norc', '--noprofile'];

interface Scenario {
  readonly name: string;
  /** Steps: text to submit, keys to press, or text to wait for. */
  readonly steps: ReadonlyArray<{ submit?: string; keys?: string[]; text?: string; until?: string | RegExp; idle?: number }>;
  /** Text the program shows once it has redrawn for the new size. */
  readonly afterResize?: string;
}

const SCENARIOS: Scenario[] = [
  {
    name: 'bash with colours, wide characters and a long wrapped line',
    steps: [
      { submit: `printf '\\e[1;31mred\\e[0m \\e[2mdim\\e[0m \\e[4;44munder\\e[0m \\e[7minv\\e[0m \\e[38;2;255;100;0mtrue\\e[0m é中😀⚡ done\\n'`, until: 'done' },
      { submit: `printf 'x%.0s' $(seq 1 300); echo; seq 1 60`, until: /^60$/m },
    ],
  },
  {
    name: 'python3 REPL',
    steps: [
      { submit: 'python3 -q', until: '>>> ' },
      { submit: 'print("\\x1b[32mgreen\\x1b[0m", [i * i for i in range(30)])', until: '841' },
      { submit: 'def f(x):', until: '... ' },
      { submit: '    return x + 1', until: '... ' },
      { submit: '', until: '>>> ' },
    ],
  },
  {
    name: 'vim on the alternate screen',
    steps: [
      { submit: 'vim -u NONE -i NONE -N notes.txt', until: 'notes.txt' },
      { keys: ['i'] },
      { text: 'hello from vim\n\tindented é中😀\nlast line', idle: 300 },
      { keys: ['Escape'], idle: 300 },
      // Rows that end with what we typed are its echo to a wait, so vim steps settle on idle.
      { submit: ':set number', idle: 400 },
    ],
  },
  {
    name: 'less over a long file',
    steps: [
      { submit: 'seq -f "row %05g of the file" 1 500 > long.txt; less long.txt', until: 'row 00010' },
      { keys: ['Space'], until: 'row 00030' },
      { text: '/00250\r', until: 'row 00260' },
    ],
  },
  {
    name: 'htop',
    steps: [{ submit: 'htop', until: /F10|Quit/ }],
  },
  {
    name: 'whiptail yes/no dialog',
    steps: [{ submit: 'whiptail --title Confirm --yesno "Delete all files?" 10 40', until: '<No>' }],
  },
  {
    // Like curses, it emits SGR only when its pen changes: the redraw after SIGWINCH relies on the
    // terminal still having the pen it set before the resize (tmux 3.3a cannot report it).
    name: 'a program that redraws on SIGWINCH with the pen it left set',
    steps: [
      {
        submit:
          'python3 -c "import os, signal, sys, time; w = sys.stdout.write; ' +
          "w('\\x1b[?1049h\\x1b[H\\x1b[30;46mpen-' + 'ready'); sys.stdout.flush(); " +
          "signal.signal(signal.SIGWINCH, lambda *a: (w('\\x1b[2;3Hsize %d %d' % tuple(os.get_terminal_size())), sys.stdout.flush())); " +
          '[time.sleep(1) for _ in iter(int, 1)]"',
        until: 'pen-ready',
      },
    ],
    afterResize: 'size 90 26',
  },
  {
    name: 'fzf selector',
    steps: [
      { submit: "printf 'alpha\\nbeta\\ngamma\\ndelta\\n' | fzf", until: '4/4' },
      { text: 'ta', until: /\b2\/4/ },
    ],
  },
];

describe('mirror fidelity against real programs', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  async function run(s: Session, sc: Scenario): Promise<void> {
    await s.wait({ forText: '$ ', timeoutMs: 10_000 });
    for (const step of sc.steps) {
      if (step.submit !== undefined) await s.sendText(step.submit, { submit: true });
      if (step.keys) await s.sendKeys(step.keys);
      if (step.text !== undefined) await s.sendText(step.text);
      if (step.idle !== undefined) await s.wait({ forIdleMs: step.idle });
      if (step.until !== undefined) expect((await s.wait({ forText: step.until, timeoutMs: 10_000 })).outcome, `${sc.name}: ${String(step.until)}`).toBe('text');
    }
    await s.wait({ forIdleMs: 300 });
  }

  async function expectExact(s: Session, when: string): Promise<void> {
    const report = await s.fidelity();
    expect({ when, equal: report.equal, cursor: report.cursorMatches, first: report.mismatches.slice(0, 3) }).toEqual({ when, equal: true, cursor: true, first: [] });
  }

  for (const sc of SCENARIOS) {
    it(`${sc.name}: exact live, after a resize, and after a forced resync`, async () => {
      const s = await t.driver.create({ allowId: 'bash', args: BASH, cols: 100, rows: 30 });
      try {
        writeFileSync(join(t.dataDir, 'workspace', 'notes.txt'), '');
        await run(s, sc);
        await expectExact(s, 'live');
        await s.resize(90, 26);
        if (sc.afterResize !== undefined) expect((await s.wait({ forText: sc.afterResize, timeoutMs: 10_000 })).outcome, `${sc.name}: ${sc.afterResize}`).toBe('text');
        await s.wait({ forIdleMs: 400 });
        await expectExact(s, 'after resize');
        await s.resyncNow();
        await expectExact(s, 'after resync');
      } finally {
        await s.kill();
      }
    });
  }

  it('the pen a program leaves set carries across a requested resync and a resize (typed echo uses it)', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: BASH, cols: 100, rows: 30 });
    try {
      await run(s, { name: 'pen', steps: [{ submit: "printf '\\e[1;30;46m'", idle: 300 }] });
      await expectExact(s, 'live');
      await s.resyncNow();
      await s.sendText('abc', { settle: 300 });
      await expectExact(s, 'typed after a resync');
      await s.resize(90, 26);
      await s.wait({ forIdleMs: 400 });
      await s.sendText('def', { settle: 300 });
      await expectExact(s, 'typed after a resize');
      expect(s.read().content).toContain('abcdef');
    } finally {
      await s.kill();
    }
  });
});
