/**
 * The fast-forward's cut searched from the end of plain text held in pieces (PendingOutput's lazy
 * region: the tail of its buffer, then chunks kept by reference): the last CR before the
 * `needed`-th line feed from the end. The same answer as `lastIndexOf` on the bytes joined, found
 * without joining them, so bytes a skip drops are never copied.
 */

const CR = 0x0d;
const LF = 0x0a;

/** Walks the pieces backwards, one byte value at a time, each search starting before the last hit. */
class BackwardCursor {
  #k: number;
  /** Offset, in the joined bytes, of piece #k's first byte. */
  #start: number;
  /** Search before this index of piece #k. */
  #pos: number;

  constructor(private readonly pieces: readonly Uint8Array[], total: number) {
    this.#k = pieces.length - 1;
    this.#pos = pieces[this.#k]?.length ?? 0;
    this.#start = total - this.#pos;
  }

  /** The previous occurrence of `byte` (an offset in the joined bytes), or -1; the cursor stops on it. */
  previous(byte: number): number {
    while (this.#k >= 0) {
      const piece = this.pieces[this.#k] as Uint8Array;
      // (a negative fromIndex would search from the end of the piece)
      const at = this.#pos > 0 ? piece.lastIndexOf(byte, this.#pos - 1) : -1;
      if (at >= 0) {
        this.#pos = at;
        return this.#start + at;
      }
      this.#k--;
      const prev = this.pieces[this.#k];
      if (prev === undefined) break;
      this.#pos = prev.length;
      this.#start -= prev.length;
    }
    return -1;
  }
}

/**
 * In the joined pieces (`total` bytes): the last CR with at least `needed` line feeds after it
 * (needed ≥ 1), as an offset in the joined bytes; -1 when there is none.
 */
export function lateCutInPieces(pieces: readonly Uint8Array[], total: number, needed: number): number {
  const cursor = new BackwardCursor(pieces, total);
  for (let k = needed; k > 0; k--) if (cursor.previous(LF) < 0) return -1;
  return cursor.previous(CR);
}
