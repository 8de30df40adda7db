/**
 * The end of a run of plain text (printable ASCII, CR, LF): the bytes tmux's ground state prints
 * or moves the cursor with and the input filter passes unchanged. Every byte of bulk output goes
 * through this test (it was ~1 s of a 20-drive × 5 MB profile as a byte loop, 2026-12-02), so
 * aligned words of four bytes are tested at once: all four printable is one check (SWAR, "has a
 * byte less than n" / "more than n"); a word holding a CR, an LF or anything else is tested byte
 * by byte.
 */

/** An Int32Array over the whole of the last buffer seen (chunks of one decoder slab share it). */
let wordsOf: ArrayBufferLike | undefined;
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);

function wordsOver(buffer: ArrayBufferLike): Int32Array {
  if (wordsOf !== buffer) {
    words = new Int32Array(buffer, 0, buffer.byteLength >>> 2);
    wordsOf = buffer;
  }
  return words;
}

/** Shorter runs are not worth the word view. */
const WORDS_FROM = 32;

/** The end of the run of plain text in `data` from `from`. */
export function plainEnd(data: Uint8Array, from: number): number {
  const n = data.length;
  let i = from;
  if (n - i >= WORDS_FROM) {
    const w32 = wordsOver(data.buffer);
    const offset = data.byteOffset;
    // Word-aligned from here to `last` (a word read never passes the chunk's end).
    const last = n - 4;
    while (i <= last) {
      if (((offset + i) & 3) === 0) {
        const w = w32[(offset + i) >>> 2] as number;
        // No byte below 0x20 and none above 0x7e: four printable characters.
        if (((w - 0x20202020) & ~w & 0x80808080) === 0 && (((w + 0x01010101) | w) & 0x80808080) === 0) {
          i += 4;
          continue;
        }
      }
      const b = data[i] as number;
      if (b >= 0x20 ? b >= 0x7f : b !== 0x0d && b !== 0x0a) return i;
      i++;
    }
  }
  while (i < n) {
    const b = data[i] as number;
    if (b >= 0x20 ? b >= 0x7f : b !== 0x0d && b !== 0x0a) break;
    i++;
  }
  return i;
}
