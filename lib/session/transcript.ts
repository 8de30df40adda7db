/**
 * The in-memory evidence of a drive: seq-numbered, ordered, bounded by `ringBytes`. Content lives
 * only here (never in the journal). Seq numbers never go back, also across re-attach.
 */
export type TranscriptKind = 'output' | 'input' | 'keys' | 'resize' | 'resync' | 'state' | 'exit' | 'gap' | 'incident';

export interface TranscriptEntry {
  readonly seq: number;
  /** Wall-clock milliseconds since the epoch. */
  readonly time: number;
  readonly kind: TranscriptKind;
  /** Pane bytes for `output`; the text sent for `input`. */
  readonly data?: Uint8Array | string;
  /** Machine tags: key names, sizes, reasons, exit status. */
  readonly tags?: Readonly<Record<string, string | number | boolean | null>>;
}

/**
 * Evidence a consumer has not acknowledged that the ring is about to evict, raised BEFORE it is
 * (seed 001: bounded buffers fail loudly before unacknowledged evidence can be evicted): the
 * entries `fromSeq`…`toSeq` are still readable, and acknowledged ones are not lost.
 */
export interface EvidenceLoss {
  readonly fromSeq: number;
  readonly toSeq: number;
  /** Entries in the range not yet acknowledged. */
  readonly entries: number;
  /** Their size as the ring counts it. */
  readonly bytes: number;
}

/** A rough per-entry overhead so that many tiny entries still count against the bound. */
const ENTRY_OVERHEAD_BYTES = 64;

function sizeOf(entry: TranscriptEntry): number {
  const data = entry.data;
  const dataBytes = data === undefined ? 0 : typeof data === 'string' ? data.length * 2 : data.byteLength;
  return ENTRY_OVERHEAD_BYTES + dataBytes;
}

export class Transcript {
  private readonly entries: TranscriptEntry[] = [];
  private head = 0;
  private bytes = 0;
  private nextSeq: number;
  /** Highest seq a consumer acknowledged; undefined while nobody consumes (plain ring). */
  private acked: number | undefined;
  /** Entries evicted to stay under the bound. */
  evicted = 0;
  /** Entries evicted before a consumer acknowledged them: evidence lost, reported first, never silent. */
  lostUnacked = 0;
  private raising = false;

  constructor(
    private readonly maxBytes: number,
    firstSeq = 1,
    private readonly now: () => number = Date.now,
    /** Called before entries a consumer has not acknowledged are evicted; it may still read (and ack) them. */
    private readonly beforeOverflow: (loss: EvidenceLoss) => void = () => undefined,
    /**
     * Called (synchronously) when a seq beyond the last reservation is about to be handed out:
     * reserves a block from it in durable storage and returns the block's last seq. Without it,
     * seqs are not reserved (a drive no journal records).
     */
    private readonly reserveSeqs: (from: number) => number = () => Number.POSITIVE_INFINITY,
  ) {
    this.nextSeq = firstSeq;
  }

  /** The last seq the durable store holds reserved for this transcript. */
  private reservedTo = 0;

  /** A consumer has everything up to `seq`; from now on evicting newer entries is an overflow. */
  ack(seq: number): void {
    if (!Number.isInteger(seq) || seq < 0) return;
    this.acked = Math.max(this.acked ?? 0, Math.min(seq, this.lastSeq));
  }

  get ackedSeq(): number | undefined {
    return this.acked;
  }

  get lastSeq(): number {
    return this.nextSeq - 1;
  }

  append(kind: TranscriptKind, data?: Uint8Array | string, tags?: TranscriptEntry['tags']): TranscriptEntry {
    // Reserved before it is handed out: a host that takes over after a crash numbers above it.
    if (this.nextSeq > this.reservedTo) this.reservedTo = this.reserveSeqs(this.nextSeq);
    const seq = this.nextSeq++;
    const time = this.now();
    // Plain literals, one per shape (no spreads): this runs for every output chunk, and a spread of
    // entries of several shapes goes megamorphic (~10x slower than in a micro-benchmark).
    const entry: TranscriptEntry =
      data === undefined ? (tags ? { seq, time, kind, tags } : { seq, time, kind }) : tags ? { seq, time, kind, data, tags } : { seq, time, kind, data };
    this.entries.push(entry);
    this.bytes += sizeOf(entry);
    // Without a consumer nothing is unacknowledged: skip counting what the eviction will take.
    const loss = this.raising || this.acked === undefined ? undefined : this.unackedAmong(this.doomedCount());
    if (loss) {
      // Raised first; an append from inside the handler evicts without raising again.
      this.raising = true;
      try {
        this.beforeOverflow(loss);
      } finally {
        this.raising = false;
      }
    }
    while (this.bytes > this.maxBytes && this.head < this.entries.length - 1) {
      const old = this.entries[this.head];
      if (old) {
        this.bytes -= sizeOf(old);
        if (this.acked !== undefined && old.seq > this.acked) this.lostUnacked += 1;
      }
      this.head += 1;
      this.evicted += 1;
    }
    // Compact the array now and then instead of shifting on every eviction.
    if (this.head > 1024 && this.head * 2 > this.entries.length) {
      this.entries.splice(0, this.head);
      this.head = 0;
    }
    return entry;
  }

  /** How many of the oldest entries must go to bring the ring under its bound (the newest always stays). */
  private doomedCount(): number {
    let over = this.bytes - this.maxBytes;
    let n = 0;
    for (let i = this.head; over > 0 && i < this.entries.length - 1; i++, n++) over -= sizeOf(this.entries[i] as TranscriptEntry);
    return n;
  }

  /** The unacknowledged part of the `count` oldest entries, once a consumer acknowledges. */
  private unackedAmong(count: number): EvidenceLoss | undefined {
    if (this.acked === undefined) return undefined;
    let entries = 0;
    let bytes = 0;
    let fromSeq = 0;
    let toSeq = 0;
    for (let i = this.head; i < this.head + count; i++) {
      const e = this.entries[i] as TranscriptEntry;
      if (e.seq <= this.acked) continue;
      if (entries === 0) fromSeq = e.seq;
      toSeq = e.seq;
      entries += 1;
      bytes += sizeOf(e);
    }
    return entries > 0 ? { fromSeq, toSeq, entries, bytes } : undefined;
  }

  /** Entries with seq > `after`, oldest first, at most `limit`. */
  read(opts: { after?: number; limit?: number } = {}): TranscriptEntry[] {
    const after = opts.after ?? 0;
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    const out: TranscriptEntry[] = [];
    for (let i = this.head; i < this.entries.length && out.length < limit; i++) {
      const e = this.entries[i];
      if (e && e.seq > after) out.push(e);
    }
    return out;
  }
}
