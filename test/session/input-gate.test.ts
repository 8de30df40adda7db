/**
 * One gate for every keystroke: an auto-answer and the cost stop reach the program only through
 * the same check (this process still holds the drive) and audit as a caller's input; internal
 * waits (an auto-answer confirming its answer, a send's settle) are not the caller's requests.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SessionError } from '../../lib/common/errors.js';
import { compileProfile } from '../../lib/perceive/profile.js';
import { readAudit } from '../../journal/audit-log.js';
import { RECORD_WAIT_MS } from '../../lib/session/input-gate.js';
import { systemClock } from '../../backends/process/system-clock.js';
import type { Clock } from '../../lib/common/clock.js';
import { allow, killGone, openDriver, processesMentioning } from '../helpers.js';
import { spawnSession } from './spawn-session.js';

/** A safe known dialog: answered by itself under safe-only, with `y` then Enter. */
const ASKER = { id: 'asker', dialogs: [{ id: 'continue', pattern: 'Continue\\?', kind: 'confirm', answer: ['y', 'Enter'], safe: true }] };
/** Asks once; prints what it got, then waits at a prompt of its own. */
const ASK = 'a = input("Continue? (y/n) ")\nprint("GOT " + a, flush=True)\ninput("> ")';

function profile(data: unknown) {
  const issues: never[] = [];
  const p = compileProfile(data, 'test', issues);
  if (!p) throw new Error(`test profile does not compile: ${JSON.stringify(issues)}`);
  return p;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

function nextEvent<T>(subscribe: (fire: (value: T) => void) => { dispose(): void }, ms: number, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no ${what} within ${ms} ms`));
    }, ms);
    const sub = subscribe((value) => {
      clearTimeout(timer);
      sub.dispose();
      resolve(value);
    });
  });
}

const lostLease = (): never => {
  throw new SessionError('SESSION_CLOSED', 'this process does not hold the drive');
};

describe('auto-answer goes through the input gate', () => {
  it('a session whose beforeInput refuses never answers a safe dialog (and one that holds the drive does)', async () => {
    for (const holds of [true, false]) {
      let holding = true;
      const actions: string[] = [];
      const answers: string[] = [];
      const d = await spawnSession(['/usr/bin/python3', '-c', ASK], {
        profile: profile(ASKER),
        autoAnswer: 'safe-only',
        beforeInput: () => (holding ? undefined : lostLease()),
        onAction: (kind, payload) => actions.push(`${kind}:${payload}`),
        answers: { count: () => 0, record: (digest) => void answers.push(digest) },
      });
      const s = d.session;
      try {
        await s.wait({ forText: 'Continue?' });
        holding = holds;
        const answered: string[] = [];
        s.on('answered', (digest) => answered.push(digest));
        if (holds) {
          await nextEvent<string>((fire) => s.on('answered', fire), 5000, 'answer');
          expect((await s.wait({ forText: 'GOT y', timeoutMs: 5000 })).outcome).toBe('text');
          expect(answered).toHaveLength(1);
          expect(actions).toContain('sendKeys:y Enter');
        } else {
          // The first thing the session does about the dialog: an escalation, never an answer.
          const first = await nextEvent<string>((fire) => {
            const subs = [s.on('answered', () => fire('answered')), s.on('attention', (a) => a.dialog !== undefined && fire(`${a.kind}/${a.reason}/${a.dialog}`))];
            return { dispose: () => subs.forEach((sub) => sub.dispose()) };
          }, 5000, 'answer or escalation');
          expect(first).toBe('input_needed/answer_failed/confirm');
          await sleep(500);
          expect(answered).toEqual([]);
          expect(answers).toEqual([]); // nothing was recorded as answered in the journal either
          expect(actions).toEqual([]); // nor audited
          expect(s.transcript().filter((e) => e.kind === 'keys')).toEqual([]);
          expect(s.read().content).not.toContain('GOT');
        }
      } finally {
        holding = true;
        await d.close();
      }
    }
  });

  it('the cost stop does not interrupt a program this process no longer holds', async () => {
    let holding = true;
    const program = ['import signal, time', 'signal.signal(signal.SIGINT, lambda *a: print("INTERRUPTED", flush=True))', 'print("Cost: $0.42", flush=True)', 'while True: time.sleep(1)'].join('\n');
    const d = await spawnSession(['/usr/bin/python3', '-c', program], {
      profile: profile({ id: 'costly', cost: { pattern: 'Cost: \\$([0-9]+\\.[0-9]+)' } }),
      maxCostUsd: 0.25,
      stuckMs: 60_000,
      beforeInput: () => (holding ? undefined : lostLease()),
    });
    const s = d.session;
    try {
      const incidents: string[] = [];
      s.on('incident', (code) => incidents.push(code));
      holding = false;
      // The cost line is read once output first settles (250 ms after it), with the lease gone by then.
      const evicted = nextEvent<string>((fire) => s.on('incident', (code) => code === 'evicted' && fire(code)), 8000, 'eviction attempt');
      await evicted;
      await sleep(500);
      expect(incidents).toContain('cost_limit');
      expect(s.read().content).not.toContain('INTERRUPTED');
      expect(s.lifecycle).toBe('failed'); // evicted on the record, but not killed: nobody here may
    } finally {
      holding = true;
      await d.close();
    }
  });
});

describe('internal waits are not requests', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'td-prof-'));
    writeFileSync(join(dir, 'asker.json'), JSON.stringify(ASKER));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("an auto-answer and a send's settle spend none of maxRequestsPerSession", async () => {
    const t = await openDriver([allow('asker', '/usr/bin/python3', { limits: { maxRequestsPerSession: 5 } })], {}, { profileDirs: [dir] });
    try {
      const s = await t.driver.create({ allowId: 'asker', args: ['-c', ASK] });
      const answered = new Promise<void>((resolve) => s.on('answered', () => resolve()));
      await answered;
      expect((await s.wait({ forText: 'GOT y', timeoutMs: 5000 })).outcome).toBe('text'); // 1
      await s.sendText('x', { settle: 100 }); // 2: the settle is part of this request
      for (let i = 3; i <= 5; i++) s.read();
      let refused: unknown;
      try {
        s.read();
      } catch (err) {
        refused = err;
      }
      expect(refused).toMatchObject({ code: 'LIMIT_REACHED' });
    } finally {
      await t.cleanup();
    }
  });
});

describe('the audit on the keystroke path', () => {
  it('a failed audit: the keys were delivered and the caller is told; every action after is audited first (refused while it fails) until one succeeds', async () => {
    let failing = false;
    const audited: string[] = [];
    const d = await spawnSession(['/bin/cat'], {
      onAction: (kind, payload) => {
        if (failing) throw new Error('audit: disk full');
        audited.push(`${kind}:${payload}`);
      },
    });
    const s = d.session;
    const line = (): string => s.read().content.split('\n')[s.read().cursor.y]?.trimEnd() ?? '';
    try {
      await s.sendText('aa');
      failing = true;
      // Delivered before the audit: the caller learns the audit failed.
      await expect(s.sendText('bb')).rejects.toThrow('audit: disk full');
      await s.wait({ forIdleMs: 200 });
      expect(line()).toBe('aabb');
      // Now audited before the write: refused, nothing delivered.
      await expect(s.sendText('cc')).rejects.toThrow('audit: disk full');
      await expect(s.sendKeys('Enter')).rejects.toThrow('audit: disk full');
      failing = false;
      await s.sendText('dd');
      await s.sendText('ee');
      await s.wait({ forIdleMs: 200 });
      expect(line()).toBe('aabbddee');
      expect(audited).toEqual(['sendText:aa', 'sendText:dd', 'sendText:ee']);
    } finally {
      await d.close();
    }
  });
});

/** A program that draws nothing for the keys it gets (no echo; they go to /dev/null), ready and quiet. */
async function silentProgram(init: Parameters<typeof spawnSession>[1]): Promise<Awaited<ReturnType<typeof spawnSession>>> {
  const d = await spawnSession(['/bin/sh', '-c', 'stty -echo; echo ready; exec cat >/dev/null'], init);
  try {
    await d.session.wait({ forText: 'ready', timeoutMs: 5000 });
    await d.session.wait({ forIdleMs: 100 });
  } catch (err) {
    await d.close();
    throw err;
  }
  return d;
}

describe('when the keystroke is audited', () => {
  it("is written after the send settled, at the end of the keys' first output event (its listeners first), before the call settles", async () => {
    const audited: string[] = [];
    // On a loaded machine cat's echo can come more than RECORD_WAIT_MS after the send settled; the
    // timer then rightly writes the record first (the path of the next test). The record's timer
    // is held here while the keys are in flight, so this test always sees the output's path.
    let holding = false;
    const held: (() => void)[] = [];
    const clock: Clock = {
      now: systemClock.now,
      after(ms, fn) {
        if (!holding || ms !== RECORD_WAIT_MS) return systemClock.after(ms, fn);
        let cancelled = false;
        held.push(() => cancelled || fn());
        return { cancel: () => void (cancelled = true) };
      },
    };
    const d = await spawnSession(['/bin/cat'], { clock, onAction: (kind, payload) => void audited.push(`${kind}:${payload}`) });
    const s = d.session;
    try {
      await s.sendText('warm');
      await s.wait({ forIdleMs: 100 });
      // What a listener of the echo sees: the record is written after the listeners ran, in the same turn.
      const atEcho: string[][] = [];
      const sub = s.on('output', () => void atEcho.push([...audited]));
      holding = true;
      const typed = s.sendText('qq');
      const first = await new Promise<string[]>((resolve) => {
        const once = s.on('output', () => {
          once.dispose();
          resolve([...audited]);
          queueMicrotask(() => atEcho.push(['after:', ...audited]));
        });
      });
      holding = false;
      for (const fire of held.splice(0)) fire();
      expect(first).toEqual(['sendText:warm']);
      await typed;
      sub.dispose();
      expect(audited).toEqual(['sendText:warm', 'sendText:qq']);
      expect(atEcho[0]).toEqual(['sendText:warm']);
      expect(atEcho).toContainEqual(['after:', 'sendText:warm', 'sendText:qq']);
    } finally {
      await d.close();
    }
  });

  it(`keys that draw nothing: written ${RECORD_WAIT_MS} ms after the send settled, then the call settles`, async () => {
    const audited: string[] = [];
    const d = await silentProgram({ onAction: (kind, payload) => void audited.push(`${kind}:${payload}`) });
    const s = d.session;
    try {
      let outputs = 0;
      const sub = s.on('output', () => void (outputs += 1));
      const t0 = performance.now();
      const typed = s.sendText('silent');
      expect(audited).toEqual([]);
      await typed;
      const took = performance.now() - t0;
      sub.dispose();
      expect(outputs).toBe(0);
      expect(audited).toEqual(['sendText:silent']);
      // The timer's path, not an output's (a timer may fire up to a millisecond early by this clock).
      expect(took).toBeGreaterThanOrEqual(RECORD_WAIT_MS - 1);
    } finally {
      await d.close();
    }
  });

  it('keys sent one after another without waiting go at the pace of the sends, not of the record timer: each record written when its send settles', async () => {
    const audited: string[] = [];
    // The session's clock, counting the record timers armed (RECORD_WAIT_MS: no other room's delay).
    let recordTimers = 0;
    const clock = { now: () => systemClock.now(), after: (ms: number, fn: () => void) => ((recordTimers += ms === RECORD_WAIT_MS ? 1 : 0), systemClock.after(ms, fn)) };
    const d = await silentProgram({ clock, onAction: (kind, payload) => void audited.push(`${kind}:${payload}`) });
    const s = d.session;
    try {
      recordTimers = 0;
      const keys = Array.from({ length: 40 }, (_, i) => `k${i}`);
      const sends = keys.map((k) => s.sendText(k));
      await Promise.all(sends);
      expect(audited).toEqual(keys.map((k) => `sendText:${k}`));
      // Only the last, with nobody behind it, waited for output that never came.
      expect(recordTimers).toBe(1);
    } finally {
      await d.close();
    }
  });

  it('is written once the send settles (tmux: its answer; here the pty backend), before the call settles, in delivery order', async () => {
    const audited: string[] = [];
    const d = await spawnSession(['/bin/cat'], { onAction: (kind, payload) => void audited.push(`${kind}:${payload}`) });
    const s = d.session;
    try {
      const typed = s.sendText('aa');
      // Delivered within the call, recorded once the send settles (the next test: through tmux).
      expect(audited).toEqual([]);
      await typed;
      expect(audited).toEqual(['sendText:aa']);
      // Two sends and a resize with no wait between: recorded in that order, each before its call settles.
      const first = s.sendText('bb');
      const second = s.sendKeys('Enter');
      const resized = s.resize(70, 20);
      await Promise.all([first.then(() => expect(audited).toContain('sendText:bb')), second.then(() => expect(audited).toContain('sendKeys:Enter')), resized]);
      expect(audited).toEqual(['sendText:aa', 'sendText:bb', 'sendKeys:Enter', 'resize:70x20']);
      await s.wait({ forText: 'aabb', timeoutMs: 5000 });
    } finally {
      await d.close();
    }
  });
});

describe('the keystroke audit through real tmux, against a program that floods its pane', () => {
  it("each send's record is in the audit file when its call settles, in delivery order, hostile text kept on one line", async () => {
    const t = await openDriver([allow('sh', '/bin/sh')]);
    try {
      // `yes` floods the pane (tmux's replies queue behind its output) while `cat` takes the keys.
      const s = await t.driver.create({ allowId: 'sh', args: ['-c', 'yes flood-line & exec cat'], name: 'flood' });
      await s.wait({ forText: 'flood-line', timeoutMs: 10_000 });
      const recorded = (): string[] => readAudit(t.dataDir, { sessionId: s.id }).filter((r) => r.kind !== 'create').map((r) => `${r.kind}:${r.payload}`);
      // A caller's hostile text: a forged control-mode reply end, an OSC title and a line break.
      const hostileText = 'x\n%end 1 2 1\u001b]0;owned\u0007';
      await s.sendText('abc');
      expect(recorded()).toEqual(['sendText:abc']);
      const sends = [s.sendText(hostileText), s.sendKeys('C-c'), s.resize(90, 25)];
      await sends[0];
      expect(recorded()).toContain(`sendText:${hostileText}`);
      await Promise.all(sends);
      expect(recorded()).toEqual(['sendText:abc', `sendText:${hostileText}`, 'sendKeys:C-c', 'resize:90x25']);
      // One JSON line per record: the text's line break and escapes did not split or forge one.
      const lines = readFileSync(join(t.dataDir, 'audit.jsonl'), 'utf8').trimEnd().split('\n');
      expect(lines.length).toBe(5);
      for (const line of lines) expect(() => JSON.parse(line) as unknown).not.toThrow();
    } finally {
      await t.cleanup();
    }
  });
});

describe('the audit of keys in flight when the driver closes', () => {
  it('keys sent and not awaited, then Driver.close(): their records are in the audit log', async () => {
    const t = await openDriver([allow('cat', '/bin/cat')]);
    try {
      const s = await t.driver.create({ allowId: 'cat', name: 'inflight' });
      const sends = [s.sendText('one'), s.sendKeys('Enter'), s.sendText('two')].map((p) => p.then(() => 'sent', (e: unknown) => e));
      await t.driver.close();
      const outcomes = await Promise.all(sends);
      const records = readAudit(t.dataDir, { sessionId: s.id }).map((r) => `${r.kind}:${r.payload}`);
      // The first was written to tmux within its call and is recorded; the others waited their turn
      // behind it, were refused when the drive was let go, and are not (nothing was delivered).
      expect(outcomes[0]).toBe('sent');
      expect(records).toContain('sendText:one');
      for (const [i, record] of [[1, 'sendKeys:Enter'], [2, 'sendText:two']] as const) {
        if (outcomes[i] === 'sent') expect(records).toContain(record);
        else expect(records).not.toContain(record);
      }
    } finally {
      // The drive outlives its host by design (detached, not killed): ended here with its server.
      await t.driver.close();
      killGone(processesMentioning(t.dataDir));
      rmSync(t.dataDir, { recursive: true, force: true });
    }
  });
});

describe('typing refused', () => {
  it('a bad text, bad options or a lost drive reject (never throw at the call), send and audit nothing, and leave the input free', async () => {
    let holding = true;
    const audited: string[] = [];
    const d = await spawnSession(['/bin/cat'], { beforeInput: () => (holding ? undefined : lostLease()), onAction: (kind, payload) => void audited.push(`${kind}:${payload}`) });
    const s = d.session;
    const line = (): string => s.read().content.split('\n')[s.read().cursor.y]?.trimEnd() ?? '';
    try {
      let sent: Promise<void> | undefined;
      expect(() => (sent = s.sendText(42 as unknown as string))).not.toThrow();
      await expect(sent).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
      await expect(s.sendText('xx', { paste: 'sometimes' as never })).rejects.toMatchObject({ code: 'BAD_ARGUMENT' });
      holding = false;
      expect(() => (sent = s.sendText('yy'))).not.toThrow();
      await expect(sent).rejects.toMatchObject({ code: 'SESSION_CLOSED' });
      holding = true;
      await s.sendText('ok');
      await s.sendText('!', null as never);
      await s.wait({ forIdleMs: 200 });
      expect(line()).toBe('ok!');
      expect(audited).toEqual(['sendText:ok', 'sendText:!']);
    } finally {
      await d.close();
    }
  });
});
