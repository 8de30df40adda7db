/**
 * Decodes tmux's `%output` escaping: tmux writes each byte below 0x20 and each backslash as `\ooo`
 * (exactly three octal digits) and every other byte raw, so the decoding is unambiguous. A malformed
 * escape (which tmux never writes) is kept literally instead of failing: the parser never throws.
 *
 * This is on the output path of every drive (and of a bare control client): runs between escapes
 * are copied with one `set` each, an escape right after another costs no copy, and the parser's
 * decoder carves its results out of a shared slab instead of allocating a buffer per line.
 */

const BACKSLASH = 0x5c;
const DIGIT_0 = 0x30;

/**
 * Decodes `bytes[start, end)` into `out` from `outStart` (room for `end - start` bytes, not
 * overlapping `bytes`) and returns how many bytes it wrote.
 */
function decodeInto(bytes: Uint8Array, start: number, end: number, out: Uint8Array, outStart: number): number {
  let n = outStart;
  let from = start;
  let slash = bytes.indexOf(BACKSLASH, start);
  while (slash >= 0 && slash < end) {
    if (slash > from) {
      out.set(bytes.subarray(from, slash), n);
      n += slash - from;
    }
    if (slash + 3 < end) {
      // Digits as offsets from '0': anything outside 0–7 (or 0–3 for the first) is not an escape.
      const a = (bytes[slash + 1] as number) - DIGIT_0;
      const b = (bytes[slash + 2] as number) - DIGIT_0;
      const c = (bytes[slash + 3] as number) - DIGIT_0;
      if (a >= 0 && a <= 3 && b >= 0 && b <= 7 && c >= 0 && c <= 7) {
        out[n++] = (a << 6) | (b << 3) | c;
        from = slash + 4;
        slash = bytes.indexOf(BACKSLASH, from);
        continue;
      }
    }
    out[n++] = BACKSLASH;
    from = slash + 1;
    slash = bytes.indexOf(BACKSLASH, from);
  }
  if (end > from) {
    out.set(bytes.subarray(from, end), n);
    n += end - from;
  }
  return n - outStart;
}

/** Returns a new array (never a view of `bytes`) holding the decoded bytes of `bytes[start, end)`. */
export function decodeOctal(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  const out = new Uint8Array(Math.max(0, end - start));
  const n = decodeInto(bytes, start, end, out, 0);
  return n === out.length ? out : out.subarray(0, n);
}

/** Slab size: a few dozen typical `%output` lines (tmux sends up to a few KB per line). */
const SLAB_BYTES = 64 * 1024;
/** Larger results get their own buffer, so one slab never holds a single huge line's neighbours hostage. */
const MAX_CARVED_BYTES = SLAB_BYTES / 4;

/**
 * The parser's decoder. Each result is a view of a slab this decoder owns, never of the input and
 * never shared with another result, so a holder may keep it (the transcript does). A slab is
 * filled in output order, so a ring that keeps the newest output pins at most one slab more than
 * the bytes it holds; one result kept alone pins its slab (≤ 64 KiB).
 */
export class OctalDecoder {
  #slab = new Uint8Array(0);
  #used = 0;

  decode(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
    const size = Math.max(0, end - start);
    if (size > MAX_CARVED_BYTES) return decodeOctal(bytes, start, end);
    if (this.#used + size > this.#slab.length) {
      this.#slab = new Uint8Array(SLAB_BYTES);
      this.#used = 0;
    }
    const at = this.#used;
    const n = decodeInto(bytes, start, end, this.#slab, at);
    this.#used = at + n;
    return this.#slab.subarray(at, at + n);
  }
}
