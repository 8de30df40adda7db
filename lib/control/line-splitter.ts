/**
 * Splits a byte stream into lines on LF (0x0A) without decoding it. Designed for ~10 MB/s of
 * control-mode output: a line that lies inside one chunk is handed out as a view (no copy); only
 * the unterminated tail of a chunk is kept, as a list of pieces joined once when its LF arrives.
 */

const LF = 0x0a;
const CR = 0x0d;
/** How much of an overlong line is kept for the overflow report (enough to recognise the line). */
const OVERFLOW_HEAD_BYTES = 256;

export interface LineSplitterOptions {
  /** Lines longer than this are dropped (up to their LF) and reported through `onOverflow`. */
  readonly maxLineBytes?: number;
  readonly onOverflow?: (head: Uint8Array, droppedBytes: number) => void;
}

export class LineSplitter {
  readonly #onLine: (line: Uint8Array, strippedCr: boolean) => void;
  readonly #maxLineBytes: number;
  readonly #onOverflow: ((head: Uint8Array, droppedBytes: number) => void) | undefined;
  #pieces: Uint8Array[] = [];
  #pendingBytes = 0;
  /** After an overflow, bytes are dropped until the next LF; counts them for the report. */
  #discarded = -1;
  #head: Uint8Array = new Uint8Array(0);

  /**
   * `onLine` gets the line without its LF (and without a CR right before it, `strippedCr` then
   * true). The array may be a view into the pushed chunk: copy it if you keep it after the callback
   * returns.
   */
  constructor(onLine: (line: Uint8Array, strippedCr: boolean) => void, options: LineSplitterOptions = {}) {
    this.#onLine = onLine;
    this.#maxLineBytes = options.maxLineBytes ?? Number.POSITIVE_INFINITY;
    this.#onOverflow = options.onOverflow;
  }

  push(chunk: Uint8Array): void {
    let start = 0;
    for (let lf = chunk.indexOf(LF); lf >= 0; lf = chunk.indexOf(LF, start)) {
      const part = chunk.subarray(start, lf);
      start = lf + 1;
      if (this.#discarded >= 0) {
        this.#finishOverflow(part.length);
      } else if (this.#pendingBytes + part.length > this.#maxLineBytes) {
        this.#startOverflow(part);
        this.#finishOverflow(0);
      } else if (this.#pieces.length === 0) {
        this.#emit(part);
      } else {
        this.#pieces.push(part);
        this.#emit(this.#takePending());
      }
    }
    if (start < chunk.length) this.#keep(chunk.subarray(start));
  }

  /** Flushes an unterminated last line (stdout ended without a final LF). */
  end(): void {
    if (this.#discarded >= 0) this.#finishOverflow(0);
    else if (this.#pieces.length > 0) this.#emit(this.#takePending());
  }

  #keep(tail: Uint8Array): void {
    if (this.#discarded >= 0) {
      this.#discarded += tail.length;
    } else if (this.#pendingBytes + tail.length > this.#maxLineBytes) {
      this.#startOverflow(tail);
    } else {
      // Copied because the caller may reuse its chunk buffer once push() returns.
      this.#pieces.push(tail.slice());
      this.#pendingBytes += tail.length;
    }
  }

  #startOverflow(part: Uint8Array): void {
    const pending = this.#takePending();
    const head = pending.length > 0 ? pending : part;
    this.#head = head.slice(0, OVERFLOW_HEAD_BYTES);
    this.#discarded = pending.length + part.length;
  }

  #finishOverflow(more: number): void {
    const dropped = this.#discarded + more;
    const head = this.#head;
    this.#discarded = -1;
    this.#head = new Uint8Array(0);
    this.#onOverflow?.(head, dropped);
  }

  #takePending(): Uint8Array {
    const pieces = this.#pieces;
    this.#pieces = [];
    this.#pendingBytes = 0;
    if (pieces.length === 1) return pieces[0] as Uint8Array;
    let total = 0;
    for (const p of pieces) total += p.length;
    const line = new Uint8Array(total);
    let at = 0;
    for (const p of pieces) {
      line.set(p, at);
      at += p.length;
    }
    return line;
  }

  #emit(line: Uint8Array): void {
    // CRLF tolerated: tmux writes bare LF, but a pty or a proxy in between may add CRs.
    const cr = line.length > 0 && line[line.length - 1] === CR;
    this.#onLine(cr ? line.subarray(0, line.length - 1) : line, cr);
  }
}
