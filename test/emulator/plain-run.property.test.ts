/**
 * plainEnd (lib/emulator/input/plain-run.ts) tests four aligned bytes at once: it must end every
 * run exactly where a byte-by-byte test does, for chunks at any offset of a shared buffer (the
 * octal decoder carves chunks from one slab), at any start, with bytes at the edges of the
 * printable range (0x1f, 0x20, 0x7e, 0x7f, 0x80, 0xff) and CR, LF, ESC anywhere.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { plainEnd } from '../../lib/emulator/input/plain-run.js';

function reference(data: Uint8Array, from: number): number {
  let i = from;
  while (i < data.length && ((data[i] as number) >= 0x20 ? (data[i] as number) < 0x7f : data[i] === 0x0d || data[i] === 0x0a)) i++;
  return i;
}

const byte = fc.oneof(
  { weight: 20, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
  { weight: 3, arbitrary: fc.constantFrom(0x0d, 0x0a) },
  { weight: 1, arbitrary: fc.constantFrom(0x00, 0x1b, 0x1f, 0x7f, 0x80, 0xa0, 0xfe, 0xff, 0x09, 0x07) },
);

describe('plainEnd: the same end as a byte-by-byte test', () => {
  it('for any bytes, offset in a shared buffer and start', () => {
    fc.assert(
      fc.property(fc.array(byte, { maxLength: 300, size: 'max' }), fc.nat(7), fc.nat(7), fc.nat(300), (bytes, lead, trail, start) => {
        const slab = new Uint8Array(lead + bytes.length + trail).fill(0x41);
        slab.set(bytes, lead);
        const chunk = slab.subarray(lead, lead + bytes.length);
        const from = Math.min(start, chunk.length);
        expect(plainEnd(chunk, from)).toBe(reference(chunk, from));
      }),
      { numRuns: 3000 },
    );
  });

  it('a chunk of a buffer whose length is not a multiple of four, ending at its last byte', () => {
    const slab = new Uint8Array(103).fill(0x61);
    for (let lead = 0; lead < 8; lead++) {
      const chunk = slab.subarray(lead);
      expect(plainEnd(chunk, 0)).toBe(chunk.length);
      slab[102] = 0x7f;
      expect(plainEnd(chunk, 0)).toBe(chunk.length - 1);
      slab[102] = 0x61;
    }
  });
});
