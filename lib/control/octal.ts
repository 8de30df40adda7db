/**
 * Decodes tmux's `%output` escaping: tmux writes each byte below 0x20 and each backslash as `\ooo`
 * (exactly three octal digits) and every other byte raw, so the decoding is unambiguous. A malformed
 * escape (which tmux never writes) is kept literally instead of failing: the parser never throws.
 */

const BACKSLASH = 0x5c;

function octalDigit(b: number | undefined): number {
  return b !== undefined && b >= 0x30 && b <= 0x37 ? b - 0x30 : -1;
}

/** Returns a new array (never a view of `bytes`) holding the decoded bytes of `bytes[start, end)`. */
export function decodeOctal(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  let slash = bytes.indexOf(BACKSLASH, start);
  if (slash < 0 || slash >= end) return bytes.slice(start, end);
  const out = new Uint8Array(end - start);
  let n = 0;
  let from = start;
  while (slash >= 0 && slash < end) {
    out.set(bytes.subarray(from, slash), n);
    n += slash - from;
    const a = octalDigit(bytes[slash + 1]);
    const b = octalDigit(bytes[slash + 2]);
    const c = octalDigit(bytes[slash + 3]);
    if (a >= 0 && a <= 3 && b >= 0 && c >= 0 && slash + 3 < end) {
      out[n++] = (a << 6) | (b << 3) | c;
      from = slash + 4;
    } else {
      out[n++] = BACKSLASH;
      from = slash + 1;
    }
    slash = bytes.indexOf(BACKSLASH, from);
  }
  out.set(bytes.subarray(from, end), n);
  n += end - from;
  return n === out.length ? out : out.subarray(0, n);
}
