import { describe, expect, it } from 'vitest';
import { decodeOctal } from '../../lib/control/octal.js';
import { bytes } from './transcript.js';

/** tmux 3.3a's escaping in control_write_output: bytes below 0x20 and the backslash as \ooo. */
function escapeLikeTmux(data: Uint8Array): Uint8Array {
  const out: number[] = [];
  for (const b of data) {
    if (b < 0x20 || b === 0x5c) out.push(0x5c, ...bytes(b.toString(8).padStart(3, '0')));
    else out.push(b);
  }
  return Uint8Array.from(out);
}

const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

describe('decodeOctal', () => {
  it('round-trips every byte 0..255 escaped the way tmux does', () => {
    const all = Uint8Array.from({ length: 256 }, (_, i) => i);
    expect(decodeOctal(escapeLikeTmux(all))).toEqual(all);
    for (let b = 0; b < 256; b++) expect(decodeOctal(escapeLikeTmux(Uint8Array.of(b, b)))).toEqual(Uint8Array.of(b, b));
  });

  it('decodes only the [start, end) range', () => {
    const line = bytes('%output %1 a\\015b');
    expect(text(decodeOctal(line, 11))).toBe('a\rb');
    expect(text(decodeOctal(line, 11, 13))).toBe('a\\');
  });

  it('keeps malformed escapes literally and never throws', () => {
    expect(text(decodeOctal(bytes('\\')))).toBe('\\');
    expect(text(decodeOctal(bytes('\\01')))).toBe('\\01');
    expect(text(decodeOctal(bytes('\\08x')))).toBe('\\08x');
    expect(text(decodeOctal(bytes('\\400')))).toBe('\\400');
    expect(text(decodeOctal(bytes('\\\\101')))).toBe('\\A');
    expect(text(decodeOctal(bytes('a\\12')))).toBe('a\\12');
  });

  it('returns a copy, never a view of the input', () => {
    const input = bytes('plain');
    const out = decodeOctal(input);
    input.fill(0x21);
    expect(text(out)).toBe('plain');
  });
});
