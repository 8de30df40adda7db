/**
 * Writes replacements of view ranges back into the source of a view: a range's visible characters
 * give way to its replacement, the pieces set aside inside it (escapes, tags, soft-wrap breaks)
 * are kept, and every control-string payload goes through a callback of its own.
 */
import type { Piece, ViewRange, VisibleText } from './visible-text.js';

/** The piece holding view position `v` (one that contributes to the view). */
function pieceAt(pieces: readonly Piece[], v: number): number {
  let lo = 0;
  let hi = pieces.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pieces[mid] as Piece).viewEnd <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface RewriteOptions {
  /** The text that stands for a replaced range. */
  readonly replacement: (range: ViewRange, index: number) => string;
  /** A control string's payload, as it should be written (e.g. redacted); called once per payload. */
  readonly payload?: (payload: string) => string;
  /**
   * Source offsets where the output is cut into chunks (ascending, each > 0): the result has one
   * string per chunk. A replacement goes into the chunk where its range starts.
   */
  readonly chunkStarts?: readonly number[];
}

/**
 * Replaces `ranges` of the view in the source: each range's visible characters give way to its
 * replacement, followed by the set-aside pieces inside it (escapes, tags, soft-wrap breaks);
 * everything outside the ranges is kept, except that every control-string payload goes through
 * `payload`. Ranges must be sorted, non-empty and non-overlapping.
 */
export function rewrite(view: VisibleText, ranges: readonly ViewRange[], opts: RewriteOptions): string[] {
  const { source, pieces } = view;
  const bounds = [0, ...(opts.chunkStarts ?? []), source.length];
  const out: string[][] = bounds.slice(1).map(() => []);
  let chunk = 0;
  const chunkOf = (pos: number): number => {
    while (chunk < out.length - 1 && pos >= (bounds[chunk + 1] as number)) chunk += 1;
    return chunk;
  };
  /** Source text [from, to) split where chunks start. */
  const putSource = (from: number, to: number): void => {
    let p = from;
    while (p < to) {
      const c = chunkOf(p);
      const stop = Math.min(to, bounds[c + 1] as number);
      (out[c] as string[]).push(source.slice(p, stop));
      p = stop;
    }
  };
  const putAside = (piece: Piece): void => {
    if (piece.payloadStart === undefined || piece.payloadEnd === undefined || !opts.payload) {
      putSource(piece.start, piece.end);
      return;
    }
    const payload = source.slice(piece.payloadStart, piece.payloadEnd);
    const written = opts.payload(payload);
    if (written === payload) putSource(piece.start, piece.end);
    else (out[chunkOf(piece.start)] as string[]).push(source.slice(piece.start, piece.payloadStart) + written + source.slice(piece.payloadEnd, piece.end));
  };
  let p = 0; // next piece
  let pos = 0; // next source offset to write
  /** Writes the source up to `to` (a piece boundary or inside a text piece). */
  const putUntil = (to: number): void => {
    while (p < pieces.length && pos < to) {
      const piece = pieces[p] as Piece;
      if (piece.end <= pos) {
        p += 1;
        continue;
      }
      if (piece.kind === 'aside') {
        putAside(piece);
        pos = piece.end;
        p += 1;
        continue;
      }
      const stop = Math.min(to, piece.end);
      putSource(pos, stop);
      pos = stop;
      if (stop === piece.end) p += 1;
    }
  };
  for (const [index, range] of ranges.entries()) {
    if (range.end <= range.start) continue;
    const first = pieces[pieceAt(pieces, range.start)] as Piece;
    const last = pieces[pieceAt(pieces, range.end - 1)] as Piece;
    let from = first.kind === 'text' ? first.start + (range.start - first.viewStart) : first.start;
    let to = last.kind === 'text' ? last.start + (range.end - 1 - last.viewStart) + 1 : last.end;
    // Never split a surrogate pair.
    if (from > 0 && isLow(source.charCodeAt(from)) && isHigh(source.charCodeAt(from - 1))) from -= 1;
    if (to < source.length && isLow(source.charCodeAt(to)) && isHigh(source.charCodeAt(to - 1))) to += 1;
    if (from < pos) from = pos;
    putUntil(from);
    const target = out[chunkOf(from)] as string[];
    target.push(opts.replacement(range, index));
    // Keep what is not content inside the range; drop its visible characters.
    while (p < pieces.length && (pieces[p] as Piece).start < to) {
      const piece = pieces[p] as Piece;
      if (piece.kind === 'aside' && piece.start >= from && piece.end <= to) {
        if (piece.payloadStart !== undefined && piece.payloadEnd !== undefined && opts.payload) target.push(source.slice(piece.start, piece.payloadStart) + opts.payload(source.slice(piece.payloadStart, piece.payloadEnd)) + source.slice(piece.payloadEnd, piece.end));
        else target.push(source.slice(piece.start, piece.end));
      }
      if (piece.end > to) break;
      p += 1;
    }
    pos = Math.max(pos, to);
  }
  putUntil(source.length);
  return out.map((parts) => parts.join(''));
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}
