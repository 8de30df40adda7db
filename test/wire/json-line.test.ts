/**
 * The one newline-delimited JSON decoder (lib/wire/json-line.ts) against hostile input: chunks
 * split at every byte (inside UTF-8 characters and CRLFs), invalid UTF-8, a line past the cap with
 * and without its newline ever coming, blank lines, 10 000 lines in one chunk, random bytes.
 * Pure: no sockets here (json-line-users.test.ts drives the three users over real sockets).
 */
import { describe, expect, it } from 'vitest';
import { JsonLineDecoder, LineError, type LineFault } from '../../lib/wire/json-line.js';

interface Seen {
  values: unknown[];
  errors: { fault: LineFault; id: unknown; code: string }[];
}

function decoder(maxLineBytes = 1024, maxDepth = 8): { d: JsonLineDecoder; seen: Seen } {
  const seen: Seen = { values: [], errors: [] };
  const d = new JsonLineDecoder({
    maxLineBytes,
    maxDepth,
    headBytes: 64,
    onValue: (v) => seen.values.push(v),
    onError: (e) => {
      expect(e).toBeInstanceOf(LineError);
      seen.errors.push({ fault: e.fault, id: e.id, code: e.code });
    },
  });
  return { d, seen };
}

const enc = (s: string): Buffer => Buffer.from(s, 'utf8');

const STREAM = Buffer.concat([
  enc('{"id":1,"text":"héllo ✓ 𝄞 日本"}\r\n'),
  enc('\n\r\n   \n'),
  enc('{"id":"two","nested":{"a":[1,2,{"b":"\\n"}]}}\n'),
  enc('[1,"x"]\r\n'),
  enc('"just a string"\n'),
  Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x33, 0x2c, 0x22, 0x74, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]), // {"id":3,"t":"\xff\xfe"}
  enc('{"id":4,"bad":}\n'),
  enc('{"id":5,"last":"ü"}\n'),
]);

const EXPECTED_VALUES = [{ id: 1, text: 'héllo ✓ 𝄞 日本' }, { id: 'two', nested: { a: [1, 2, { b: '\n' }] } }, [1, 'x'], 'just a string', { id: 5, last: 'ü' }];
const EXPECTED_ERRORS = [
  { fault: 'not_utf8', id: 3, code: 'PROTOCOL_ERROR' },
  { fault: 'not_json', id: 4, code: 'PROTOCOL_ERROR' },
];

describe('JsonLineDecoder', () => {
  it('decodes the same values and errors whether the stream comes whole or split at every byte', () => {
    const whole = decoder();
    whole.d.push(STREAM);
    expect(whole.seen.values).toEqual(EXPECTED_VALUES);
    expect(whole.seen.errors).toEqual(EXPECTED_ERRORS);
    for (let cut = 1; cut < STREAM.length; cut++) {
      const two = decoder();
      two.d.push(STREAM.subarray(0, cut));
      two.d.push(STREAM.subarray(cut));
      expect(two.seen.values).toEqual(EXPECTED_VALUES);
      expect(two.seen.errors).toEqual(EXPECTED_ERRORS);
    }
    const bytewise = decoder();
    for (let i = 0; i < STREAM.length; i++) bytewise.d.push(STREAM.subarray(i, i + 1));
    expect(bytewise.seen.values).toEqual(EXPECTED_VALUES);
    expect(bytewise.seen.errors).toEqual(EXPECTED_ERRORS);
  });

  it('a line past the cap is reported the moment it passes (its id read from its head), skipped to its newline, and the next line decodes', () => {
    const { d, seen } = decoder(1024);
    d.push(enc(`{"id":"big","text":"${'y'.repeat(600)}`));
    expect(seen.errors).toEqual([]);
    d.push(enc('y'.repeat(600)));
    expect(seen.errors).toEqual([{ fault: 'too_large', id: 'big', code: 'PROTOCOL_ERROR' }]);
    // Its rest costs nothing to hold, however long it goes on.
    for (let i = 0; i < 100; i++) d.push(enc('z'.repeat(10_000)));
    expect(d.heldBytes).toBe(0);
    d.push(enc('zz"}\n{"id":"after"}\n'));
    expect(seen.errors).toHaveLength(1);
    expect(seen.values).toEqual([{ id: 'after' }]);
  });

  it('a peer that never sends a newline holds at most the cap, in one buffer, byte by byte too', () => {
    const { d, seen } = decoder(4096);
    for (let i = 0; i < 4096; i++) d.push(enc('a'));
    expect(d.heldBytes).toBeLessThanOrEqual(4096);
    expect(seen.errors).toEqual([]);
    d.push(enc('a'));
    expect(seen.errors.map((e) => e.fault)).toEqual(['too_large']);
    expect(seen.errors[0]?.id).toBeUndefined(); // nothing id-like in its head
    expect(d.heldBytes).toBe(0);
    expect(d.end()).toBe(4097);
  });

  it('a line exactly at the cap is a value; one byte more is not', () => {
    const line = `{"k":"${'v'.repeat(1024 - 8)}"}`;
    expect(Buffer.byteLength(line)).toBe(1024);
    const { d, seen } = decoder(1024);
    d.push(enc(`${line}\n`));
    d.push(enc(`${line} \n`));
    expect(seen.values).toHaveLength(1);
    expect(seen.errors.map((e) => e.fault)).toEqual(['too_large']);
  });

  it('10 000 lines in one chunk come out in order; a big line does not pin its buffer', () => {
    const { d, seen } = decoder(1 << 20);
    d.push(enc(Array.from({ length: 10_000 }, (_, i) => JSON.stringify({ i })).join('\n') + '\n'));
    expect(seen.values).toHaveLength(10_000);
    expect(seen.values.every((v, i) => (v as { i: number }).i === i)).toBe(true);
    d.push(enc(`{"big":"${'b'.repeat(500_000)}`));
    expect(d.heldBytes).toBeGreaterThan(500_000);
    d.push(enc('"}\n'));
    expect(d.heldBytes).toBe(0);
    expect(seen.values).toHaveLength(10_001);
  });

  it('nesting past the bound is refused unparsed; brackets inside strings do not count', () => {
    const { d, seen } = decoder(1 << 16, 8);
    d.push(enc(`{"id":7,"a":${'['.repeat(9)}${']'.repeat(9)}}\n`));
    d.push(enc(`{"id":8,"s":"${'['.repeat(100)}"}\n`));
    expect(seen.errors).toEqual([{ fault: 'too_deep', id: 7, code: 'PROTOCOL_ERROR' }]);
    expect(seen.values).toEqual([{ id: 8, s: '['.repeat(100) }]);
  });

  it('never throws on random bytes, split anywhere, and stays bounded', () => {
    let seed = 0x2545f491;
    const rand = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 0x1_0000_0000;
    };
    const { d, seen } = decoder(512, 4);
    let maxHeld = 0;
    for (let round = 0; round < 2000; round++) {
      const chunk = Buffer.alloc(1 + Math.floor(rand() * 300));
      for (let i = 0; i < chunk.length; i++) chunk[i] = rand() < 0.05 ? 0x0a : rand() < 0.5 ? Math.floor(rand() * 256) : '{}[]",:\\0123 \r'.charCodeAt(Math.floor(rand() * 15));
      d.push(chunk); // a throw fails the test
      maxHeld = Math.max(maxHeld, d.heldBytes);
    }
    expect(maxHeld).toBeLessThanOrEqual(512);
    expect(seen.errors.length + seen.values.length).toBeGreaterThan(0);
  });
});
