/**
 * status() through a real drive: the process sample taken when output stops reaches the
 * classifier, so a program blocked reading its terminal is awaiting-input (tty_read) as soon as
 * its output settles, not once stuckMs has passed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Session, SessionStatus } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

/** Far beyond the test's waits: a verdict seen in time cannot come from the stuck check. */
const STUCK_MS = 60_000;

/** The first published state matching `want`, or a rejection after `ms` naming what was published. */
function published(s: Session, want: (st: SessionStatus) => boolean, ms: number): Promise<SessionStatus> {
  return new Promise((resolve, reject) => {
    const seen: string[] = [];
    const check = (st: SessionStatus): void => {
      seen.push(`${st.state}/${st.reason}`);
      if (!want(st)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(st);
    };
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`not published within ${ms} ms; published: ${seen.join(', ') || 'nothing'}; status now ${JSON.stringify(s.status())}`));
    }, ms);
    const sub = s.on('state', check);
    check(s.status());
  });
}

describe('a program reading its terminal', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash'), allow('py', '/usr/bin/python3')], { worker: { stuckMs: STUCK_MS } });
  });
  afterAll(async () => t.cleanup());

  const programs: ReadonlyArray<readonly [string, string, readonly string[]]> = [
    ['cat', 'bash', ['--norc', '--noprofile', '-c', 'echo ready; exec cat']],
    ['python input()', 'py', ['-c', 'print("ready", flush=True); input()']],
  ];
  it.each(programs)('%s is awaiting-input (tty_read) once its output settles, long before stuckMs', async (_name, allowId, args) => {
    const s = await t.driver.create({ allowId, args: [...args] });
    try {
      await s.wait({ forText: 'ready' });
      const started = Date.now();
      const st = await published(s, (x) => x.state === 'awaiting-input', 5000);
      expect(st).toMatchObject({ state: 'awaiting-input', reason: 'tty_read', confidence: 'medium' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect(s.status()).toMatchObject({ state: 'awaiting-input', reason: 'tty_read' });
    } finally {
      await s.kill();
    }
  });
});

describe('a "(y/n)" and who reads it (issue 12 class 5): the process sample decides', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash'), allow('node', '/usr/bin/node')], { worker: { stuckMs: STUCK_MS } });
  });
  afterAll(async () => t.cleanup());

  const cases: ReadonlyArray<readonly [string, string, readonly string[], (st: SessionStatus) => boolean, Partial<SessionStatus>]> = [
    // printf, then sleep: bash waits for its child, the child sleeps: nothing will read an answer.
    // (Until the quiet watch samples the tree, 250 ms after the output, it reads as a dialog.)
    ['printed, then a sleep: working (no_reader), no dialog', 'bash', ['--norc', '--noprofile', '-c', 'printf "Continue? (y/n) "; sleep 60'], (x) => x.reason === 'no_reader', { state: 'working', reason: 'no_reader' }],
    ['read -p: the live confirm dialog', 'bash', ['--norc', '--noprofile', '-c', 'read -p "Continue? (y/n) " a; sleep 60'], (x) => x.state === 'awaiting-input', { state: 'awaiting-input', reason: 'dialog_detected' }],
    // A node prompt waits in epoll, where no read is seen: the question must stand.
    [
      'a node prompt (epoll, no read seen): the live confirm dialog',
      'node',
      ['-e', 'process.stdout.write("Continue? (y/n) "); process.stdin.on("data", () => process.exit(0));'],
      (x) => x.state === 'awaiting-input',
      { state: 'awaiting-input', reason: 'dialog_detected' },
    ],
  ];
  it.each(cases)('%s', async (_name, allowId, args, want, expected) => {
    const s = await t.driver.create({ allowId, args: [...args] });
    try {
      await s.wait({ forText: 'Continue?' });
      const st = await published(s, want, 5000);
      expect(st).toMatchObject(expected);
      if (expected.state === 'working') expect(st.dialog).toBeUndefined();
      else expect(st.dialog?.kind).toBe('confirm');
    } finally {
      await s.kill();
    }
  });
});
