import { describe, expect, it } from 'vitest';
import { Transcript } from '../../lib/session/transcript.js';

describe('the transcript ring', () => {
  it('numbers entries monotonically from the seq it continues, and stays under its bound', () => {
    const t = new Transcript(4096, 101);
    for (let i = 0; i < 200; i++) t.append('output', new Uint8Array(100));
    const entries = t.read();
    expect(entries[0]!.seq).toBeGreaterThan(101);
    expect(entries.at(-1)!.seq).toBe(300);
    expect(entries.every((e, i) => i === 0 || e.seq === entries[i - 1]!.seq + 1)).toBe(true);
    expect(entries.reduce((n, e) => n + 64 + (e.data as Uint8Array).byteLength, 0)).toBeLessThanOrEqual(4096);
    expect(t.read({ after: 290, limit: 3 }).map((e) => e.seq)).toEqual([291, 292, 293]);
  });

  it('evicts silently while nobody consumes, and loudly once a consumer acknowledges', () => {
    const lost: number[] = [];
    const t = new Transcript(4096, 1, Date.now, (e) => lost.push(e.seq));
    for (let i = 0; i < 100; i++) t.append('output', new Uint8Array(100));
    expect(lost).toEqual([]);
    t.ack(t.lastSeq);
    for (let i = 0; i < 10; i++) t.append('output', new Uint8Array(100));
    expect(lost).toEqual([]); // evicted entries were all acknowledged
    for (let i = 0; i < 40; i++) t.append('output', new Uint8Array(100));
    expect(lost.length).toBeGreaterThan(0);
    expect(lost[0]).toBeGreaterThan(100);
    expect(t.lostUnacked).toBe(lost.length);
  });
});
