/**
 * Byte-exact input through the public API: a receiver in raw tty mode records every byte the pane
 * delivers; whatever sendText was given must arrive exactly, and nothing may be executed by tmux or
 * a shell on the way.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Session } from '../../lib/index.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';
import { BYTE_CORPUS, PWNED_FILES, RAW_RECEIVER } from '../byte-corpus.js';


describe.each(['tmux', 'spawn'] as const)('byte-exact input on the %s backend', (backend) => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('py', '/usr/bin/python3', { backend })]);
  });
  afterAll(async () => t.cleanup());

  async function roundTrip(text: string, paste: 'auto' | 'always' | 'never'): Promise<Buffer> {
    const sentinel = `<<END-${randomBytes(4).toString('hex')}>>`;
    const file = join(t.dataDir, 'workspace', `recv-${randomBytes(4).toString('hex')}.bin`);
    const s: Session = await t.driver.create({ allowId: 'py', args: ['-c', RAW_RECEIVER, file, sentinel], cols: 120, rows: 30 });
    try {
      expect((await s.wait({ forText: 'READY', timeoutMs: 10_000 })).outcome).toBe('text');
      await s.sendText(text, { paste });
      await s.sendText(sentinel, { paste: 'never' });
      const done = await s.wait({ forText: 'DONE', timeoutMs: 60_000 });
      const fid = done.outcome === 'text' || backend === 'spawn' ? undefined : await s.fidelity();
      expect(done.outcome, `exit ${JSON.stringify(done.status.exit)}; screen: ${s.read().content.trim().slice(0, 300)}; tmux: ${JSON.stringify(fid?.mismatches.slice(0, 4))}; transcript: ${s.transcript().map((e) => e.kind + (typeof e.data === 'string' ? JSON.stringify(e.data.slice(0, 40)) : '') + JSON.stringify(e.tags ?? {})).join(' ')}`).toBe('text');
      const got = readFileSync(file);
      return got.subarray(0, got.length - Buffer.byteLength(sentinel));
    } finally {
      await s.kill();
      rmSync(file, { force: true });
    }
  }

  for (const [label, text] of BYTE_CORPUS) {
    it(`delivers ${label} exactly, as keys and as a paste`, async () => {
      expect(await roundTrip(text, 'never')).toEqual(Buffer.from(text, 'utf8'));
      expect(await roundTrip(text, 'always')).toEqual(Buffer.from(text, 'utf8'));
    });
  }

  it('delivers 20 KB as literal keys and 1 MB through the paste buffer', async () => {
    const alphabet = `abc XYZ 0123 ;#{}$~"'\\% é中😀\t`;
    const make = (n: number): string => {
      let s = '';
      while (s.length < n) s += `${alphabet}${s.length}\n`;
      return s.slice(0, n);
    };
    const small = make(20_000);
    expect((await roundTrip(small, 'never')).equals(Buffer.from(small))).toBe(true);
    const big = make(1_000_000);
    expect((await roundTrip(big, 'auto')).equals(Buffer.from(big))).toBe(true);
  });

  it('executed nothing on the way', () => {
    for (const f of PWNED_FILES) expect(existsSync(f)).toBe(false);
  });
});
