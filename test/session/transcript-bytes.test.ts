/**
 * The transcript and `on('output')` hold exactly the bytes the program wrote, through a real tmux
 * server's control mode: every byte value (escaped by tmux as `\ooo` or sent raw), and each chunk
 * still whole after later output, for a listener that keeps the chunks it was given without
 * copying them (the parser decodes into shared slabs: a chunk must never be reused or overlap).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allow, openDriver, type TestDriver } from '../helpers.js';

/** Every byte but ESC (a query could make tmux answer into cat's terminal) and 'E' (the end marker), and backslashes before digits. */
function programBytes(): Buffer {
  const unit: number[] = [];
  for (let b = 0; b < 256; b++) if (b !== 0x1b && b !== 0x45) unit.push(b);
  unit.push(...Buffer.from('\\015\\012\\9\\1\\\\', 'latin1'));
  const parts: Buffer[] = [];
  for (let i = 0; i < 1200; i++) parts.push(Buffer.from(unit.slice(i % 200).concat(unit.slice(0, i % 200))));
  // Back to the G0 charset (the data holds SO) and to a new line, so the end marker reads as written.
  parts.push(Buffer.from('\x0f\n', 'latin1'));
  return Buffer.concat(parts);
}

/** What the pty's line discipline makes of it (ONLCR: LF becomes CR LF). */
function asThePtyWritesIt(data: Buffer): Buffer {
  return Buffer.from(data.toString('latin1').replaceAll('\n', '\r\n'), 'latin1');
}

describe('output bytes through control mode', () => {
  let t: TestDriver;
  beforeAll(async () => {
    // Redaction off: the transcript then gives output as the raw bytes.
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], { worker: { ringBytes: 8 << 20 }, redactSecrets: false });
  });
  afterAll(async () => t.cleanup());

  it('reach the transcript and kept output chunks exactly as the program wrote them', async () => {
    const data = programBytes();
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], cols: 120, rows: 40, name: 'bytes' });
    // The drive's workspace (the same path inside its sandbox) exists once a drive does.
    const file = join(t.driver.dataDir, 'workspace', 'bytes.bin');
    writeFileSync(file, data);
    await s.wait({ forText: '$ ' });
    try {
      const kept: Uint8Array[] = [];
      s.on('output', (chunk) => kept.push(chunk));
      const firstSeq = s.transcript().at(-1)?.seq ?? 0;
      await s.sendText(`echo BEGIN-$((3+4)); cat ${file}; echo END-$((3+4))`, { submit: true });
      expect((await s.wait({ forText: 'END-7', timeoutMs: 30_000 })).outcome).toBe('text');
      const expected = Buffer.concat([Buffer.from('BEGIN-7\r\n'), asThePtyWritesIt(data), Buffer.from('END-7')]);
      const between = (stream: Buffer): Buffer => {
        const from = stream.indexOf('BEGIN-7\r\n');
        // The wait may end before the marker's line end arrives: compare up to the marker.
        const to = stream.lastIndexOf('END-7');
        expect(from).toBeGreaterThanOrEqual(0);
        return stream.subarray(from, to + 'END-7'.length);
      };
      const fromChunks = between(Buffer.concat(kept));
      expect(fromChunks.equals(expected)).toBe(true);
      expect(kept.length).toBeGreaterThan(10);
      const entries = s.transcript({ after: firstSeq }).filter((e) => e.kind === 'output' && e.data instanceof Uint8Array);
      expect(between(Buffer.concat(entries.map((e) => e.data as Uint8Array))).equals(expected)).toBe(true);
    } finally {
      await s.kill();
    }
  }, 60_000);
});
