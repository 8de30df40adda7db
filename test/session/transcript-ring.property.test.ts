/**
 * The ring keeps entries as numbers in parallel arrays and output bytes where they are (a place in
 * their buffer: no object per entry): it must behave exactly as the plain ring of entry objects it
 * replaced. The model below is that ring, kept as the reference; random runs of appends (every
 * kind, bytes carved from shared buffers as the decoder does, arrays of their own, strings, tags),
 * acks and reads, under bounds small enough to evict all the time, must give the same entries,
 * the same overflow warnings and the same counts.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TRANSCRIPT_KINDS, Transcript, type EvidenceLoss, type TranscriptEntry, type TranscriptKind } from '../../lib/session/transcript.js';

/** The ring as it was before the slabs (2026-12-03), reduced to its behaviour. */
class ModelRing {
  readonly entries: TranscriptEntry[] = [];
  head = 0;
  bytes = 0;
  nextSeq: number;
  acked: number | undefined;
  evicted = 0;
  lostUnacked = 0;
  raising = false;
  constructor(
    readonly maxBytes: number,
    firstSeq: number,
    readonly now: () => number,
    readonly beforeOverflow: (loss: EvidenceLoss) => void,
  ) {
    this.nextSeq = firstSeq;
  }
  static size(e: TranscriptEntry): number {
    const d = e.data;
    return 64 + (d === undefined ? 0 : typeof d === 'string' ? d.length * 2 : d.byteLength);
  }
  ack(seq: number): void {
    if (!Number.isInteger(seq) || seq < 0) return;
    this.acked = Math.max(this.acked ?? 0, Math.min(seq, this.nextSeq - 1));
  }
  append(kind: TranscriptKind, data?: Uint8Array | string, tags?: TranscriptEntry['tags']): number {
    const seq = this.nextSeq++;
    const entry: TranscriptEntry = { seq, time: this.now(), kind, ...(data === undefined ? {} : { data }), ...(tags ? { tags } : {}) };
    this.entries.push(entry);
    this.bytes += ModelRing.size(entry);
    if (!this.raising && this.acked !== undefined) {
      let over = this.bytes - this.maxBytes;
      let n = 0;
      for (let i = this.head; over > 0 && i < this.entries.length - 1; i++, n++) over -= ModelRing.size(this.entries[i]!);
      let entries = 0;
      let bytes = 0;
      let fromSeq = 0;
      let toSeq = 0;
      for (let i = this.head; i < this.head + n; i++) {
        const e = this.entries[i]!;
        if (e.seq <= this.acked) continue;
        if (entries === 0) fromSeq = e.seq;
        toSeq = e.seq;
        entries += 1;
        bytes += ModelRing.size(e);
      }
      if (entries > 0) {
        this.raising = true;
        try {
          this.beforeOverflow({ fromSeq, toSeq, entries, bytes });
        } finally {
          this.raising = false;
        }
      }
    }
    while (this.bytes > this.maxBytes && this.head < this.entries.length - 1) {
      const old = this.entries[this.head]!;
      this.bytes -= ModelRing.size(old);
      if (this.acked !== undefined && old.seq > this.acked) this.lostUnacked += 1;
      this.head += 1;
      this.evicted += 1;
    }
    return seq;
  }
  read(opts: { after?: number; limit?: number } = {}): TranscriptEntry[] {
    const after = opts.after ?? 0;
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    const out: TranscriptEntry[] = [];
    for (let i = this.head; i < this.entries.length && out.length < limit; i++) if (this.entries[i]!.seq > after) out.push(this.entries[i]!);
    return out;
  }
}

/** An entry as plain values, bytes as arrays: the two rings' entries compare equal exactly when these do. */
const plain = (e: TranscriptEntry): unknown => ({ ...e, data: e.data instanceof Uint8Array ? `bytes:${Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('base64')}` : e.data });

type Op =
  | { readonly op: 'append'; readonly kind: TranscriptKind; readonly data: Uint8Array | { readonly carve: number } | string | undefined; readonly tags: TranscriptEntry['tags'] | undefined }
  | { readonly op: 'ack'; readonly back: number }
  /** `after` counts back from the last seq (most reads look near the newest entries), or is taken as it is. */
  | { readonly op: 'read'; readonly after: number; readonly fromLast: boolean; readonly limit: number | undefined };

/**
 * Chunks as the parser's decoder makes them: consecutive views of one slab until it is full, then
 * of the next (a run of them shares a buffer), mixed with arrays of their own (a large line).
 */
function decoderLike(): (size: number) => Uint8Array {
  let slab = new Uint8Array(0);
  let used = 0;
  let fill = 0;
  return (size) => {
    if (used + size > slab.length) {
      slab = new Uint8Array(4096);
      used = 0;
    }
    const chunk = slab.subarray(used, used + size).fill(++fill & 0xff);
    used += size;
    return chunk;
  };
}
const bytesOf = fc.oneof(
  { weight: 8, arbitrary: fc.uint8Array({ minLength: 0, maxLength: 300 }) },
  { weight: 8, arbitrary: fc.integer({ min: 0, max: 1500 }).map((n) => ({ carve: n })) },
  { weight: 1, arbitrary: fc.integer({ min: 5000, max: 70_000 }).map((n) => new Uint8Array(n).fill(n & 0xff)) },
);
const opArb: fc.Arbitrary<Op> = fc.oneof(
  {
    weight: 10,
    arbitrary: fc.record({
      op: fc.constant('append' as const),
      kind: fc.constantFrom(...TRANSCRIPT_KINDS),
      data: fc.oneof({ weight: 6, arbitrary: bytesOf }, { weight: 2, arbitrary: fc.string({ maxLength: 40 }) }, { weight: 2, arbitrary: fc.constant(undefined) }),
      tags: fc.option(fc.dictionary(fc.constantFrom('keys', 'reason', 'code'), fc.oneof(fc.string({ maxLength: 8 }), fc.integer(), fc.boolean())), { nil: undefined }),
    }),
  },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('ack' as const), back: fc.integer({ min: -2, max: 30 }) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      op: fc.constant('read' as const),
      after: fc.oneof(fc.integer({ min: -5, max: 400 }), fc.double({ min: -5, max: 400, noNaN: true })),
      fromLast: fc.boolean(),
      limit: fc.option(fc.integer({ min: 0, max: 50 }), { nil: undefined }),
    }),
  },
);

describe('the slab ring behaves as the ring of entry objects', () => {
  it('gives the same entries, overflow warnings and counts on random runs', () => {
    fc.assert(
      fc.property(fc.integer({ min: 200, max: 1_200_000 }), fc.integer({ min: 1, max: 50 }), fc.boolean(), fc.array(opArb, { maxLength: 300 }), (maxBytes, firstSeq, ackInWarning, ops) => {
        let clock = 1000;
        const carve = decoderLike();
        const now = (): number => clock;
        const warnedA: EvidenceLoss[] = [];
        const warnedB: EvidenceLoss[] = [];
        let ring: Transcript;
        let model: ModelRing;
        // A consumer that, warned, reads what is about to go (and may ack it in time).
        ring = new Transcript(maxBytes, firstSeq, now, (loss) => {
          warnedA.push({ ...loss, readable: ring.read({ after: loss.fromSeq - 1 }).filter((e) => e.seq <= loss.toSeq).map(plain) } as EvidenceLoss);
          if (ackInWarning) ring.ack(loss.toSeq);
        });
        model = new ModelRing(maxBytes, firstSeq, now, (loss) => {
          warnedB.push({ ...loss, readable: model.read({ after: loss.fromSeq - 1 }).filter((e) => e.seq <= loss.toSeq).map(plain) } as EvidenceLoss);
          if (ackInWarning) model.ack(loss.toSeq);
        });
        for (const op of ops) {
          clock += 1;
          if (op.op === 'append') {
            const data = op.data !== undefined && typeof op.data === 'object' && 'carve' in op.data ? carve(op.data.carve) : op.data;
            expect(ring.append(op.kind, data, op.tags)).toBe(model.append(op.kind, data, op.tags));
          } else if (op.op === 'ack') {
            ring.ack(ring.lastSeq - op.back);
            model.ack(model.nextSeq - 1 - op.back);
          } else {
            const after = op.fromLast ? model.nextSeq - 1 - (op.after % 40) : op.after;
            const opts = op.limit === undefined ? { after } : { after, limit: op.limit };
            expect(ring.read(opts).map(plain)).toEqual(model.read(opts).map(plain));
          }
        }
        expect(ring.read().map(plain)).toEqual(model.read().map(plain));
        expect(warnedA).toEqual(warnedB);
        expect([ring.evicted, ring.lostUnacked, ring.lastSeq, ring.ackedSeq]).toEqual([model.evicted, model.lostUnacked, model.nextSeq - 1, model.acked]);
      }),
      { numRuns: 300 },
    );
  });

  it("answers a caller's odd `after` and `limit` as the scan did", () => {
    const ring = new Transcript(1 << 20, 7);
    const model = new ModelRing(1 << 20, 7, () => 0, () => undefined);
    for (let i = 0; i < 5; i++) {
      ring.append('output', Uint8Array.of(i));
      model.append('output', Uint8Array.of(i));
    }
    for (const after of [Number.NaN, Infinity, -Infinity, 1e308, -1e308, 8.5, -0, Number.MAX_SAFE_INTEGER + 2]) {
      for (const limit of [undefined, Number.NaN, -1, 0, 2, Infinity]) {
        const opts = limit === undefined ? { after } : { after, limit };
        expect(ring.read(opts).map((e) => e.seq), JSON.stringify({ after: String(after), limit: String(limit) })).toEqual(model.read(opts).map((e) => e.seq));
      }
    }
  });

  it('reads back what it holds across the buffers it lets go, and a reader keeps what it was given', () => {
    const ring = new Transcript(64 * 1024, 1);
    const carve = decoderLike();
    ring.append('output', carve(1000));
    const [first] = ring.read();
    const firstBytes = [...(first!.data as Uint8Array)];
    for (let i = 0; i < 3000; i++) {
      const chunk = carve(700 + (i % 5) * 100);
      const expected = chunk[0];
      const seq = ring.append('output', chunk);
      expect([...(ring.read({ after: seq - 1 })[0]!.data as Uint8Array)].every((b) => b === expected)).toBe(true);
      // Every live entry still reads as it was written (its buffer is held while any entry points into it).
      const live = ring.read();
      expect(live.every((e) => (e.data as Uint8Array).length >= 700 || e.seq === 1)).toBe(true);
      expect(live.every((e) => (e.data as Uint8Array).every((b) => b === (e.data as Uint8Array)[0]))).toBe(true);
    }
    expect(ring.read()[0]!.seq).toBeGreaterThan(1);
    expect([...(first!.data as Uint8Array)]).toEqual(firstBytes);
  });
});
