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

/** What bash printed, as lines: `echo "A:$((7)):…"` prints `A:7:…`, which the typed line itself never shows. */
async function printed(c: Client, drive: string): Promise<string[]> {
  const entries = await c.drive(drive).transcript({ limit: 100_000 });
  const text = entries.filter((e) => e.kind === 'output').map((e) => (typeof e.data === 'string' ? e.data : new TextDecoder().decode(e.data))).join('');
  // bash's own control sequences (bracketed paste on and off around each line) are not text.
  const plain = text.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').replace(/\x1b\][^\x07]*\x07/g, '');
  return plain.split(/\r?\n/).map((l) => l.replace(/\r/g, ''));
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
    const sends = ['A', 'B'].flatMap((who) => {
      const c = who === 'A' ? a : b;
      return Array.from({ length: 50 }, (_, i) => c.drive('shared').sendText(line(who, i), { submit: true, turnTimeoutMs: 300_000 }));
    });
    await Promise.all(sends);
    await finished(a, 'shared');
    const lines = await printed(a, 'shared');
    const results = lines.filter((l) => /^[AB]:\d+:/.test(l));
    // Whole: every printed line is exactly one of the lines sent, nothing spliced into it.
    for (const l of results) expect(l).toMatch(/^([AB]):(\d+):([ab]{3}(?:abcdefghij){3}\d\d)$/);
    const order = (who: string): number[] => results.filter((l) => l.startsWith(`${who}:`)).map((l) => Number(l.split(':')[1]));
    const expected = Array.from({ length: 50 }, (_, i) => i);
    expect(order('A')).toEqual(expected);
    expect(order('B')).toEqual(expected);
    for (const l of results) {
      const [who, i, p] = l.split(':') as [string, string, string];
      expect(p).toBe(payload(who, Number(i)));
    }
    // bash saw no other command (a spliced line would be a syntax error or "command not found").
    expect(lines.some((l) => /command not found|syntax error|unexpected EOF/.test(l))).toBe(false);
  });

  it('an in-process caller of the host\'s own Session and a client share the queue: 20 submits each, whole and in order', async () => {
    const session = host.driver.get('mixed');
    await Promise.all([
      ...Array.from({ length: 20 }, (_, i) => session.sendText(line('A', i), { submit: true, turnTimeoutMs: 300_000 })),
      ...Array.from({ length: 20 }, (_, i) => b.drive('mixed').sendText(line('B', i), { submit: true, turnTimeoutMs: 300_000 })),
    ]);
    await finished(a, 'mixed');
    const results = (await printed(a, 'mixed')).filter((l) => /^[AB]:\d+:/.test(l));
    for (const l of results) expect(l).toMatch(/^([AB]):(\d+):([ab]{3}(?:abcdefghij){3}\d\d)$/);
    const expected = Array.from({ length: 20 }, (_, i) => i);
    expect(results.filter((l) => l.startsWith('A:')).map((l) => Number(l.split(':')[1]))).toEqual(expected);
    expect(results.filter((l) => l.startsWith('B:')).map((l) => Number(l.split(':')[1]))).toEqual(expected);
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
