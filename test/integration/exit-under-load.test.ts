/**
 * Exit status under load (issue 13). tmux 3.3a marks a pane dead on the pty's EOF or on the
 * program's reap, whichever comes first, and knows the status only after the reap: twenty drives
 * end at once, with mixed codes and signals, while real busy processes hold both cores, and every
 * status and outcome must come out right — never `exit_unknown` while tmux can still say it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Driver, type Session } from '../../lib/index.js';
import type { DriveOutcome } from '../../lib/session/session.js';
import { CONSENT, allow, openDriver, type TestDriver } from '../helpers.js';

type Ending = { readonly code: number; readonly lagMs?: number } | { readonly signal: 'TERM' | 'KILL' | 'HUP' };

const SIGNAL_NUMBER = { TERM: 15, KILL: 9, HUP: 1 } as const;
const CODES = [0, 1, 2, 3, 7, 0, 42, 255, 0, 9, 0, 13, 100, 0, 64, 0, 126, 5, 0, 77];

/** The drive waits for Enter, then ends as told; with a lag, it closes its terminal first and exits later. */
function script(end: Ending): string {
  if ('signal' in end) return `echo up; read go; kill -${end.signal} $$`;
  if (end.lagMs === undefined) return `echo up; read go; exit ${end.code}`;
  // The hang-up that tmux's closing of the pty sends is ignored, as a program that detaches does.
  return `trap '' HUP; echo up; read go; exec </dev/null >/dev/null 2>&1; sleep ${end.lagMs / 1000}; exit ${end.code}`;
}

function expected(end: Ending, sandboxed: boolean): { exit: { code: number | null; signal: number | null }; outcome: string; reason: string } {
  // In the sandbox the pane's process is bwrap, which exits 128+N when its child dies of signal N.
  const exit = 'signal' in end ? (sandboxed ? { code: 128 + SIGNAL_NUMBER[end.signal], signal: null } : { code: null, signal: SIGNAL_NUMBER[end.signal] }) : { code: end.code, signal: null };
  const reason = exit.code === 0 ? 'exit_0' : exit.code === null ? 'signal' : 'nonzero_exit';
  return { exit, outcome: exit.code === 0 ? 'done' : 'failed', reason };
}

/** Creates the drives a few at a time: what is under test is twenty exits at once, not twenty launches under the hog. */
async function createAll<T>(count: number, make: (i: number) => Promise<T>): Promise<T[]> {
  const made: T[] = [];
  for (let i = 0; i < count; i += 4) made.push(...(await Promise.all(Array.from({ length: Math.min(4, count - i) }, (_, k) => make(i + k)))));
  return made;
}

async function endTogether(sessions: readonly Session[]): Promise<Map<string, DriveOutcome>> {
  const outcomes = new Map<string, DriveOutcome>();
  for (const s of sessions) s.on('outcome', (o) => outcomes.set(s.id, o));
  await Promise.all(sessions.map((s) => s.wait({ forText: 'up', timeoutMs: 30_000 })));
  await Promise.all(sessions.map((s) => s.sendKeys('Enter')));
  const waited = await Promise.all(sessions.map((s) => s.wait({ forExit: true, timeoutMs: 60_000 })));
  expect(waited.map((w) => w.outcome)).toEqual(sessions.map(() => 'exit'));
  return outcomes;
}

function check(sessions: readonly Session[], endings: readonly Ending[], outcomes: Map<string, DriveOutcome>, sandboxed: boolean): void {
  const got = sessions.map((s) => ({ id: s.id, exit: s.exit, outcome: outcomes.get(s.id) }));
  const want = endings.map((end, i) => {
    const e = expected(end, sandboxed);
    return { id: sessions[i]?.id, exit: e.exit, outcome: expect.objectContaining({ outcome: e.outcome, reason: e.reason, exit: e.exit }) };
  });
  expect(got).toEqual(want);
}

describe('exit status under load', () => {
  const hogs: ChildProcess[] = [];
  beforeAll(() => {
    // Real busy processes, two per core: the tmux servers compete with them for CPU.
    for (let i = 0; i < 2 * cpus().length; i++) hogs.push(spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' }));
  });
  afterAll(() => {
    for (const hog of hogs) hog.kill('SIGKILL');
  });

  describe('sandboxed drives', () => {
    let t: TestDriver;
    beforeAll(async () => {
      t = await openDriver([allow('sh', '/bin/sh')], { worker: { maxSessions: 32, stuckMs: 60_000 } });
    });
    afterAll(async () => t?.cleanup());

    it('20 concurrent exits of mixed codes and signals: every status and every outcome right', async () => {
      const endings: Ending[] = CODES.map((code, i) => (i === 14 ? { signal: 'TERM' } : i === 15 ? { signal: 'KILL' } : i === 17 ? { signal: 'HUP' } : { code }));
      const sessions = await createAll(endings.length, (i) => t.driver.create({ allowId: 'sh', name: `s${i}`, args: ['-c', script(endings[i] as Ending)] }));
      check(sessions, endings, await endTogether(sessions), true);
    });
  });

  describe('unsandboxed drives (operator file), the pane dead before its status', () => {
    let dir: string;
    let driver: Driver;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'td-'));
      const config = join(dir, 'config.json');
      // Outside the sandbox the program's own pty closing is the pane's EOF: a program can end its
      // terminal and exit later, so tmux reports the pane dead seconds before it knows the status.
      writeFileSync(config, JSON.stringify({ unsafeDisableSandbox: true, worker: { maxSessions: 32, stuckMs: 60_000 }, allow: [{ id: 'sh', match: { path: '/bin/sh' }, consent: CONSENT }] }));
      driver = await Driver.open({ dataDir: join(dir, 'data'), config });
    });
    afterAll(async () => {
      for (const info of driver?.list() ?? []) await driver.get(info.id).kill().catch(() => undefined);
      await driver?.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('20 concurrent exits, half of them seconds after their terminal closed: every status and outcome right', async () => {
      const endings: Ending[] = CODES.map((code, i) => (i === 14 ? { signal: 'TERM' } : i === 15 ? { signal: 'KILL' } : i % 2 === 0 ? { code, lagMs: 1000 + 200 * i } : { code }));
      const sessions = await createAll(endings.length, (i) => driver.create({ allowId: 'sh', name: `u${i}`, args: ['-c', script(endings[i] as Ending)] }));
      check(sessions, endings, await endTogether(sessions), false);
    });
  });
});
