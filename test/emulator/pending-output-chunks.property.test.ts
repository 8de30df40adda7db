/**
 * PendingOutput keeps plain chunks by reference and copies them only when their bytes are needed;
 * a fast-forward whose cut falls among them copies only the bytes from the cut on
 * (lib/emulator/pending-output.ts, reverse-cut.ts). The bytes a parse gets must be the very ones a
 * queue that copies every chunk gives: two queues get the same output, split into random chunks —
 * one told which chunks are plain (as the mirror tells it), one not — with resizes and parse steps
 * in between; every skip and every byte peeked must agree. Pure: no terminal is involved (the
 * mirror-level equality with tmux is test/emulator/fast-forward.test.ts and the fuzzer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingOutput } from '../../lib/emulator/pending-output.js';
import { lateCutInPieces } from '../../lib/emulator/reverse-cut.js';

const enc = new TextEncoder();
const dec = new TextDecoder();

function isPlain(bytes: Uint8Array): boolean {
  return bytes.every((b) => (b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d);
}

/**
 * One parse step as queued-parse's #parseSome takes it: the resize due, a stop at `until` (a skip
 * may pass it: then the slice asked for is ≤ 0), a fast-forward (always allowed), a slice; logs
 * what was skipped and the bytes parsed.
 */
function parseStep(q: PendingOutput, max: number, untilAfter = Number.POSITIVE_INFINITY): string {
  const log: string[] = [];
  let budget = max;
  const until = q.parsedOffset + untilAfter;
  while (budget > 0 && !q.idle) {
    const size = q.takeResize();
    if (size) {
      log.push(`resize ${size.cols}x${size.rows}`);
      continue;
    }
    if (q.parsedOffset >= until) break;
    const skipped = q.fastForward(() => true);
    if (skipped > 0) log.push(`skip ${skipped}`);
    const chunk = q.peek(Math.min(budget, until - q.parsedOffset));
    expect(chunk.length).toBeLessThanOrEqual(q.length);
    if (chunk.length === 0) continue;
    log.push(`parse ${JSON.stringify(dec.decode(chunk))}`);
    q.consume(chunk.length);
    budget -= chunk.length;
  }
  return log.join(', ');
}

const lines = fc.record({ n: fc.integer({ min: 1, max: 80 }), width: fc.integer({ min: 0, max: 30 }), ending: fc.constantFrom('\r\n', '\n', '\r') });
type Step = { op: 'write'; lines: { n: number; width: number; ending: string }; escape: string; splits: number[] } | { op: 'resize'; cols: number; rows: number } | { op: 'parse'; max: number; until: number };
const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record({ op: fc.constant('write' as const), lines, escape: fc.constantFrom('', '', '', '\x1b[1m', '\t', '\x1b(0'), splits: fc.array(fc.integer({ min: 1, max: 300 }), { minLength: 1, maxLength: 8 }) }) as fc.Arbitrary<Step>,
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('resize' as const), cols: fc.integer({ min: 4, max: 20 }), rows: fc.integer({ min: 2, max: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('parse' as const), max: fc.integer({ min: 1, max: 4000 }), until: fc.integer({ min: 1, max: 4000 }) }) },
);

describe('PendingOutput: plain chunks kept by reference', () => {
  it('give the same skips and the same parsed bytes as a queue that copies every chunk', () => {
    let skippedWithoutCopy = 0;
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(step, { minLength: 1, maxLength: 40, size: 'max' }), (scrollback, steps) => {
        const byRef = new PendingOutput(10, 4, scrollback);
        const copying = new PendingOutput(10, 4, scrollback);
        let counter = 0;
        let appended = 0;
        for (const s of steps) {
          if (s.op === 'write') {
            let text = s.escape;
            for (let k = 0; k < s.lines.n; k++) text += `${String(counter++ % 1000).padEnd(s.lines.width, 'x')}${s.lines.ending}`;
            const bytes = enc.encode(text);
            // The same bytes in random chunks, each its own memory (as the decoder's results are).
            for (let at = 0, i = 0; at < bytes.length; i++) {
              const chunk = bytes.slice(at, at + (s.splits[i % s.splits.length] as number));
              at += chunk.length;
              appended += chunk.length;
              byRef.append(chunk, isPlain(chunk));
              copying.append(chunk.slice());
            }
            expect(byRef.inPlainRun).toBe(copying.inPlainRun);
          } else if (s.op === 'resize') {
            byRef.resize(s.cols, s.rows, false);
            copying.resize(s.cols, s.rows, false);
          } else expect(parseStep(byRef, s.max, s.until)).toBe(parseStep(copying, s.max, s.until));
          expect(byRef.parsedOffset).toBeLessThanOrEqual(byRef.writtenOffset);
          expect(byRef.length).toBe(copying.length);
          expect(byRef.writtenOffset).toBe(copying.writtenOffset);
        }
        expect(parseStep(byRef, Number.POSITIVE_INFINITY)).toBe(parseStep(copying, Number.POSITIVE_INFINITY));
        expect({ skips: byRef.stats.skips, skippedBytes: byRef.stats.skippedBytes }).toEqual({ skips: copying.stats.skips, skippedBytes: copying.stats.skippedBytes });
        expect(copying.stats.copiedBytes).toBe(appended);
        expect(byRef.stats.copiedBytes).toBeLessThanOrEqual(appended);
        if (byRef.stats.copiedBytes < appended) skippedWithoutCopy++;
      }),
      { numRuns: 300 },
    );
    // The by-reference path is the one under test: runs must skip chunks they never copied (as few as 24
    // of 300 seen; the bound leaves room for the seed).
    expect(skippedWithoutCopy).toBeGreaterThan(10);
  });

  it('a flood in many small plain chunks: only the bytes from the cut on are copied, and the skipped chunks are never read again', () => {
    const rows = 4;
    const scrollback = 50;
    const q = new PendingOutput(20, rows, scrollback);
    const text = enc.encode(Array.from({ length: 500 }, (_, i) => `\rline ${i}\n`).join(''));
    const chunks: Uint8Array[] = [];
    for (let at = 0; at < text.length; at += 37) chunks.push(text.slice(at, at + 37));
    for (const chunk of chunks) q.append(chunk, true);
    const skipped = q.fastForward(() => true);
    expect(skipped).toBeGreaterThan(0);
    expect(q.stats.copiedBytes).toBe(text.length - skipped);
    // Poison every chunk: the queue holds its own copy of what is left.
    for (const chunk of chunks) chunk.fill(0x21);
    const rest = dec.decode(q.peek(Number.POSITIVE_INFINITY));
    expect(rest).toBe(dec.decode(text.subarray(skipped)));
    expect(rest.startsWith('\r')).toBe(true);
    expect(rest.split('\n').length - 1).toBe(rows - 1 + rows + scrollback);
  });

  it('a slice asked for after a skip passed the parse limit is empty (the 20-drive bench hung on it)', () => {
    // A skip into referenced chunks rebases the buffer at the cut, so the head's index in it can be
    // smaller than how far the skip passed the limit: a negative end once made peek view the
    // buffer's stale end, parse it, and move the head past the tail (the parse loop then spun).
    const q = new PendingOutput(120, 40, 0);
    const text = enc.encode(Array.from({ length: 80 }, (_, i) => `${i}\r\n`).join(''));
    for (let i = 0; i < text.length; i++) q.append(text.slice(i, i + 1), true);
    const until = q.parsedOffset + 1;
    expect(q.fastForward(() => true)).toBeGreaterThan(1);
    expect(q.peek(until - q.parsedOffset).length).toBe(0);
    expect(q.parsedOffset).toBeLessThanOrEqual(q.writtenOffset);
    expect(dec.decode(q.peek(Number.POSITIVE_INFINITY))).toBe(dec.decode(text.subarray(q.parsedOffset)));
  });

  it('a terminal that says no to the skip gets every byte, copied', () => {
    const q = new PendingOutput(20, 4, 10);
    const text = enc.encode(Array.from({ length: 200 }, (_, i) => `\rline ${i}\n`).join(''));
    for (let at = 0; at < text.length; at += 50) q.append(text.slice(at, at + 50), true);
    expect(q.fastForward(() => false)).toBe(0);
    expect(dec.decode(q.peek(Number.POSITIVE_INFINITY))).toBe(dec.decode(text));
    expect(q.stats.copiedBytes).toBe(text.length);
  });
});

describe('lateCutInPieces', () => {
  it('finds the same cut as a search of the joined bytes, however they are split', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(0x0d, 0x0a, 0x41, 0x42), { maxLength: 200 }), fc.array(fc.integer({ min: 0, max: 20 }), { maxLength: 12 }), fc.integer({ min: 1, max: 12 }), (bytes, splits, needed) => {
        const joined = Uint8Array.from(bytes);
        const pieces: Uint8Array[] = [];
        let at = 0;
        for (const n of splits) {
          pieces.push(joined.subarray(at, at + n));
          at = Math.min(joined.length, at + n);
        }
        pieces.push(joined.subarray(at));
        let lf = joined.length;
        let expected = -1;
        for (let k = needed; k > 0 && lf >= 0; k--) lf = lf > 0 ? joined.lastIndexOf(0x0a, lf - 1) : -1;
        if (lf > 0) expected = joined.lastIndexOf(0x0d, lf - 1);
        expect(lateCutInPieces(pieces, joined.length, needed)).toBe(expected);
      }),
      { numRuns: 2000 },
    );
  });
});
