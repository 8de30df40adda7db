/**
 * Input to one drive from several clients is serialized: through a real serving host (in this
 * process) and real bash, two clients (two sockets) each fire 50 submits at once; bash receives
 * every line whole (no client's text between another's text and its Enter) and each client's lines
 * in the order it sent them. The queue is bounded: a caller that waits past its turn timeout gets
 * INPUT_BUSY, and a caller that cancels while waiting is not sent; neither input reaches bash.
 * The queue is the Session's, so code in the host's own process (the Driver's Session, no gate)
 * waits its turn with the clients too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serve, type ServingHost } from '../../lib/serve/serve.js';
import { Client } from '../../lib/client/client.js';
import { TmuxDriveError } from '../../lib/common/errors.js';
import { BASH_ARGS, hostConfig, sweep, tempDataDir } from './harness.js';

const dataDir = tempDataDir();
let host: ServingHost;
let a: Client;
let b: Client;

beforeAll(async () => {
  host = await serve({ dataDir, config: hostConfig(), logger: { warn: () => undefined } });
  a = await Client.connect(dataDir);
  b = await Client.connect(dataDir);
  for (const name of ['shared', 'busy', 'mixed']) await (await a.create({ allowId: 'bash', name, args: BASH_ARGS, cols: 120 })).wait({ forText: '$ ' });
});

afterAll(async () => {
  for (const i of await a.list().catch(() => [])) if (i.state === 'live') await a.drive(i.id).kill().catch(() => undefined);
  await a.close();
  await b.close();
  await host.close();
  sweep(dataDir);
});

/**
 * What bash printed since transcript seq `after`, as lines: `echo "A:$((7)):…"` prints `A:7:…`, which
 * the typed line itself never shows. (`after`: a retried test reuses the drive; only its own output counts.)
 */
async function printed(c: Client, drive: string, after: number): Promise<string[]> {
  const entries = await c.drive(drive).transcript({ limit: 100_000 });
  const text = entries.filter((e) => e.kind === 'output' && e.seq > after).map((e) => (typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data))).join('');
  // bash's own control sequences (bracketed paste on and off around each line) are not text.
  const plain = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\x1b\][^\x07]*\x07/g, '');
  return plain.split(/\r?\n/).map((l) => l.replace(/\r/g, ''));
}

/**
 * The results bash printed, in order. Not anchored at a line's start: a line typed while bash still
 * runs the one before is echoed by the terminal (the tty is cooked between readline's reads), so on
 * a loaded machine the next line's typed text can come before a result on its row (seen in a fresh
 * clone's run: B:1 missing from the lines that began with a result). The typed text never holds a
 * result (it has `$((i))`), so a match is what bash ran; a spliced line would not print one whole.
 */
const RESULT = /([AB]):(\d+):([ab]{3}(?:abcdefghij){3}\d\d)(?![a-z0-9])/g;
function results(lines: readonly string[]): { readonly who: string; readonly i: number; readonly payload: string }[] {
  return lines.flatMap((l) => [...l.matchAll(RESULT)].map((m) => ({ who: m[1] as string, i: Number(m[2]), payload: m[3] as string })));
}

async function lastSeq(c: Client, drive: string): Promise<number> {
  return (await c.drive(drive).transcript({ limit: 100_000 })).at(-1)?.seq ?? 0;
}

/** Every line sent was submitted; once bash prints the end mark after them, it has run them all. */
async function finished(c: Client, drive: string): Promise<void> {
  await c.drive(drive).sendText('echo "END:$((40+2))"', { submit: true });
  expect((await c.drive(drive).wait({ forText: 'END:42', timeoutMs: 30_000 })).outcome).toBe('text');
}

const payload = (who: string, i: number): string => `${who.toLowerCase().repeat(3)}${'abcdefghij'.repeat(3)}${String(i).padStart(2, '0')}`;
const line = (who: string, i: number): string => `echo "${who}:$((${i})):${payload(who, i)}"`;

describe('input from several clients', () => {
  it('two clients firing 50 submits each at once: every line reaches bash whole, each client\'s in its order', async () => {
    const since = await lastSeq(a, 'shared');
    const sends = ['A', 'B'].flatMap((who) => {
      const c = who === 'A' ? a : b;
      return Array.from({ length: 50 }, (_, i) => c.drive('shared').sendText(line(who, i), { submit: true, turnTimeoutMs: 300_000 }));
    });
    await Promise.all(sends);
    await finished(a, 'shared');
    const lines = await printed(a, 'shared', since);
    const ran = results(lines);
    const expected = Array.from({ length: 50 }, (_, i) => i);
    expect(ran.filter((r) => r.who === 'A').map((r) => r.i)).toEqual(expected);
    expect(ran.filter((r) => r.who === 'B').map((r) => r.i)).toEqual(expected);
    // Whole: every result is exactly the line sent, nothing spliced into it.
    for (const r of ran) expect(r.payload).toBe(payload(r.who, r.i));
    // bash saw no other command (a spliced line would be a syntax error or "command not found").
    expect(lines.some((l) => /command not found|syntax error|unexpected EOF/.test(l))).toBe(false);
  });

  it('an in-process caller of the host\'s own Session and a client share the queue: 20 submits each, whole and in order', async () => {
    const session = host.driver.get('mixed');
    const since = await lastSeq(a, 'mixed');
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => session.sendText(line('A', i), { submit: true, turnTimeoutMs: 300_000 })),
      ...Array.from({ length: 20 }, (_, i) => b.drive('mixed').sendText(line('B', i), { submit: true, turnTimeoutMs: 300_000 })),
    ]);
    await finished(a, 'mixed');
    const lines = await printed(a, 'mixed', since);
    const ran = results(lines);
    const expected = Array.from({ length: 20 }, (_, i) => i);
    expect(ran.filter((r) => r.who === 'A').map((r) => r.i)).toEqual(expected);
    expect(ran.filter((r) => r.who === 'B').map((r) => r.i)).toEqual(expected);
    for (const r of ran) expect(r.payload).toBe(payload(r.who, r.i));
    expect(lines.some((l) => /command not found|syntax error|unexpected EOF/.test(l))).toBe(false);
  });

  it('a caller waiting past its turn timeout gets INPUT_BUSY, a caller that cancels while waiting is not sent; the input after them is', async () => {
    const busy = a.drive('busy');
    // A terminal that does not echo and a program that does not read: a submit waits out its echo (2 s) before Enter.
    await busy.sendText('stty -echo; sleep 30', { submit: true });
    await busy.wait({ forIdleMs: 300 });
    const holding = busy.sendText('held', { submit: true });
    await new Promise((r) => setTimeout(r, 100));
    const late = await b.drive('busy').sendKeys(['x', 'y', 'z'], { turnTimeoutMs: 200 }).catch((e: unknown) => e);
    expect(late).toBeInstanceOf(TmuxDriveError);
    expect((late as TmuxDriveError).code).toBe('INPUT_BUSY');
    const abort = new AbortController();
    const cancelled = b.drive('busy').sendText('never-sent', { submit: true, signal: abort.signal }).catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 100));
    abort.abort();
    expect(((await cancelled) as TmuxDriveError).code).toBe('ABORTED');
    await holding;
    await b.drive('busy').signal('interrupt');
    await b.drive('busy').sendText('stty echo; echo "done:$((1+1))"', { submit: true });
    await busy.wait({ forText: 'done:2', timeoutMs: 10_000 });
    const inputs = (await busy.transcript({ limit: 10_000 })).filter((e) => e.kind === 'input' || e.kind === 'keys');
    const sent = inputs.map((e) => (e.kind === 'input' ? String(e.data) : String(e.tags?.keys)));
    expect(sent).toContain('held');
    expect(sent).not.toContain('never-sent');
    expect(sent.some((s) => s.includes('x y z'))).toBe(false);
  });
});
