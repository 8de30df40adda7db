/**
 * The mirror's unparsed output (the input filter's canonical bytes, in order, with the resizes
 * between them) and where it may fast-forward.
 *
 * Most bulk output scrolls off before anyone looks: a plain run followed by enough fresh lines
 * leaves nothing of what it printed before them in the grid or the history, so the bytes before
 * such a cut need not be parsed. plain-runs.ts finds those cuts (and says why a skip to one is
 * exact); this class holds the bytes, feeds the scanner, and skips when the mirror says it may.
 *
 * Chunks the input filter passed whole as plain text (`append(data, true)`) are not scanned as they
 * come: most of a flood's bytes are skipped, and the scan was a pass over each of them (~1.1 s of a
 * 20-drive profile, 2026-12-02). When the scanner's state is needed (a parse, a resize, bytes that
 * are not plain) it catches up from where it stopped: from the end, the `needed`-th line feed back
 * and the last CR before it is a cut (every line feed after a CR is an advance, so it has enough),
 * and no CR before it can be a later valid cut than it; the scan starts there, which gives the same
 * cut as a scan of every byte, and the bytes before it are never looked at again.
 *
 * Nor are such chunks copied as they come: they are kept by reference (the mirror's write
 * contract: a queued chunk's memory is not reused) and copied into the buffer only when its bytes
 * are needed. A fast-forward whose cut falls among them (reverse-cut.ts finds it without joining
 * them) copies only the bytes from the cut on: the copy and the compaction were most of the
 * queue's time in a live profile (8 drives streaming, 2026-12-02), and ~95% of a flood's bytes are
 * skipped.
 */
import { PlainRuns } from './plain-runs.js';
import { lateCutInPieces } from './reverse-cut.js';

const CR = 0x0d;
const LF = 0x0a;

interface ResizePoint {
  readonly at: number;
  readonly cols: number;
  readonly rows: number;
}

export interface FastForwardStats {
  /** Bytes that were never parsed (a fast-forward dropped them). */
  skippedBytes: number;
  /** How many fast-forwards happened. */
  skips: number;
  /** Bytes copied into the queue's buffer (a plain chunk a skip drops is never copied). */
  copiedBytes: number;
}

export class PendingOutput {
  #buf = new Uint8Array(64 * 1024);
  /** Absolute stream offset of #buf[0]. */
  #base = 0;
  #head = 0;
  #tail = 0;
  /** Plain chunks after #buf's tail, referenced, not copied yet (the end of the lazy region). */
  #chunks: Uint8Array[] = [];
  #chunkBytes = 0;
  readonly #resizes: ResizePoint[] = [];
  /** The scanner, always at #scannedTo. */
  readonly #plain: PlainRuns;
  /** Absolute offset up to which the scanner ran; the bytes after it are plain text (a lazy region, see above). */
  #scannedTo = 0;
  /** The lazy region holds a CR (so the column at its end is known). */
  #lazyCr = false;
  readonly stats: FastForwardStats = { skippedBytes: 0, skips: 0, copiedBytes: 0 };

  constructor(cols: number, rows: number, scrollback: number) {
    this.#plain = new PlainRuns(cols, rows, scrollback);
  }

  /** Unparsed bytes. */
  get length(): number {
    return this.#tail - this.#head + this.#chunkBytes;
  }

  /** Absolute offset of the first unparsed byte (everything before it is parsed or skipped). */
  get parsedOffset(): number {
    return this.#base + this.#head;
  }

  /** Absolute offset after the last byte appended. */
  get writtenOffset(): number {
    return this.#base + this.#tail + this.#chunkBytes;
  }

  /** Nothing to parse: no bytes, no resize. */
  get idle(): boolean {
    return this.#tail === this.#head && this.#chunkBytes === 0 && this.#resizes.length === 0;
  }

  /** The bytes so far end inside a plain run whose column is known: more of it may make it skippable. */
  get inPlainRun(): boolean {
    // A lazy region is plain text that continues the run (or begins one) up to the end.
    if (this.#scannedTo < this.writtenOffset) return this.#plain.columnKnown || this.#lazyCr;
    return this.#plain.runStart !== -1 && this.#plain.columnKnown;
  }

  /** Everything up to `offset` (an earlier writtenOffset) is parsed, the resizes written with it applied. */
  doneUpTo(offset: number): boolean {
    const next = this.#resizes[0];
    return this.parsedOffset >= offset && (next === undefined || next.at > offset);
  }

  /** Bytes went to the terminal by another way (the sync path): the open run ends. */
  interrupt(): void {
    this.#flush();
    this.#catchUp(this.#tail);
    this.#plain.endRun();
  }

  /**
   * Bytes in stream order. `plain`: the input filter passed them whole as plain text (printable
   * ASCII, CR, LF; in the ground state): they are referenced, copied and scanned only when needed
   * (their memory must not be reused); other bytes are copied.
   */
  append(data: Uint8Array, plain = false): void {
    if (plain && this.#plain.ground) {
      if (!this.#lazyCr && data.includes(CR)) this.#lazyCr = true;
      this.#chunks.push(data);
      this.#chunkBytes += data.length;
      return;
    }
    this.#flush();
    this.#reserve(data.length);
    this.stats.copiedBytes += data.length;
    this.#buf.set(data, this.#tail);
    const from = this.#tail;
    this.#tail += data.length;
    this.#catchUp(from);
    this.#scanFrom(from, this.#tail);
  }

  /** A resize after the bytes appended so far (`applied`: already done, nothing is queued): plain runs do not span it. */
  resize(cols: number, rows: number, applied: boolean): void {
    this.#flush();
    this.#catchUp(this.#tail);
    this.#plain.resize(cols, rows);
    if (!applied) this.#resizes.push({ at: this.writtenOffset, cols, rows });
  }

  /** The resize due before the next unparsed byte, taken from the queue; undefined when none. */
  takeResize(): { readonly cols: number; readonly rows: number } | undefined {
    const next = this.#resizes[0];
    if (next === undefined || next.at !== this.parsedOffset) return undefined;
    this.#resizes.shift();
    return next;
  }

  /**
   * Skips to the latest cut of the plain run the head is in, when there is one ahead and the
   * terminal says a plain run may be skipped now (`safe`, asked only then). Returns the bytes skipped.
   */
  fastForward(safe: (cols: number, rows: number) => boolean): number {
    if (this.#chunkBytes > 0) {
      const skipped = this.#skipIntoChunks(safe);
      if (skipped > 0) return skipped;
      this.#flush();
    }
    this.#catchUp(this.#tail);
    const head = this.parsedOffset;
    const run = this.#plain.runAt(head);
    if (run === undefined || !safe(run.cols, run.rows)) return 0;
    const skipped = run.cut - head;
    this.#head += skipped;
    this.stats.skippedBytes += skipped;
    this.stats.skips++;
    this.#plain.dropPassed(this.parsedOffset);
    return skipped;
  }

  /**
   * The next bytes to parse, at most `max`: they end before a resize and at the start of a
   * skippable run (so the next call can skip into it). A view: valid until the next append.
   */
  peek(max: number): Uint8Array {
    this.#flush();
    this.#catchUp(this.#tail);
    const head = this.parsedOffset;
    // max ≤ 0 (a caller's limit a skip already passed) is an empty view: a negative end would
    // count from the end of the buffer.
    let end = Math.max(head, Math.min(this.writtenOffset, head + max));
    const resize = this.#resizes[0];
    if (resize !== undefined && resize.at > head) end = Math.min(end, resize.at);
    const next = this.#plain.nextRunStart(head);
    if (next > head) end = Math.min(end, next);
    return this.#buf.subarray(this.#head, end - this.#base);
  }

  /** Marks `n` bytes from the head as parsed. */
  consume(n: number): void {
    this.#head += n;
    this.#plain.dropPassed(this.parsedOffset);
    if (this.#head === this.#tail) {
      this.#base += this.#head;
      this.#head = 0;
      this.#tail = 0;
    }
  }

  /** Forgets everything unparsed (superseded by a rebuild or a reset); the scanner starts afresh. */
  clear(cols: number, rows: number): void {
    this.#plain.reset(cols, rows);
    this.#base += this.#tail + this.#chunkBytes;
    this.#head = 0;
    this.#tail = 0;
    this.#chunks = [];
    this.#chunkBytes = 0;
    this.#resizes.length = 0;
    this.#scannedTo = this.#base;
    this.#lazyCr = false;
    if (this.#buf.length > 1024 * 1024) this.#buf = new Uint8Array(64 * 1024);
  }

  /** Copies the referenced chunks into the buffer (their bytes are needed now). */
  #flush(): void {
    if (this.#chunkBytes === 0) return;
    this.#reserve(this.#chunkBytes);
    this.stats.copiedBytes += this.#chunkBytes;
    for (const chunk of this.#chunks) {
      this.#buf.set(chunk, this.#tail);
      this.#tail += chunk.length;
    }
    this.#chunks = [];
    this.#chunkBytes = 0;
  }

  /**
   * fastForward when the lazy region's latest sure cut lies among the referenced chunks: what
   * #catchUp then the skip would do, but only the bytes from that cut on are copied. Returns 0
   * (nothing changed) when the head is not in the run or the terminal says no: the caller goes the
   * ordinary way.
   */
  #skipIntoChunks(safe: (cols: number, rows: number) => boolean): number {
    const from = this.#scannedTo;
    const bufTail = this.#base + this.#tail;
    const pieces = [this.#buf.subarray(from - this.#base, this.#tail), ...this.#chunks];
    const at = lateCutInPieces(pieces, this.writtenOffset - from, this.#plain.needed());
    const cut = at < 0 ? -1 : from + at;
    // A cut in the buffer's part (or at the region's start) is the ordinary path's.
    if (cut <= from || cut < bufTail) return 0;
    const runStart = this.#plain.runStart !== -1 ? this.#plain.runStart : from;
    const head = this.parsedOffset;
    // head ≤ bufTail ≤ cut: the run [runStart, cut…) holds the head when it started at or before it
    // (closed runs all end before runStart, so none holds it).
    if (head < runStart || !safe(this.#plain.cols, this.#plain.rows)) return 0;
    // Everything before the cut goes, unparsed and uncopied; the rest is copied and scanned as
    // #catchUp scans from a cut.
    const kept: Uint8Array[] = [];
    let start = bufTail;
    for (const chunk of this.#chunks) {
      const end = start + chunk.length;
      if (end > cut) kept.push(start >= cut ? chunk : chunk.subarray(cut - start));
      start = end;
    }
    this.#base = cut;
    this.#head = 0;
    this.#tail = 0;
    this.#chunks = kept;
    this.#chunkBytes = start - cut;
    this.#flush();
    this.#plain.restartRun(runStart, true);
    this.#scanFrom(0, this.#tail);
    // The scan finds the cut again, or a later one (the latest with enough advances after it).
    const to = Math.max(cut, this.#plain.openCut());
    this.#head = to - cut;
    const skipped = to - head;
    this.stats.skippedBytes += skipped;
    this.stats.skips++;
    return skipped;
  }

  /** Scans the lazy region up to `end` (an index in #buf), from its latest sure cut when there is one. */
  #catchUp(end: number): void {
    const from = this.#scannedTo - this.#base;
    if (from >= end) return;
    const cut = this.#lateCut(from, end);
    if (cut > from) {
      // The run goes on through the region (plain text); what it held before the cut can no longer
      // give the latest cut: forgotten, as PlainRuns forgets CRs a later one replaces.
      const runStart = this.#plain.runStart;
      this.#plain.restartRun(runStart === -1 ? this.#base + from : runStart);
    }
    this.#scanFrom(cut > from ? cut : from, end);
  }

  /** In the plain bytes [from, end) of #buf: the last CR with `needed` line feeds after it; -1 when none. */
  #lateCut(from: number, end: number): number {
    const buf = this.#buf;
    let lf = end;
    for (let k = this.#plain.needed(); k > 0; k--) {
      // (a negative fromIndex would search from the end of the buffer)
      if (lf - 1 < from) return -1;
      lf = buf.lastIndexOf(LF, lf - 1);
      if (lf < from) return -1;
    }
    if (lf - 1 < from) return -1;
    const cr = buf.lastIndexOf(CR, lf - 1);
    return cr >= from ? cr : -1;
  }

  /** Scans #buf[from, tail) (the scanner's state was at `from`). */
  #scanFrom(from: number, tail: number): void {
    this.#plain.scan(this.#buf, from, tail, this.#base);
    this.#scannedTo = this.#base + tail;
    this.#lazyCr = false;
  }

  #reserve(extra: number): void {
    if (this.#tail + extra <= this.#buf.length) return;
    // Drop what is parsed first; grow only if that is not enough.
    if (this.#head > 0) {
      this.#buf.copyWithin(0, this.#head, this.#tail);
      this.#base += this.#head;
      this.#tail -= this.#head;
      this.#head = 0;
    }
    if (this.#tail + extra <= this.#buf.length) return;
    const grown = new Uint8Array(Math.max(this.#buf.length * 2, this.#tail + extra));
    grown.set(this.#buf.subarray(0, this.#tail));
    this.#buf = grown;
  }
}
