/**
 * Drives streaming at once through one driver, as a host with many drives sees it: their control
 * clients share the host's one event loop (ELU 0.98 with 20 streams on two cores: docs/benchmarks.md,
 * run of 2026-12-04 04:06), and the read pacer holds the other drives' chunks while keys typed into
 * one drive await their echo (backends/tmux/read-pacer.ts). Against real tmux:
 * - six programs write numbered lines as fast as they can while a bash drive is typed into key by key;
 * - a hostile caller types into a program that never echoes, key after key, while floods run (each
 *   key renews the hold: only the pacer's 100 ms cap lets the floods through);
 * - a real AI CLI's turn (OpenCode's recording, replayed in a pane five times faster) streams while
 *   a bash drive is typed into.
 * Nothing lost, nothing out of order, nothing paused by tmux, and the pacer did hold chunks (else
 * these would not test it). Timing is the bench's (many-streams).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { systemReadPacer } from '../../../backends/tmux/read-pacer.js';
import type { Session } from '../../../lib/index.js';
import { loadRecording, planWindow } from '../../../tools/record/recording-format.js';
import { allow, openDriver, type TestDriver } from '../../helpers.js';

const LINES = 150_000;
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const recordingsDir = fileURLToPath(new URL('../../fixtures/cli-recordings/', import.meta.url));
const replayScript = fileURLToPath(new URL('../../fixtures/replay/replay.py', import.meta.url));

/** Says READY, then at a line on stdin writes `P<d>-<n>` lines in 64 KB writes, the end mark, and waits to be killed. */
const flood = (d: number): string =>
  [
    'import os, sys, time',
    'os.write(1, b"READY\\n")',
    'sys.stdin.readline()',
    `lines = b"".join(b"P${d}-%d\\n" % n for n in range(${LINES}))`,
    'for at in range(0, len(lines), 65536): os.write(1, lines[at:at + 65536])',
    `os.write(1, b"PACE-END-${d}\\n")`,
    'time.sleep(60)',
  ].join('\n');

/** Where the numbered lines of `text` skip or repeat (empty when they run 0..LINES-1). */
function gaps(text: string, d: number): string[] {
  const found: string[] = [];
  let prev = -1;
  for (const m of text.matchAll(new RegExp(`P${d}-(\\d+)\\r?\\n`, 'g'))) {
    const n = Number(m[1]);
    if (n !== prev + 1) found.push(`${prev} → ${n}`);
    prev = n;
  }
  if (prev !== LINES - 1) found.push(`${prev} → end`);
  return found;
}

/** A drive's `output` events from now on, joined on demand; tmux's pauses of it counted; `flowing` once 64 KB came. */
function watchOutput(s: Session): { readonly chunks: Buffer[]; readonly pauses: () => number; readonly flowing: Promise<void> } {
  const chunks: Buffer[] = [];
  let bytes = 0;
  let paused = 0;
  let flowed: () => void = () => undefined;
  const flowing = new Promise<void>((resolve) => (flowed = resolve));
  s.on('output', (data) => {
    chunks.push(Buffer.from(data));
    if ((bytes += data.length) > 64 * 1024) flowed();
  });
  s.on('resync', (reason) => void (reason === 'pause' && (paused += 1)));
  return { chunks, pauses: () => paused, flowing };
}

/** `count` flood drives, each at READY with its output watched; `start()` lets them all go at once. */
async function floods(t: TestDriver, count: number): Promise<{ drives: Session[]; outputs: ReturnType<typeof watchOutput>[]; start: () => Promise<void> }> {
  const drives: Session[] = [];
  const outputs: ReturnType<typeof watchOutput>[] = [];
  for (let d = 0; d < count; d++) {
    const s = await t.driver.create({ allowId: 'python3', args: ['-c', flood(d)], cols: 120, rows: 40, name: `flood-${d}` });
    outputs.push(watchOutput(s));
    drives.push(s);
    expect((await s.wait({ forText: 'READY', timeoutMs: 20_000 })).outcome).toBe('text');
  }
  const start = async (): Promise<void> => {
    await Promise.all(drives.map((s) => s.sendKeys('Enter')));
    await Promise.all(outputs.map((o) => o.flowing));
  };
  return { drives, outputs, start };
}

/** Every flood drive ended, with each of its lines once and in order, and tmux paused none. */
async function expectFloodsWhole(drives: readonly Session[], outputs: readonly ReturnType<typeof watchOutput>[]): Promise<void> {
  for (const end of await Promise.all(drives.map((s, d) => s.wait({ forText: `PACE-END-${d}`, timeoutMs: 120_000 })))) expect(end.outcome).toBe('text');
  drives.forEach((_, d) => {
    const text = Buffer.concat(outputs[d]!.chunks).toString('latin1');
    expect(gaps(text, d), `drive ${d}`).toEqual([]);
    expect(text).toContain(`PACE-END-${d}`);
    expect(outputs[d]!.pauses(), `drive ${d} paused by tmux`).toBe(0);
  });
}

async function bashAtPrompt(t: TestDriver): Promise<Session> {
  const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 120, rows: 40 });
  expect((await s.wait({ forText: /[$#] $/m, timeoutMs: 20_000 })).outcome).toBe('text');
  return s;
}

let t: TestDriver | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('drives streaming at once through one driver', () => {
  it('deliver every line of every drive once and in order, and an idle drive still runs what is typed', async () => {
    t = await openDriver([allow('python3', '/usr/bin/python3'), allow('bash', '/bin/bash')], { redactSecrets: false });
    const idle = await bashAtPrompt(t);
    const { drives, outputs, start } = await floods(t, 6);
    // Typed into the idle drive while they stream, key by key (each key's echo awaited: the pacer
    // holds the floods' chunks for it).
    const heldBefore = systemReadPacer.counts.queued;
    await start();
    for (let k = 0; k < 20; k++) await idle.sendText('x');
    await idle.sendKeys('C-u');
    await idle.sendText('echo typed-$((6*7))', { submit: true });
    expect((await idle.wait({ forText: 'typed-42', timeoutMs: 60_000 })).outcome).toBe('text');
    await expectFloodsWhole(drives, outputs);
    expect(systemReadPacer.counts.queued).toBeGreaterThan(heldBefore);
  }, 180_000);

  it("lose nothing while a hostile caller types into a program that never echoes, key after key (the pacer's cap lets them through)", async () => {
    t = await openDriver([allow('python3', '/usr/bin/python3')], { redactSecrets: false });
    // Raw mode, no echo: every key is read and dropped, so every hold lasts to its deadline.
    const silent = await t.driver.create({ allowId: 'python3', args: ['-c', 'import os, tty\ntty.setraw(0)\nos.write(1, b"SILENT\\r\\n")\nwhile True: os.read(0, 4096)'], cols: 120, rows: 40 });
    expect((await silent.wait({ forText: 'SILENT', timeoutMs: 20_000 })).outcome).toBe('text');
    const { drives, outputs, start } = await floods(t, 4);
    const heldBefore = systemReadPacer.counts.queued;
    let ended = false;
    const ends = Promise.all(drives.map((s, d) => s.wait({ forText: `PACE-END-${d}`, timeoutMs: 120_000 }))).finally(() => (ended = true));
    await start();
    let keys = 0;
    while (!ended) {
      await silent.sendText('x');
      keys += 1;
    }
    await ends;
    expect(keys).toBeGreaterThan(10);
    await expectFloodsWhole(drives, outputs);
    expect(systemReadPacer.counts.queued).toBeGreaterThan(heldBefore);
    // Held far less than tmux's pause-after (5 s), however many keys renewed the hold.
    expect(systemReadPacer.counts.longestWaitMs).toBeLessThan(5000);
  }, 180_000);

  it("deliver a real AI CLI's turn byte for byte while another drive is typed into (OpenCode, replayed)", async () => {
    // 266 KB in 949 writes, on a clock five times faster; the replay waits for a key before its
    // first write (a gate at 0), so its output is watched from its first byte.
    const rec = loadRecording(recordingsDir, 'opencode-turn');
    const { plan } = planWindow(rec, { from: 0, to: rec.timeline.durationS, maxGapS: 0.2 });
    t = await openDriver([allow('replay', '/usr/bin/python3', { profile: rec.timeline.profile, autoAnswer: 'none' }), allow('bash', '/bin/bash')], { redactSecrets: false });
    const typed = await bashAtPrompt(t);
    const project = join(t.dataDir, 'workspace', 'projects', 'replay');
    mkdirSync(project, { recursive: true });
    copyFileSync(replayScript, join(project, 'replay.py'));
    const fast = (at: number): number => 0.001 + at / 5;
    writeFileSync(
      join(project, 'plan.json'),
      JSON.stringify({
        ...plan,
        holdS: 0.5,
        gates: [[0, 30]],
        writes: plan.writes.map(([at, bytes]) => [fast(at), bytes]),
        modes: plan.modes.map(([at, mode]) => [fast(at), mode === 'read' ? 'sleep' : mode]),
      }),
    );
    const cli = await t.driver.create({ allowId: 'replay', project: 'replay', args: ['replay.py', 'plan.json'], cols: rec.timeline.cols, rows: rec.timeline.rows });
    const out = watchOutput(cli);
    const heldBefore = systemReadPacer.counts.queued;
    let exited = false;
    const exit = cli.wait({ forExit: true, timeoutMs: 60_000 }).finally(() => (exited = true));
    // tty.setraw flushes input typed before it (and a key typed before it is echoed, 2 bytes): a key
    // is sent until the replay answers with its recorded bytes.
    const began = (): boolean => out.chunks.reduce((n, c) => n + c.length, 0) > 2;
    for (let tries = 0; !began() && tries < 40; tries++) {
      await cli.sendKeys('Enter');
      await sleep(250);
    }
    expect(began()).toBe(true);
    // Typed as a quick typist does, a key every 5 ms, each echo awaited.
    let keys = 0;
    while (!exited) {
      await typed.sendText('x');
      if (++keys % 50 === 0) await typed.sendKeys('C-u');
      await sleep(5);
    }
    expect((await exit).outcome).toBe('exit');
    const recorded = Buffer.concat(plan.writes.map(([, bytes]) => Buffer.from(bytes, 'base64')));
    // A key that reached the pane before the replay put its terminal in raw mode was echoed
    // ("\r\n") and flushed; every recorded byte follows, exactly.
    const got = Buffer.concat(out.chunks);
    const echo = got.length - recorded.length === 2 && got.subarray(0, 2).toString() === '\r\n' ? 2 : 0;
    expect(got.length - echo).toBe(recorded.length);
    expect(got.subarray(echo).equals(recorded)).toBe(true);
    expect(out.pauses()).toBe(0);
    expect(keys).toBeGreaterThan(10);
    expect(systemReadPacer.counts.queued).toBeGreaterThan(heldBefore);
  }, 120_000);
});
