import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ControlParser, type ControlEvent } from '../../lib/control/parser.js';
import { fixture, parse } from './transcript.js';

const VALID = ['tmux33a-replies.txt', 'tmux33a-flow-control.txt', 'spoofed-guards.txt', 'notifications-in-block.txt', 'split-utf8.txt'].map(fixture);
const ALL = [...VALID, fixture('unknown-and-stray.txt'), fixture('exit-mid-block.txt')];

/** Bytes the protocol cares about, so random input hits the interesting paths often. */
const interestingByte = fc.oneof(fc.constantFrom(0x0a, 0x0d, 0x20, 0x25, 0x5c, 0x3a, 0x30, 0x31, 0x37), fc.integer({ min: 0, max: 255 }));

function cutsFor(length: number): fc.Arbitrary<number[]> {
  return fc.uniqueArray(fc.integer({ min: 0, max: length }), { maxLength: 12 }).map((c) => c.sort((a, b) => a - b));
}

function parseTimed(input: Uint8Array, cuts: number[] = []): ControlEvent[] {
  const started = performance.now();
  const events = parse(input, cuts);
  expect(performance.now() - started).toBeLessThan(500);
  return events;
}

describe('ControlParser properties', () => {
  it('never throws and terminates quickly on random bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 2000 }), fc.array(interestingByte, { maxLength: 2000 }), (random, biased) => {
        parseTimed(random);
        parseTimed(Uint8Array.from(biased));
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on mutated valid transcripts', () => {
    const mutation = fc.record({
      fixture: fc.constantFrom(...ALL),
      edits: fc.array(fc.tuple(fc.nat(), fc.constantFrom('flip', 'delete', 'insert', 'duplicate'), interestingByte), { maxLength: 8 }),
    });
    fc.assert(
      fc.property(mutation, ({ fixture: base, edits }) => {
        const data = Array.from(base);
        for (const [pos, op, byte] of edits) {
          const at = pos % (data.length + 1);
          if (op === 'flip') data[at] = byte;
          else if (op === 'delete') data.splice(at, 1);
          else if (op === 'insert') data.splice(at, 0, byte);
          else data.splice(at, 0, ...data.slice(at, at + 40));
        }
        parseTimed(Uint8Array.from(data));
      }),
      { numRuns: 500 },
    );
  });

  it('gives the same events for a valid transcript however it is chunked', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ALL).chain((input) => fc.tuple(fc.constant(input), cutsFor(input.length))),
        ([input, cuts]) => {
          expect(parseTimed(input, cuts)).toEqual(parseTimed(input));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('gives the same events for a random byte stream however it is chunked', () => {
    fc.assert(
      fc.property(
        fc.array(interestingByte, { maxLength: 600 }).chain((b) => fc.tuple(fc.constant(Uint8Array.from(b)), cutsFor(b.length))),
        ([input, cuts]) => {
          expect(parse(input, cuts)).toEqual(parse(input));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('parses a new stream pushed after end()', () => {
    const events: ControlEvent[] = [];
    const parser = new ControlParser((e) => events.push(e));
    parser.push(VALID[0] as Uint8Array);
    parser.end();
    parser.push(new TextEncoder().encode('%window-add @9\n'));
    parser.end();
    expect(events.at(-1)).toEqual({ kind: 'notification', name: 'window-add', window: '@9' });
  });
});
