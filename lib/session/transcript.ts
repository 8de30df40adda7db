/**
 * The in-memory evidence of a drive: seq-numbered, ordered, bounded by `ringBytes`. Content lives
 * only here (never in the journal). Seq numbers never go back, also across re-attach.
 */
export const TRANSCRIPT_KINDS = ['output', 'input', 'keys', 'resize', 'resync', 'state', 'exit', 'gap', 'incident'] as const;
export type TranscriptKind = (typeof TRANSCRIPT_KINDS)[number];

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

/** An entry's kind is stored as its index in TRANSCRIPT_KINDS. */
const KIND_CODE = Object.fromEntries(TRANSCRIPT_KINDS.map((kind, code) => [kind, code])) as Readonly<Record<TranscriptKind, number>>;
/** `#lengths` of an entry whose data is not bytes kept in place (none, or a string). */
const NOT_IN_PLACE = -1;

/** What an entry holds besides numbers: its tags, and data that is not bytes kept in place. */
interface Extra {
  readonly data?: string;
  readonly tags?: TranscriptEntry['tags'];
}

function dataBytes(data: Uint8Array | string | undefined): number {
  return data === undefined ? 0 : typeof data === 'string' ? data.length * 2 : data.byteLength;
}

/**
 * An entry is a place in parallel arrays, not an object: its time, kind, and the buffer, offset and
 * length of its bytes, kept where the parser's decoder put them (it carves chunks out of 64 KiB
 * slabs it never reuses; the ring holds a slab once for all the consecutive chunks carved from it,
 * and lets it go once no live entry points into it). Tags and strings (input, keys, states: a few
 * per caller's action) are in a map by seq. With an object and a view per entry, a full 64 MiB ring
 * of 1-byte chunks held 178 MiB of heap; now 53 (docs/decisions.md). `read` builds the entries
 * asked for.
 */
export class Transcript {
  // Entry `i` of the parallel arrays has seq `#base + i`; the live ones are `#head` onwards.
  #base: number;
  #head = 0;
  readonly #times: number[] = [];
  readonly #kinds: number[] = [];
  /** Buffer id and byte offset of an entry's bytes; an entry with none has the id of the last buffer held when it came. */
  readonly #bufferIds: number[] = [];
  readonly #offsets: number[] = [];
  /** The entry's byte length, or NOT_IN_PLACE. */
  readonly #lengths: number[] = [];
  /** By seq: tags and strings (input, keys, states: a few per caller's action, not per chunk). */
  readonly #extras = new Map<number, Extra>();
  /** The buffers entries' bytes are in, in id order; `#buffers[0]` has id `#firstBufferId`. */
  readonly #buffers: ArrayBufferLike[] = [];
  #firstBufferId = 0;
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
    this.#base = firstSeq;
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

  /**
   * Appends an entry and returns its seq. Bytes are kept where they are, not copied: their memory
   * must not be written again (the decoder's chunks never are).
   */
  append(kind: TranscriptKind, data?: Uint8Array | string, tags?: TranscriptEntry['tags']): number {
    // Reserved before it is handed out: a host that takes over after a crash numbers above it.
    if (this.nextSeq > this.reservedTo) this.reservedTo = this.reserveSeqs(this.nextSeq);
    const seq = this.nextSeq++;
    this.#times.push(this.now());
    this.#kinds.push(KIND_CODE[kind]);
    if (data instanceof Uint8Array) {
      const buffer = data.buffer;
      if (this.#buffers[this.#buffers.length - 1] !== buffer) this.#buffers.push(buffer);
      this.#offsets.push(data.byteOffset);
      this.#lengths.push(data.byteLength);
    } else {
      this.#offsets.push(0);
      this.#lengths.push(NOT_IN_PLACE);
    }
    this.#bufferIds.push(this.#firstBufferId + this.#buffers.length - 1);
    if (typeof data === 'string' || tags !== undefined) this.#extras.set(seq, typeof data === 'string' ? { data, tags } : { tags });
    this.bytes += ENTRY_OVERHEAD_BYTES + dataBytes(data);
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
    this.evict();
    return seq;
  }

  /** The size of entry `i` as the bound counts it. */
  #sizeAt(i: number): number {
    const length = this.#lengths[i] as number;
    if (length !== NOT_IN_PLACE) return ENTRY_OVERHEAD_BYTES + length;
    return ENTRY_OVERHEAD_BYTES + dataBytes(this.#extras.get(this.#base + i)?.data);
  }

  /** Drops the oldest entries until the ring is under its bound (the newest always stays). */
  private evict(): void {
    const count = this.#kinds.length;
    while (this.bytes > this.maxBytes && this.#head < count - 1) {
      const seq = this.#base + this.#head;
      this.bytes -= this.#sizeAt(this.#head);
      this.#extras.delete(seq);
      if (this.acked !== undefined && seq > this.acked) this.lostUnacked += 1;
      this.#head += 1;
      this.evicted += 1;
    }
    // Buffers no live entry points into are let go (a reader's views keep theirs).
    const oldest = this.#bufferIds[this.#head] as number;
    while (this.#firstBufferId < oldest) {
      this.#buffers.shift();
      this.#firstBufferId += 1;
    }
    // Compact the arrays now and then instead of shifting on every eviction.
    if (this.#head > 1024 && this.#head * 2 > count) {
      for (const list of [this.#times, this.#kinds, this.#bufferIds, this.#offsets, this.#lengths]) list.splice(0, this.#head);
      this.#base += this.#head;
      this.#head = 0;
    }
  }

  /** How many of the oldest entries must go to bring the ring under its bound (the newest always stays). */
  private doomedCount(): number {
    let over = this.bytes - this.maxBytes;
    let n = 0;
    const last = this.#kinds.length - 1;
    for (let i = this.#head; over > 0 && i < last; i++, n++) over -= this.#sizeAt(i);
    return n;
  }

  /** The unacknowledged part of the `count` oldest entries, once a consumer acknowledges. */
  private unackedAmong(count: number): EvidenceLoss | undefined {
    if (this.acked === undefined) return undefined;
    let entries = 0;
    let bytes = 0;
    let fromSeq = 0;
    let toSeq = 0;
    for (let i = this.#head; i < this.#head + count; i++) {
      const seq = this.#base + i;
      if (seq <= this.acked) continue;
      if (entries === 0) fromSeq = seq;
      toSeq = seq;
      entries += 1;
      bytes += this.#sizeAt(i);
    }
    return entries > 0 ? { fromSeq, toSeq, entries, bytes } : undefined;
  }

  /** Entries with seq > `after`, oldest first, at most `limit`. Bytes are views of the memory appended: do not write to them. */
  read(opts: { after?: number; limit?: number } = {}): TranscriptEntry[] {
    const after = opts.after ?? 0;
    const limit = opts.limit ?? Number.POSITIVE_INFINITY;
    const out: TranscriptEntry[] = [];
    // Seqs are consecutive: the first entry after `after` is found by subtraction, not a scan.
    const from = Math.max(this.#head, Math.floor(after) + 1 - this.#base);
    for (let i = from; i < this.#kinds.length && out.length < limit; i++) out.push(this.#entryAt(i));
    return out;
  }

  #entryAt(i: number): TranscriptEntry {
    const seq = this.#base + i;
    const time = this.#times[i] as number;
    const kind = TRANSCRIPT_KINDS[this.#kinds[i] as number] as TranscriptKind;
    const length = this.#lengths[i] as number;
    const extra = this.#extras.get(seq);
    const data = length === NOT_IN_PLACE ? extra?.data : new Uint8Array(this.#buffers[(this.#bufferIds[i] as number) - this.#firstBufferId] as ArrayBufferLike, this.#offsets[i], length);
    const tags = extra?.tags;
    if (data === undefined) return tags ? { seq, time, kind, tags } : { seq, time, kind };
    return tags ? { seq, time, kind, data, tags } : { seq, time, kind, data };
  }
}
