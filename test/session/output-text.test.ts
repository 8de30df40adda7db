/**
 * Pane output as text for the text waits: UTF-8 split across chunks reads whole, also where the
 * output a wait reads first (a send's, replayed) meets the live stream after it.
 */
import { describe, expect, it } from 'vitest';
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
});
