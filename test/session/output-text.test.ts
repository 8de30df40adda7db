/**
 * Pane output as text for the text waits: UTF-8 split across chunks reads whole, also where the
 * output a wait reads first (a send's, replayed) meets the live stream after it; a chunk decoded
 * whole (the fast path between characters) reads as the one streaming decoder reads it.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AnsiStripper } from '../../lib/perceive/ansi-text.js';
import { OutputText } from '../../lib/session/output-text.js';

const bytes = (s: string): Uint8Array => new TextEncoder().encode(s);
/** "héllo \x1b[31mred\x1b[0m" cut inside the é and inside the colour sequence. */
const whole = bytes('h\u00e9llo \x1b[31mred\x1b[0m done');
const cut1 = 2; // between the é's two bytes
const cut2 = 10; // inside "\x1b[31m"

describe('OutputText', () => {
  it('reads a character and a sequence split across chunks whole', () => {
    const t = new OutputText();
    const text = [whole.subarray(0, cut1), whole.subarray(cut1, cut2), whole.subarray(cut2)].map((c) => t.push(c)).join('');
    expect(text).toBe('h\u00e9llo red done');
  });

  it('a replay with no wait listening: the live stream continues from where the replayed chunks end', () => {
    const t = new OutputText();
    t.skip();
    expect(t.replay([whole.subarray(0, cut1), whole.subarray(cut1, cut2)]).join('')).toBe('h\u00e9llo ');
    expect(t.push(whole.subarray(cut2))).toBe('red done');
  });

  it('a replay while another wait decodes the live stream leaves that stream as it was', () => {
    const t = new OutputText();
    expect(t.push(whole.subarray(0, cut1))).toBe('h');
    // Another wait begins and reads chunks of its own (here: other bytes) first.
    expect(t.replay([bytes('x\u00e9')]).join('')).toBe('x\u00e9');
    expect(t.push(whole.subarray(cut1))).toBe('\u00e9llo red done');
  });

  it('after a chunk went by undecoded, the next starts afresh (stale bytes are not joined to it)', () => {
    const t = new OutputText();
    t.push(whole.subarray(0, cut1));
    t.skip();
    expect(t.push(bytes('ok'))).toBe('ok');
  });

  it('chunks decoded whole between characters read as one streaming decoder reads them (BOMs, split and broken UTF-8, sequences)', () => {
    const piece = fc.oneof(
      fc.constantFrom('\ufeff', 'é', '日本', '🙂', '\x1b[31m', '\x1b]0;t\x07', '\r\n', 'END-1', 'plain text '),
      fc.stringMatching(/^[\x20-\x7e]{0,20}$/),
    );
    /** Stray bytes no encoder writes: a lone continuation, a lead byte cut short, an overlong form. */
    const broken = fc.constantFrom([0x80], [0xe6, 0x97], [0xc0, 0xaf], [0xff], [0xf0, 0x9f, 0x99]);
    const stream = fc.array(fc.oneof({ weight: 5, arbitrary: piece.map((p) => [...bytes(p)]) }, { weight: 1, arbitrary: broken }), { maxLength: 30 });
    fc.assert(
      fc.property(stream, fc.array(fc.nat(), { maxLength: 12 }), (parts, cuts) => {
        const all = Uint8Array.from(parts.flat());
        const at = [...new Set(cuts.map((c) => c % (all.length + 1)))].sort((a, b) => a - b);
        const chunks = [0, ...at].map((from, i) => all.subarray(from, at[i] ?? all.length));
        const decoder = new TextDecoder('utf-8');
        const stripper = new AnsiStripper();
        const expected = chunks.map((c) => stripper.push(decoder.decode(c, { stream: true }))).join('');
        const t = new OutputText();
        expect(chunks.map((c) => t.push(c)).join('')).toBe(expected);
      }),
      { numRuns: 1000 },
    );
  });

  it('a BOM at the stream start is dropped, as the streaming decoder drops it; later ones are kept', () => {
    const t = new OutputText();
    expect(t.push(bytes('\ufeffa'))).toBe('a');
    expect(t.push(bytes('\ufeffb'))).toBe('\ufeffb');
    t.skip();
    expect(t.push(bytes('\ufeffc'))).toBe('c');
  });
});
