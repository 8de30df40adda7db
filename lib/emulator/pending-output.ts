/**
 * The mirror's unparsed output (the input filter's canonical bytes, in order, with the resizes
 * between them) and where it may fast-forward.
 *
 * Most bulk output scrolls off before anyone looks. A run of plain text — printable ASCII, CR and
 * LF, nothing else — followed by at least `rows + scrollback` fresh lines cannot leave anything of
 * what it printed before those lines in the grid or the history: the bytes before such a point
 * need not be parsed. This class finds those points as bytes arrive (one pass, O(n), a few numbers
 * per byte); whether the terminal may skip to one is decided by the mirror when it gets there,
 * from the terminal's live state (see `Mirror`, fastForwardSafe in headless.ts).
 *
 * Why it is exact, for a skip from `head` (inside a plain run, everything before it parsed) to a
 * cut `c` (a CR of the same run) with `A` line advances (LFs and autowraps, counted from column 0
 * at `c`) between `c` and the end of the run, and A ≥ (rows − 1) + (rows + scrollback):
 * - the bytes from `c` on meet the same column in both streams (the CR sets it to 0), the same pen
 *   (plain text sets none), the same modes and charsets (plain text changes none; the mirror checks
 *   the ones that change how plain text is laid out: autowrap on, insert off, no charset, the
 *   scroll region the whole screen, the main screen, no joined character pending);
 * - the cursor only goes down (CR and LF never go up; the region is the screen) and reaches the
 *   bottom row within rows − 1 advances in either stream; from there on every advance appends a
 *   fresh, blank line (erased with the same pen) in both streams, and the same bytes fill it;
 * - the buffer keeps the last rows + scrollback lines, so after that many fresh lines it holds
 *   nothing older: not the lines the skipped bytes wrote, not the lines of before the run. Markers
 *   on old lines are disposed in both streams (their lines are trimmed in both).
 * The pending wrap and the cursor's column before `c` do not matter (the CR resets the column);
 * origin mode does not either (CR, LF and printing do not read it).
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
import { lateCutInPieces } from './reverse-cut.js';

const CR = 0x0d;
const LF = 0x0a;
const ESC = 0x1b;

const enum Scan {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
}

/** A plain run long enough to skip into: skipping from inside [start, cut) to cut is allowed. */
interface SkippableRun {
  readonly start: number;
  readonly cut: number;
  readonly cols: number;
  readonly rows: number;
}

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
  readonly #scrollback: number;
  #buf = new Uint8Array(64 * 1024);
  /** Absolute stream offset of #buf[0]. */
  #base = 0;
  #head = 0;
  #tail = 0;
  /** Plain chunks after #buf's tail, referenced, not copied yet (the end of the lazy region). */
  #chunks: Uint8Array[] = [];
  #chunkBytes = 0;
  readonly #resizes: ResizePoint[] = [];
  // The scanner, always at #tail.
  #scan = Scan.Ground;
  #cols: number;
  #rows: number;
  /** Absolute offset up to which the scanner ran; the bytes after it are plain text (a lazy region, see above). */
  #scannedTo = 0;
  /** The lazy region holds a CR (so the column at its end is known). */
  #lazyCr = false;
  /** Absolute offset where the open plain run began; -1: not in one. */
  #runStart = -1;
  /** Column in the open run; -1 until its first CR. */
  #x = -1;
  /** Line advances in the open run since its first CR. */
  #advances = 0;
  /** The open run's CRs still worth a cut (absolute offsets) and the advances before each. */
  #crAt: number[] = [];
  #crAdvances: number[] = [];
  #crHead = 0;
  readonly #runs: SkippableRun[] = [];
  readonly stats: FastForwardStats = { skippedBytes: 0, skips: 0, copiedBytes: 0 };

  constructor(cols: number, rows: number, scrollback: number) {
    this.#cols = cols;
    this.#rows = rows;
    this.#scrollback = scrollback;
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
    if (this.#scannedTo < this.writtenOffset) return this.#x !== -1 || this.#lazyCr;
    return this.#runStart !== -1 && this.#x !== -1;
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
    this.#endRun();
  }

  /**
   * Bytes in stream order. `plain`: the input filter passed them whole as plain text (printable
   * ASCII, CR, LF; in the ground state): they are referenced, copied and scanned only when needed
   * (their memory must not be reused); other bytes are copied.
   */
  append(data: Uint8Array, plain = false): void {
    if (plain && this.#scan === Scan.Ground) {
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
    this.#endRun();
    if (!applied) this.#resizes.push({ at: this.writtenOffset, cols, rows });
    this.#cols = cols;
    this.#rows = rows;
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
    const run = this.#runAt(head);
    if (run === undefined || !safe(run.cols, run.rows)) return 0;
    const skipped = run.cut - head;
    this.#head += skipped;
    this.stats.skippedBytes += skipped;
    this.stats.skips++;
    this.#dropPassedRuns();
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
    const next = this.#nextRunStart(head);
    if (next > head) end = Math.min(end, next);
    return this.#buf.subarray(this.#head, end - this.#base);
  }

  /** Marks `n` bytes from the head as parsed. */
  consume(n: number): void {
    this.#head += n;
    this.#dropPassedRuns();
    if (this.#head === this.#tail) {
      this.#base += this.#head;
      this.#head = 0;
      this.#tail = 0;
    }
  }

  /** Forgets everything unparsed (superseded by a rebuild or a reset); the scanner starts afresh. */
  clear(cols: number, rows: number): void {
    this.#endRun();
    this.#base += this.#tail + this.#chunkBytes;
    this.#head = 0;
    this.#tail = 0;
    this.#chunks = [];
    this.#chunkBytes = 0;
    this.#resizes.length = 0;
    this.#runs.length = 0;
    this.#scan = Scan.Ground;
    this.#scannedTo = this.#base;
    this.#lazyCr = false;
    this.#cols = cols;
    this.#rows = rows;
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
    const at = lateCutInPieces(pieces, this.writtenOffset - from, this.#needed());
    const cut = at < 0 ? -1 : from + at;
    // A cut in the buffer's part (or at the region's start) is the ordinary path's.
    if (cut <= from || cut < bufTail) return 0;
    const runStart = this.#runStart !== -1 ? this.#runStart : from;
    const head = this.parsedOffset;
    // head ≤ bufTail ≤ cut: the run [runStart, cut…) holds the head when it started at or before it
    // (closed runs all end before runStart, so none holds it).
    if (head < runStart || !safe(this.#cols, this.#rows)) return 0;
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
    this.#runs.length = 0;
    this.#runStart = runStart;
    this.#advances = 0;
    this.#crAt = [];
    this.#crAdvances = [];
    this.#crHead = 0;
    this.#scanFrom(0, this.#tail);
    // The scan finds the cut again, or a later one (the latest with enough advances after it).
    const to = Math.max(cut, this.#openCut());
    this.#head = to - cut;
    const skipped = to - head;
    this.stats.skippedBytes += skipped;
    this.stats.skips++;
    return skipped;
  }

  /** The run the offset is in with a cut ahead of it. */
  #runAt(offset: number): SkippableRun | undefined {
    for (const run of this.#runs) if (offset >= run.start && offset < run.cut) return run;
    const cut = this.#openCut();
    if (this.#runStart !== -1 && offset >= this.#runStart && cut > offset) return { start: this.#runStart, cut, cols: this.#cols, rows: this.#rows };
    return undefined;
  }

  #nextRunStart(offset: number): number {
    for (const run of this.#runs) if (run.start > offset) return run.start;
    if (this.#runStart > offset && this.#openCut() !== -1) return this.#runStart;
    return -1;
  }

  #dropPassedRuns(): void {
    const head = this.parsedOffset;
    while (this.#runs.length > 0 && (this.#runs[0] as SkippableRun).cut <= head) this.#runs.shift();
  }

  /** Fresh lines needed after a cut: rows − 1 to reach the bottom, then the whole buffer. */
  #needed(): number {
    return this.#rows - 1 + this.#rows + this.#scrollback;
  }

  /** The open run's latest cut with enough advances after it; -1 when none. */
  #openCut(): number {
    if (this.#crHead >= this.#crAt.length) return -1;
    return this.#advances - (this.#crAdvances[this.#crHead] as number) >= this.#needed() ? (this.#crAt[this.#crHead] as number) : -1;
  }

  /** `n` line advances; moves to the latest CR that still has enough after it (earlier ones are never better). */
  #advance(n: number): void {
    this.#advances += n;
    const needed = this.#needed();
    const at = this.#crAdvances;
    while (this.#crHead + 1 < at.length && this.#advances - (at[this.#crHead + 1] as number) >= needed) this.#crHead++;
    if (this.#crHead > 4096 && this.#crHead * 2 > at.length) {
      this.#crAt = this.#crAt.slice(this.#crHead);
      this.#crAdvances = at.slice(this.#crHead);
      this.#crHead = 0;
    }
  }

  #endRun(): void {
    if (this.#runStart === -1) return;
    const cut = this.#openCut();
    if (cut !== -1) this.#runs.push({ start: this.#runStart, cut, cols: this.#cols, rows: this.#rows });
    this.#runStart = -1;
    this.#x = -1;
    this.#advances = 0;
    this.#crAt = [];
    this.#crAdvances = [];
    this.#crHead = 0;
  }

  /** Scans the lazy region up to `end` (an index in #buf), from its latest sure cut when there is one. */
  #catchUp(end: number): void {
    const from = this.#scannedTo - this.#base;
    if (from >= end) return;
    const cut = this.#lateCut(from, end);
    if (cut > from) {
      // The run goes on through the region (plain text); what it held before the cut can no longer
      // give the latest cut: forgotten, as #advance forgets CRs that a later one replaces.
      if (this.#runStart === -1) this.#runStart = this.#base + from;
      this.#advances = 0;
      this.#crAt = [];
      this.#crAdvances = [];
      this.#crHead = 0;
    }
    this.#scanFrom(cut > from ? cut : from, end);
  }

  /** In the plain bytes [from, end) of #buf: the last CR with `needed` line feeds after it; -1 when none. */
  #lateCut(from: number, end: number): number {
    const buf = this.#buf;
    let lf = end;
    for (let k = this.#needed(); k > 0; k--) {
      // (a negative fromIndex would search from the end of the buffer)
      if (lf - 1 < from) return -1;
      lf = buf.lastIndexOf(LF, lf - 1);
      if (lf < from) return -1;
    }
    if (lf - 1 < from) return -1;
    const cr = buf.lastIndexOf(CR, lf - 1);
    return cr >= from ? cr : -1;
  }

  /**
   * The filter's output is canonical: ESC starts a whole sequence (`ESC [` params final, or ESC
   * intermediates final); UTF-8 characters come whole. Anything but printable ASCII, CR and LF in
   * the ground state ends a plain run.
   */
  #scanFrom(from: number, tail: number): void {
    const buf = this.#buf;
    const cols = this.#cols;
    const base = this.#base;
    let scan = this.#scan;
    for (let i = from; i < tail; i++) {
      const b = buf[i] as number;
      if (scan === Scan.Ground) {
        if (b >= 0x20 && b < 0x7f) {
          // Printable characters up to the next non-printable: the column and the autowraps.
          let j = i + 1;
          while (j < tail && (buf[j] as number) >= 0x20 && (buf[j] as number) < 0x7f) j++;
          if (this.#runStart === -1) this.#runStart = base + i;
          const x = this.#x;
          if (x !== -1) {
            const end = x + (j - i);
            if (end <= cols) this.#x = end;
            else {
              // Each time the column is at the width before a character, the line wraps.
              this.#advance(Math.ceil((end - cols) / cols));
              this.#x = ((end - cols - 1) % cols) + 1;
            }
          }
          i = j - 1;
        } else if (b === CR) {
          if (this.#runStart === -1) this.#runStart = base + i;
          this.#x = 0;
          // A CR with no advance since the last one is the same cut, later: it replaces it (a
          // progress bar redrawn with CR alone for hours keeps one entry, not one per redraw).
          const last = this.#crAdvances.length - 1;
          if (last >= this.#crHead && this.#crAdvances[last] === this.#advances) this.#crAt[last] = base + i;
          else {
            this.#crAt.push(base + i);
            this.#crAdvances.push(this.#advances);
          }
        } else if (b === LF) {
          if (this.#runStart === -1) this.#runStart = base + i;
          if (this.#x !== -1) this.#advance(1);
        } else {
          this.#endRun();
          if (b === ESC) scan = Scan.Escape;
        }
      } else if (scan === Scan.Escape) scan = b === 0x5b ? Scan.Csi : b >= 0x20 && b < 0x30 ? Scan.EscapeIntermediate : Scan.Ground;
      else if (scan === Scan.EscapeIntermediate) {
        if (b >= 0x30) scan = Scan.Ground;
      } else if (b >= 0x40) scan = Scan.Ground;
    }
    this.#scan = scan;
    this.#scannedTo = base + tail;
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
