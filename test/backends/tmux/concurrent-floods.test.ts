/**
 * Drives flooding at once through one driver, as a host with many drives sees it: their control
 * clients share the host's one event loop (ELU 0.98 with 20 streams on two cores: docs/benchmarks.md,
 * run of 2026-12-04 04:06–05:00), so each drive's reads wait behind the others'. Six programs write
 * numbered lines as fast as they can, started together once every `output` listener is on, while a
 * seventh drive, a bash at its prompt, is typed into key by key: the read pacer holds the floods'
 * chunks while each key's echo is awaited (backends/tmux/read-pacer.ts). Nothing lost, nothing out
 * of order: each drive's `output` events, joined, hold each of its lines once and in order, the
 * typed command runs, and chunks were held. Timing is the bench's (many-streams).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { systemReadPacer } from '../../../backends/tmux/read-pacer.js';
import type { Session } from '../../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../../helpers.js';

const DRIVES = 6;
const LINES = 150_000;

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

let t: TestDriver | undefined;
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
});

describe('drives flooding at once through one driver', () => {
  it('deliver every line of every drive once and in order, and an idle drive still runs what is typed', async () => {
    t = await openDriver([allow('python3', '/usr/bin/python3'), allow('bash', '/bin/bash')], { redactSecrets: false });
    const idle = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 120, rows: 40 });
    expect((await idle.wait({ forText: /[$#] $/m, timeoutMs: 20_000 })).outcome).toBe('text');
    const drives: Session[] = [];
    const outputs: Buffer[][] = [];
    const flowing: Promise<void>[] = [];
    for (let d = 0; d < DRIVES; d++) {
      const s = await t.driver.create({ allowId: 'python3', args: ['-c', flood(d)], cols: 120, rows: 40, name: `flood-${d}` });
      const chunks: Buffer[] = [];
      let bytes = 0;
      let flowed: () => void = () => undefined;
      flowing.push(new Promise((resolve) => (flowed = resolve)));
      s.on('output', (data) => {
        chunks.push(Buffer.from(data));
        if ((bytes += data.length) > 64 * 1024) flowed();
      });
      drives.push(s);
      outputs.push(chunks);
      expect((await s.wait({ forText: 'READY', timeoutMs: 20_000 })).outcome).toBe('text');
    }
    // All at once, each listened to from its first line; typed into the idle drive meanwhile, key
    // by key (each key's echo awaited: the pacer holds the floods' chunks for it).
    const heldBefore = systemReadPacer.counts.queued;
    await Promise.all(drives.map((s) => s.sendKeys('Enter')));
    await Promise.all(flowing);
    for (let k = 0; k < 20; k++) await idle.sendText('x');
    await idle.sendKeys('C-u');
    await idle.sendText('echo typed-$((6*7))', { submit: true });
    const typed = idle.wait({ forText: 'typed-42', timeoutMs: 60_000 });
    const ends = drives.map((s, d) => s.wait({ forText: `PACE-END-${d}`, timeoutMs: 120_000 }));
    expect((await typed).outcome).toBe('text');
    for (const end of await Promise.all(ends)) expect(end.outcome).toBe('text');
    for (let d = 0; d < DRIVES; d++) {
      const text = Buffer.concat(outputs[d]!).toString('latin1');
      expect(gaps(text, d), `drive ${d}`).toEqual([]);
      expect(text).toContain(`PACE-END-${d}`);
    }
    // The floods' chunks were held for the keys' echoes (else the pacer went untested here).
    expect(systemReadPacer.counts.queued).toBeGreaterThan(heldBefore);
  }, 180_000);
});
