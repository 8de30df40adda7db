import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeOctal, OctalDecoder } from '../../lib/control/octal.js';

/**
 * The decode as it was before the slab and the copy-skipping (a plain reference: per-escape copy
 * into a fresh buffer): the fast decode must give the same bytes on any input, malformed included.
 */
function referenceDecode(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  const digit = (at: number): number => {
    const b = bytes[at];
    return b !== undefined && b >= 0x30 && b <= 0x37 ? b - 0x30 : -1;
  };
  const out: number[] = [];
  for (let i = start; i < end; ) {
    const a = digit(i + 1);
    if (bytes[i] === 0x5c && a >= 0 && a <= 3 && digit(i + 2) >= 0 && digit(i + 3) >= 0 && i + 3 < end) {
      out.push((a << 6) | (digit(i + 2) << 3) | digit(i + 3));
      i += 4;
    } else out.push(bytes[i++] as number);
  }
  return Uint8Array.from(out);
}

/** Backslashes, octal and non-octal digits, line ends and high bytes: escapes whole, short, malformed and cut. */
const escapeHeavy = fc
  .array(
    fc.oneof(
      fc.constantFrom(0x5c, 0x30, 0x31, 0x33, 0x34, 0x37, 0x38, 0x39, 0x0a, 0x0d, 0x41, 0xff),
      fc.constantFrom('\\015\\012', '\\9', '\\1', '\\12', '\\400', '\\377', '\\\\134', '\\').map((s) => Array.from(Buffer.from(s, 'latin1'))),
      fc.integer({ min: 0, max: 255 }),
    ),
    { maxLength: 400 },
  )
  .map((parts) => Uint8Array.from(parts.flat()));

/** An input with a range inside it, the way the parser decodes a payload after the line's header. */
const withRange = escapeHeavy.chain((input) =>
  fc.tuple(fc.constant(input), fc.nat({ max: input.length }), fc.nat({ max: input.length })).map(([bytes, x, y]) => ({ bytes, start: Math.min(x, y), end: Math.max(x, y) })),
);

describe('octal decode properties', () => {
  it('decodeOctal equals the reference decode on any input, malformed escapes included', () => {
    fc.assert(
      fc.property(withRange, ({ bytes, start, end }) => {
        expect(decodeOctal(bytes, start, end)).toEqual(referenceDecode(bytes, start, end));
        expect(decodeOctal(bytes)).toEqual(referenceDecode(bytes));
      }),
      { numRuns: 2000 },
    );
  });

  it("the parser's slab decoder gives the same bytes, each result its own and none a view of the input", () => {
    fc.assert(
      fc.property(fc.array(withRange, { minLength: 1, maxLength: 60 }), fc.integer({ min: 0, max: 40_000 }), (inputs, bigSize) => {
        const decoder = new OctalDecoder();
        // A big line now and then: past the slab's carve limit, and forcing a new slab.
        const all = [...inputs, { bytes: new Uint8Array(bigSize).fill(0x5c), start: 0, end: bigSize }, ...inputs];
        const results = all.map(({ bytes, start, end }) => decoder.decode(bytes, start, end));
        const expected = all.map(({ bytes, start, end }) => referenceDecode(bytes, start, end));
        for (const [i, r] of results.entries()) expect(Buffer.from(r).equals(expected[i] as Uint8Array)).toBe(true);
        // Scribbling over the inputs changes no result; filling each result with its own mark
        // leaves every other result's mark whole: no result overlaps another.
        for (const { bytes } of all) bytes.fill(0x21);
        for (const [i, r] of results.entries()) expect(Buffer.from(r).equals(expected[i] as Uint8Array)).toBe(true);
        for (const [i, r] of results.entries()) r.fill(i % 251);
        for (const [i, r] of results.entries()) expect(r.every((b) => b === i % 251)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });
});
