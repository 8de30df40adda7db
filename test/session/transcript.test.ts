import { describe, expect, it } from 'vitest';
import { Transcript } from '../../lib/session/transcript.js';
import { spawnSession } from './spawn-session.js';

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
    const t = new Transcript(4096, 1, Date.now, (loss) => {
      for (let seq = loss.fromSeq; seq <= loss.toSeq; seq++) lost.push(seq);
    });
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

  it('raises an overflow BEFORE evicting unacknowledged evidence, naming it, while it is still readable', () => {
    const raised: { fromSeq: number; toSeq: number; entries: number; readable: number[] }[] = [];
    let t: Transcript;
    t = new Transcript(4096, 1, Date.now, (loss) => {
      raised.push({ ...loss, readable: t.read({ after: loss.fromSeq - 1 }).filter((e) => e.seq <= loss.toSeq).map((e) => e.seq) });
    });
    for (let i = 0; i < 30; i++) t.append('output', new Uint8Array(100));
    t.ack(5); // a consumer took 1…5 and fell behind
    for (let i = 0; i < 10; i++) t.append('output', new Uint8Array(100));
    expect(raised.length).toBeGreaterThan(0);
    for (const r of raised) {
      expect(r.fromSeq).toBeGreaterThan(5);
      // Every entry named was still in the ring when the overflow was raised.
      expect(r.readable).toEqual(Array.from({ length: r.toSeq - r.fromSeq + 1 }, (_, i) => r.fromSeq + i));
      expect(r.entries).toBe(r.readable.length);
    }
    expect(t.lostUnacked).toBe(raised.reduce((n, r) => n + r.entries, 0));
  });

  it('loses nothing a consumer acknowledges from inside the overflow warning', () => {
    let t: Transcript;
    let warned = 0;
    t = new Transcript(4096, 1, Date.now, (loss) => {
      warned += 1;
      t.ack(loss.toSeq); // it saved the named entries in time
    });
    t.ack(0);
    for (let i = 0; i < 100; i++) t.append('output', new Uint8Array(100));
    expect(warned).toBeGreaterThan(0);
    expect(t.lostUnacked).toBe(0);
  });
});

describe('seqs reserved before they are handed out', () => {
  it('asks for a block before the first seq and before the first seq past each block, never in between', () => {
    const asked: number[] = [];
    const t = new Transcript(1 << 20, 10, Date.now, undefined, (from) => {
      asked.push(from);
      return from + 2;
    });
    const seqs = Array.from({ length: 7 }, () => t.append('output', 'x'));
    expect(seqs).toEqual([10, 11, 12, 13, 14, 15, 16]);
    expect(asked).toEqual([10, 13, 16]);
  });
});

describe('evidence overflow on a real drive', () => {
  it('raises overflow (event + incident naming the seqs) before the evidence goes, while the session can still read it', async () => {
    const { session, close } = await spawnSession(['/bin/sh', '-c', 'i=0; while [ $i -lt 400 ]; do echo "line $i of the evidence"; i=$((i+1)); done; sleep 30'], { ringBytes: 8192 });
    try {
      const raised: { fromSeq: number; toSeq: number; stillThere: boolean }[] = [];
      const incidents: Record<string, unknown>[] = [];
      session.on('overflow', (loss) => raised.push({ ...loss, stillThere: session.transcript({ after: loss.fromSeq - 1, limit: 1 })[0]?.seq === loss.fromSeq }));
      session.on('incident', (code, detail) => code === 'evidence_overflow' && incidents.push(detail));
      session.ack(0); // a consumer that reads nothing
      await session.wait({ forText: 'line 399', timeoutMs: 20_000 });
      expect(raised.length).toBeGreaterThan(0);
      expect(raised.every((r) => r.stillThere)).toBe(true);
      expect(incidents.length).toBeGreaterThan(0);
      expect(incidents[0]).toMatchObject({ fromSeq: raised[0]?.fromSeq, toSeq: raised[0]?.toSeq });
    } finally {
      await close();
    }
  });
});
