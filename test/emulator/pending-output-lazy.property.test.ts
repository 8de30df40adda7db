/**
 * PendingOutput scans chunks of plain text only when it must (lib/emulator/pending-output.ts, the
 * lazy region): the cuts it finds, so what a fast-forward skips and the slices a parse takes, must
 * be the very ones a scan of every byte finds. Two queues get the same chunks — one told which
 * chunks are plain (as the mirror tells it, from the input filter), one not — with resizes and
 * parse steps in between; every skip and every peek must agree. Pure: no terminal is involved
 * (the mirror-level equality with tmux is test/emulator/fast-forward.test.ts and the fuzzer).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PendingOutput } from '../../lib/emulator/pending-output.js';

const enc = new TextEncoder();

/** A piece of output: plain lines (some long enough to wrap, some CR-only redraws, some LF-only), or an escape. */
const piece = fc.oneof(
  fc.record({ kind: fc.constant('lines' as const), n: fc.integer({ min: 1, max: 60 }), width: fc.integer({ min: 0, max: 30 }), ending: fc.constantFrom('\r\n', '\n', '\r') }),
  fc.record({ kind: fc.constant('escape' as const), text: fc.constantFrom('\x1b[1m', '\x1b[2J', '\x1b(0', '\t', '\x1b7') }),
);

type Step = { op: 'write'; pieces: { kind: 'lines'; n: number; width: number; ending: string }[] | { kind: 'escape'; text: string }[] } | { op: 'resize'; cols: number; rows: number } | { op: 'parse'; max: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('write' as const), pieces: fc.array(piece, { minLength: 1, maxLength: 4 }) }) as fc.Arbitrary<Step> },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('resize' as const), cols: fc.integer({ min: 4, max: 20 }), rows: fc.integer({ min: 2, max: 6 }) }) },
  { weight: 2, arbitrary: fc.record({ op: fc.constant('parse' as const), max: fc.integer({ min: 1, max: 4000 }) }) },
);

function render(pieces: readonly ({ kind: 'lines'; n: number; width: number; ending: string } | { kind: 'escape'; text: string })[], counter: { i: number }): string {
  let out = '';
  for (const p of pieces) {
    if (p.kind === 'escape') out += p.text;
    else for (let k = 0; k < p.n; k++) out += `${String(counter.i++ % 1000).padEnd(p.width, 'x')}${p.ending}`;
  }
  return out;
}

/** True when every byte is printable ASCII, CR or LF: what the input filter passes whole. */
function isPlain(bytes: Uint8Array): boolean {
  return bytes.every((b) => (b >= 0x20 && b < 0x7f) || b === 0x0a || b === 0x0d);
}

/** One parse step on a queue: the resize due, a fast-forward (always allowed here), a slice. */
function parseStep(q: PendingOutput, max: number): string {
  const log: string[] = [];
  let budget = max;
  while (budget > 0 && !q.idle) {
    const size = q.takeResize();
    if (size) {
      log.push(`resize ${size.cols}x${size.rows}`);
      continue;
    }
    const skipped = q.fastForward(() => true);
    if (skipped > 0) log.push(`skip ${skipped}`);
    const chunk = q.peek(budget);
    if (chunk.length === 0) continue;
    log.push(`parse ${chunk.length}`);
    q.consume(chunk.length);
    budget -= chunk.length;
  }
  return log.join(', ');
}

describe('PendingOutput: a lazily scanned plain chunk gives the same cuts as a scan of every byte', () => {
  it('same skips, same slices, same state, for random plain floods, escapes, resizes and parse steps', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 40 }), fc.array(step, { minLength: 1, maxLength: 40, size: 'max' }), (scrollback, steps) => {
        const lazy = new PendingOutput(10, 4, scrollback);
        const eager = new PendingOutput(10, 4, scrollback);
        const counter = { i: 0 };
        for (const s of steps) {
          if (s.op === 'write') {
            const bytes = enc.encode(render(s.pieces, counter));
            lazy.append(bytes, isPlain(bytes));
            eager.append(bytes);
            expect(lazy.inPlainRun).toBe(eager.inPlainRun);
          } else if (s.op === 'resize') {
            lazy.resize(s.cols, s.rows, false);
            eager.resize(s.cols, s.rows, false);
          } else expect(parseStep(lazy, s.max)).toBe(parseStep(eager, s.max));
          expect(lazy.length).toBe(eager.length);
        }
        expect(parseStep(lazy, Number.POSITIVE_INFINITY)).toBe(parseStep(eager, Number.POSITIVE_INFINITY));
        expect({ skips: lazy.stats.skips, skippedBytes: lazy.stats.skippedBytes }).toEqual({ skips: eager.stats.skips, skippedBytes: eager.stats.skippedBytes });
      }),
      { numRuns: 400 },
    );
  });

  it('a flood in many small plain chunks is skipped up to the same cut as when scanned byte by byte', () => {
    const rows = 4;
    const scrollback = 50;
    const lazy = new PendingOutput(20, rows, scrollback);
    const eager = new PendingOutput(20, rows, scrollback);
    const text = enc.encode(Array.from({ length: 500 }, (_, i) => `\rline ${i}\n`).join(''));
    for (let at = 0; at < text.length; at += 37) {
      const chunk = text.subarray(at, at + 37);
      lazy.append(chunk, true);
      eager.append(chunk);
    }
    const skipped = lazy.fastForward(() => true);
    expect(skipped).toBe(eager.fastForward(() => true));
    expect(skipped).toBeGreaterThan(0);
    // What is left to parse is exactly the lines a skip keeps (rows − 1 + rows + scrollback), from a CR.
    const rest = new TextDecoder().decode(lazy.peek(Number.POSITIVE_INFINITY));
    expect(rest.startsWith('\r')).toBe(true);
    expect(rest.split('\n').length - 1).toBe(rows - 1 + rows + scrollback);
  });
});
