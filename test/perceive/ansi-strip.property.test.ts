/**
 * The stripper a pending text wait runs on every chunk (lib/perceive/ansi-text.ts): a chunk with
 * no ESC and no 8-bit CSI in the ground state takes a native pass (its control characters dropped);
 * any other goes through the state machine. Either way the text equals a per-character reference
 * (the state machine as it was before the plain pass), for any input cut into any chunks: the
 * pass is taken between sequences, never inside one (a chunk that ends an OSC or a CSI begun in
 * the previous one). Pure: strings in, strings out.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnsiStripper } from '../../lib/perceive/ansi-text.js';

/** The reference: one character at a time, the states of ansi-text.ts. */
function referenceStrip(text: string): string {
  let state: 'text' | 'esc' | 'csi' | 'string' | 'stringEsc' | 'escIntermediate' = 'text';
  let out = '';
  for (const ch of text) {
    const c = ch.codePointAt(0) ?? 0;
    switch (state) {
      case 'text':
        if (c >= 0x20 && c !== 0x9b) out += ch;
        else if (c === 0x1b) state = 'esc';
        else if (c === 0x9b) state = 'csi';
        else if (c === 0x0a || c === 0x09) out += ch;
        break;
      case 'esc':
        if (c === 0x5b) state = 'csi';
        else if (c === 0x5d || c === 0x50 || c === 0x5f || c === 0x5e || c === 0x58) state = 'string';
        else if (c >= 0x20 && c <= 0x2f) state = 'escIntermediate';
        else state = 'text';
        break;
      case 'escIntermediate':
        state = 'text';
        break;
      case 'csi':
        if (c >= 0x40 && c <= 0x7e) state = 'text';
        break;
      case 'string':
        if (c === 0x07) state = 'text';
        else if (c === 0x1b) state = 'stringEsc';
        break;
      case 'stringEsc':
        state = c === 0x5c ? 'text' : 'string';
        break;
    }
  }
  return out;
}

/** Pieces output is made of: plain text, CR/LF/TAB, other controls, sequences, their fragments. */
const piece = fc.oneof(
  fc.constantFrom('abc', 'END-42-n', ' ', 'é', '✓', '\x7f', '\x85', '\x9b', '\x9c'),
  fc.constantFrom('\r', '\n', '\r\n', '\t', '\x00', '\x07', '\x08', '\x0b', '\x1f'),
  fc.constantFrom('\x1b[1;31m', '\x1b[0m', '\x1b[2K', '\x1b]0;title\x07', '\x1b]2;t\x1b\\', '\x1bP1$r\x1b\\', '\x1b(B', '\x1b7', '\x9b1m'),
  fc.constantFrom('\x1b', '\x1b[', '\x1b[1;', '\x1b]', '\x1b]0;ti', '\x1b(', '\x1bP'),
);

describe('AnsiStripper', () => {
  it('equals the per-character reference for any output cut into any chunks', () => {
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 60 }), fc.array(fc.nat({ max: 400 }), { maxLength: 8 }), (pieces, cutsAt) => {
        const text = pieces.join('');
        const cuts = [...new Set(cutsAt.map((c) => c % (text.length + 1)))].sort((a, b) => a - b);
        const stripper = new AnsiStripper();
        let out = '';
        let from = 0;
        for (const cut of [...cuts, text.length]) {
          out += stripper.push(text.slice(from, cut));
          from = cut;
        }
        expect(out).toBe(referenceStrip(text));
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps TAB and LF of plain output and drops its other control characters', () => {
    const stripper = new AnsiStripper();
    expect(stripper.push('a\tb\r\nc\x07d\x7fe\x85')).toBe('a\tb\ncd\x7fe\x85');
    // An OSC begun in one chunk is not plain text in the next: its rest is dropped up to BEL.
    expect(stripper.push('x\x1b]0;ti')).toBe('x');
    expect(stripper.push('tle\x07y\r\n')).toBe('y\n');
  });
});
