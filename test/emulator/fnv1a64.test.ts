import { describe, expect, it } from 'vitest';
import { Fnv1a64 } from '../../lib/common/fnv1a64.js';

function hashBytes(s: string): string {
  const h = new Fnv1a64();
  for (const b of new TextEncoder().encode(s)) h.byte(b);
  return h.hex();
}

describe('Fnv1a64', () => {
  it('matches the published FNV-1a 64-bit test vectors', () => {
    expect(hashBytes('')).toBe('cbf29ce484222325');
    expect(hashBytes('a')).toBe('af63dc4c8601ec8c');
    expect(hashBytes('foobar')).toBe('85944171f73967e8');
  });

  it('length-prefixes strings so that a split point changes the hash', () => {
    const ab = new Fnv1a64();
    ab.str('ab');
    ab.str('c');
    const a = new Fnv1a64();
    a.str('a');
    a.str('bc');
    expect(ab.hex()).not.toBe(a.hex());
  });
});
