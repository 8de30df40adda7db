/**
 * The evidence ring on a real drive, small enough to evict all the time: every output entry it
 * still holds reads back as exactly the chunk the `output` event gave with that seq, while the
 * ring lets go of the decoder slabs behind it. Fed by a hostile program (small writes of every
 * byte value, escape sequences cut anywhere, invalid UTF-8) and by a real AI CLI (OpenCode's
 * recorded turn, replayed in a real tmux pane by test/fixtures/replay, five times faster).
 */
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import type { Session } from '../../lib/session/session.js';
import { loadRecording, planWindow } from '../../tools/record/recording-format.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const RING_BYTES = 16 * 1024;
const recordingsDir = fileURLToPath(new URL('../fixtures/cli-recordings/', import.meta.url));
const replayScript = fileURLToPath(new URL('../fixtures/replay/replay.py', import.meta.url));

/** Keeps every chunk the `output` event gives, by seq, as the event gave it (no copy). */
function keepChunks(s: Session): Map<number, Uint8Array> {
  const kept = new Map<number, Uint8Array>();
  s.on('output', (data, seq) => kept.set(seq, data));
  return kept;
}

/**
 * The ring's output entries from the first chunk kept on: the program may print before `create`
 * resolves and the listener is on, and what came before it is no chunk any event gave the test.
 */
function liveSinceKept(s: Session, kept: Map<number, Uint8Array>): ReturnType<Session['transcript']> {
  const first = kept.size === 0 ? Number.POSITIVE_INFINITY : Math.min(...kept.keys());
  return s.transcript().filter((e) => e.kind === 'output' && e.seq >= first);
}

/** The output entries the ring holds whose bytes differ from the chunk the event gave with their seq (or that no event gave). */
function mismatched(s: Session, kept: Map<number, Uint8Array>): number[] {
  const live = liveSinceKept(s, kept);
  return live.filter((e) => !kept.has(e.seq) || !Buffer.from(e.data as Uint8Array).equals(Buffer.from(kept.get(e.seq)!))).map((e) => e.seq);
}

/** The ring's output entries against the kept chunks: same bytes, same seqs; the ring evicted and stayed in its bound. */
function expectRingMatches(s: Session, kept: Map<number, Uint8Array>): void {
  const live = liveSinceKept(s, kept);
  // tmux sends up to ~2.7 KB a chunk: a 16 KiB ring holds a handful of them.
  expect(live.length).toBeGreaterThanOrEqual(3);
  // Evicted: the oldest seq seen is gone from the ring.
  expect(live[0]!.seq).toBeGreaterThan(Math.min(...kept.keys()));
  let counted = 0;
  for (const e of live) {
    const chunk = kept.get(e.seq);
    expect(chunk, `seq ${e.seq}`).toBeDefined();
    expect(Buffer.from(e.data as Uint8Array).equals(Buffer.from(chunk!)), `seq ${e.seq}`).toBe(true);
    counted += 64 + (e.data as Uint8Array).byteLength;
  }
  expect(counted).toBeLessThanOrEqual(RING_BYTES);
}

let t: TestDriver | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('the evidence ring on a real drive', () => {
  it('holds exactly the chunks a hostile program wrote, as it evicts', async () => {
    // Redaction off: the transcript gives output as the raw bytes.
    t = await openDriver([allow('python3', '/usr/bin/python3')], { worker: { ringBytes: RING_BYTES }, redactSecrets: false });
    const program = [
      'import os, sys, time',
      'out = sys.stdout.fileno()',
      'bad = [bytes(range(256)), b"\\x1b[", b"31;1m", b"\\xe2\\x82", b"\\xac", b"\\xff\\xfe", b"\\x1b]0;t", b"itle\\x07", b"\\x1bP", b"q\\x1b\\\\", b"\\r\\n"]',
      'for i in range(4000):',
      '    os.write(out, bad[i % len(bad)] + str(i).encode())',
      '    if i % 50 == 0: time.sleep(0.001)',
      'os.write(out, b"\\x1b[0m\\r\\nRING-END\\r\\n")',
      'time.sleep(30)',
    ].join('\n');
    const s = await t.driver.create({ allowId: 'python3', args: ['-c', program], cols: 120, rows: 40 });
    const kept = keepChunks(s);
    // Read back at every output, from inside the event (as the ring lets go of slab after slab).
    const wrong: number[] = [];
    s.on('output', () => wrong.push(...mismatched(s, kept)));
    expect((await s.wait({ forText: 'RING-END', timeoutMs: 30_000 })).outcome).toBe('text');
    expect(wrong).toEqual([]);
    expectRingMatches(s, kept);
    await s.kill();
  }, 60_000);

  it("holds exactly the chunks of a real AI CLI's turn (OpenCode, replayed), as it evicts", async () => {
    // 266 KB in 949 writes: the largest number of writes of the AI CLIs' recordings.
    const rec = loadRecording(recordingsDir, 'opencode-turn');
    const { plan } = planWindow(rec, { from: 0, to: rec.timeline.durationS, maxGapS: 0.2 });
    t = await openDriver([allow('replay', '/usr/bin/python3', { profile: rec.timeline.profile, autoAnswer: 'none' })], { worker: { ringBytes: RING_BYTES }, redactSecrets: false });
    // The script and its plan in the drive's own workspace: the jail shows it.
    const project = join(t.dataDir, 'workspace', 'projects', 'replay');
    mkdirSync(project, { recursive: true });
    copyFileSync(replayScript, join(project, 'replay.py'));
    // Its bytes, in order, on a clock five times faster (42 s of streaming answer in ~9 s); no key is
    // awaited (a read becomes a sleep).
    const fast = (at: number): number => at / 5;
    writeFileSync(
      join(project, 'plan.json'),
      JSON.stringify({ ...plan, holdS: 0.5, writes: plan.writes.map(([at, bytes]) => [fast(at), bytes]), modes: plan.modes.map(([at, mode]) => [fast(at), mode === 'read' ? 'sleep' : mode]) }),
    );
    const s = await t.driver.create({ allowId: 'replay', project: 'replay', args: ['replay.py', 'plan.json'], cols: rec.timeline.cols, rows: rec.timeline.rows });
    const kept = keepChunks(s);
    expect((await s.wait({ forExit: true, timeoutMs: 60_000 })).outcome).toBe('exit');
    const recorded = rec.output.reduce((n, [, d]) => n + Buffer.byteLength(d), 0);
    // The recording is far larger than the ring: most of it went through and out again.
    expect(recorded).toBeGreaterThan(RING_BYTES * 4);
    expectRingMatches(s, kept);
  }, 90_000);
});
