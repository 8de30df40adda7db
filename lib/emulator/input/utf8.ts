/**
 * One complete UTF-8 character's code point, as tmux's mbtowc takes it (input_top_bit_set): -1 for
 * an overlong form, a surrogate or a value past U+10FFFF. The filter has checked the lead byte and
 * that the continuation bytes are 10xxxxxx.
 */
export function decodeUtf8(b: Uint8Array, size: number): number {
  const b0 = b[0] as number;
  const b1 = (b[1] as number) & 0x3f;
  if (size === 2) return ((b0 & 0x1f) << 6) | b1;
  const b2 = (b[2] as number) & 0x3f;
  if (size === 3) {
    const cp = ((b0 & 0x0f) << 12) | (b1 << 6) | b2;
    return cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff) ? -1 : cp;
  }
  const cp = ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | ((b[3] as number) & 0x3f);
  return cp < 0x10000 || cp > 0x10ffff ? -1 : cp;
}
