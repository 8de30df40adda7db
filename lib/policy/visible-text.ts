/**
 * The text a person sees in a styled or structured stream, with every position mapped back to the
 * stream. Pure: no Node API, no I/O.
 *
 * Redaction must match what a reader sees, not the bytes that draw it: `\e[32mghp_…` shows a token
 * at a word boundary, `&amp;sig=` shows `&sig=`, a key that wraps at the right margin is one word
 * on two rows. A view splits its source into pieces: visible text (matched as is), decoded
 * characters (an HTML entity), and pieces *set aside* for matching (escape sequences, tags, the
 * line break of a soft-wrapped row), each of which contributes a fixed separator, or nothing, to
 * the text that is matched. `rewrite` then replaces ranges of the view in the source itself: the
 * visible characters of a range are dropped, its set-aside pieces are kept (after the
 * replacement), so styles, tags and row structure stay intact and no character of the range
 * survives. Control strings (OSC, DCS, APC, PM, SOS) are set aside too, but their payload is
 * text a terminal keeps (a window title, a hyperlink, a clipboard write): `rewrite` hands each
 * payload to a callback of its own (the caller redacts it as plain text).
 *
 * Every builder is one forward scan: linear in the source.
 */
/**
 * How a screen row follows the row above it: a new line, a soft wrap at the right margin, or a
 * soft wrap after blank cells. The emulator's snapshots carry these (`ScreenSnapshot.rowBreaks`);
 * the type is declared here so that policy compiles without the emulator (docs/architecture.md),
 * and the session, which passes one to the other, is where the compiler checks they agree.
 */
export type RowBreak = 'line' | 'wrap' | 'wrap-after-blank';

/** One piece of the source, in order; pieces tile the source without gaps. */
interface Piece {
  /** Source range. */
  readonly start: number;
  readonly end: number;
  /** Range of the view this piece contributes (empty for a piece set aside without a separator). */
  readonly viewStart: number;
  readonly viewEnd: number;
  /** text: view = source, char by char; char: decoded (an entity); aside: not content, kept when inside a rewritten range. */
  readonly kind: 'text' | 'char' | 'aside';
  /** For a control string: the source range of its payload. */
  readonly payloadStart?: number;
  readonly payloadEnd?: number;
}

export interface VisibleText {
  /** The stream as given. */
  readonly source: string;
  /** What a person sees, for matching. */
  readonly text: string;
  /** @internal */
  readonly pieces: readonly Piece[];
}

/** A range of `VisibleText.text` to replace. Ranges must be sorted and must not overlap. */
export interface ViewRange {
  readonly start: number;
  readonly end: number;
}

class ViewBuilder {
  readonly pieces: Piece[] = [];
  private readonly parts: string[] = [];
  private viewLength = 0;
  constructor(readonly source: string) {}

  text(start: number, end: number): void {
    if (end <= start) return;
    this.push(start, end, 'text', this.source.slice(start, end));
  }

  char(start: number, end: number, decoded: string): void {
    this.push(start, end, 'char', decoded);
  }

  aside(start: number, end: number, contributes: string, payload?: readonly [number, number]): void {
    if (end <= start) return;
    this.push(start, end, 'aside', contributes, payload);
  }

  private push(start: number, end: number, kind: Piece['kind'], contributes: string, payload?: readonly [number, number]): void {
    const viewStart = this.viewLength;
    this.viewLength += contributes.length;
    if (contributes.length > 0) this.parts.push(contributes);
    this.pieces.push({ start, end, viewStart, viewEnd: this.viewLength, kind, ...(payload ? { payloadStart: payload[0], payloadEnd: payload[1] } : {}) });
  }

  build(): VisibleText {
    return { source: this.source, text: this.parts.join(''), pieces: this.pieces };
  }
}

/** The plain text itself (every character visible). */
export function plainText(source: string): VisibleText {
  const b = new ViewBuilder(source);
  b.text(0, source.length);
  return b.build();
}


/**
 * Rows of a text screen joined by `\n` (a text read): the break before a row that continues the
 * row above it (a soft wrap at the right margin) is set aside, so a word that wraps is one word to
 * the matcher and the row structure of the result is kept. A wrap after blank cells (which the
 * right-trimmed row left out) stands for a blank.
 */
export function screenRows(source: string, breaks: readonly RowBreak[]): VisibleText {
  const b = new ViewBuilder(source);
  let row = 0;
  let from = 0;
  for (let nl = source.indexOf('\n'); nl !== -1; nl = source.indexOf('\n', nl + 1)) {
    row += 1;
    const brk = breaks[row];
    if (brk === 'wrap' || brk === 'wrap-after-blank') {
      b.text(from, nl);
      b.aside(nl, nl + 1, brk === 'wrap' ? '' : ' ');
      from = nl + 1;
    }
  }
  b.text(from, source.length);
  return b.build();
}

const enum Ch {
  Bs = 0x08,
  Tab = 0x09,
  Lf = 0x0a,
  Vt = 0x0b,
  Ff = 0x0c,
  Cr = 0x0d,
  Can = 0x18,
  Sub = 0x1a,
  Esc = 0x1b,
  Space = 0x20,
  Dash = 0x2d,
  Backslash = 0x5c,
  Del = 0x7f,
  Bel = 0x07,
  C1First = 0x80,
  C1Last = 0x9f,
  C1Dcs = 0x90,
  C1Sos = 0x98,
  C1Csi = 0x9b,
  C1St = 0x9c,
  C1Osc = 0x9d,
  C1Pm = 0x9e,
  C1Apc = 0x9f,
  C1Ind = 0x84,
  C1Nel = 0x85,
  C1Ri = 0x8d,
}

/**
 * CSI finals that move the cursor somewhere else (up, down, to a column or a position, scroll,
 * restore): what follows is drawn elsewhere, so the view gets a line break. Cursor-forward (C, a)
 * shows as blanks; the rest (SGR m, erase K/J/X, modes h/l, …) draws nothing between two
 * characters and contributes nothing.
 */
const CSI_MOVES = new Set('ABDEFGHLMSTZdefjkru`');
/**
 * Blanks a cursor-forward stands for at most: enough to separate words and to fill the gap
 * between a key and its value; bounded so a stream of short CUFs cannot blow up the view.
 */
const MAX_FORWARD = 8;

/** The serializer's forced wrap (addon-serialize `_rowEnd`): dashes then back-and-erase, maybe a fix-up of the row above. */
const SERIALIZER_WRAP_TAIL = /\x1b\[1D\x1b\[1X(?:\x1b\[A\x1b\[\d{1,5}C\x1b\[\d{1,5}X\x1b\[\d{1,5}D\x1b\[B)?/y;

function csiContribution(source: string, paramsStart: number, finalAt: number): string {
  const final = source.charAt(finalAt);
  if (final === 'C' || final === 'a') {
    const first = /^\d{0,6}/.exec(source.slice(paramsStart, Math.min(finalAt, paramsStart + 6)))?.[0] ?? '';
    const n = Math.min(MAX_FORWARD, Math.max(1, Number(first) || 1));
    return ' '.repeat(n);
  }
  if (final === 'I') return '\t';
  return CSI_MOVES.has(final) ? '\n' : '';
}

/**
 * Terminal output as a person sees it (pane bytes decoded, an ANSI read, typed input): escape
 * sequences and control characters set aside (a cursor movement stands for a line break, a
 * cursor-forward for blanks), control strings set aside with their payloads redacted apart.
 */
export function terminalStream(source: string): VisibleText {
  const b = new ViewBuilder(source);
  const n = source.length;
  let textFrom = 0;
  let i = 0;
  const flush = (to: number): void => {
    b.text(textFrom, to);
  };
  while (i < n) {
    const c = source.charCodeAt(i);
    if (c === Ch.Dash && (i === 0 || source.charCodeAt(i - 1) !== Ch.Dash)) {
      let k = i;
      while (k < n && source.charCodeAt(k) === Ch.Dash) k += 1;
      if (source.charCodeAt(k) === Ch.Esc) {
        SERIALIZER_WRAP_TAIL.lastIndex = k;
        if (SERIALIZER_WRAP_TAIL.test(source)) {
          flush(i);
          b.aside(i, SERIALIZER_WRAP_TAIL.lastIndex, '');
          i = textFrom = SERIALIZER_WRAP_TAIL.lastIndex;
          continue;
        }
      }
      i = k;
      continue;
    }
    if ((c >= Ch.Space && c !== Ch.Del && (c < Ch.C1First || c > Ch.C1Last)) || c === Ch.Lf || c === Ch.Cr || c === Ch.Tab) {
      i += 1;
      continue;
    }
    flush(i);
    const end = controlEnd(source, i, b);
    i = textFrom = end;
  }
  flush(n);
  return b.build();
}

/** Sets aside the control sequence or character at `at`; returns where it ends. */
function controlEnd(source: string, at: number, b: ViewBuilder): number {
  const n = source.length;
  const c = source.charCodeAt(at);
  if (c === Ch.Esc) {
    if (at + 1 >= n) {
      b.aside(at, n, '');
      return n;
    }
    const next = source.charCodeAt(at + 1);
    switch (next) {
      case 0x5b: // [
        return csi(source, at, at + 2, b);
      case 0x5d: // ]
        return controlString(source, at, at + 2, true, b);
      case 0x50: // P
      case 0x58: // X
      case 0x5e: // ^
      case 0x5f: // _
        return controlString(source, at, at + 2, false, b);
      default:
        break;
    }
    if (next >= 0x20 && next <= 0x2f) {
      // Intermediates then a final: charset designations (ESC ( B), ESC # 8, ESC % G, …
      let j = at + 1;
      while (j < n && source.charCodeAt(j) >= 0x20 && source.charCodeAt(j) <= 0x2f) j += 1;
      if (j < n && source.charCodeAt(j) >= 0x30 && source.charCodeAt(j) <= 0x7e) j += 1;
      b.aside(at, j, '');
      return j;
    }
    if (next >= 0x30 && next <= 0x7e) {
      // RI, IND, NEL, DECRC and RIS move the cursor; the other single finals draw nothing.
      b.aside(at, at + 2, 'MDE8c'.includes(String.fromCharCode(next)) ? '\n' : '');
      return at + 2;
    }
    b.aside(at, at + 1, '');
    return at + 1;
  }
  if (c >= Ch.C1First && c <= Ch.C1Last) {
    switch (c) {
      case Ch.C1Csi:
        return csi(source, at, at + 1, b);
      case Ch.C1Osc:
        return controlString(source, at, at + 1, true, b);
      case Ch.C1Dcs:
      case Ch.C1Sos:
      case Ch.C1Pm:
      case Ch.C1Apc:
        return controlString(source, at, at + 1, false, b);
      default:
        b.aside(at, at + 1, c === Ch.C1Ind || c === Ch.C1Nel || c === Ch.C1Ri ? '\n' : '');
        return at + 1;
    }
  }
  // C0 and DEL: backspace, VT and FF move the cursor; NUL, BEL, SO, SI … draw nothing.
  b.aside(at, at + 1, c === Ch.Bs || c === Ch.Vt || c === Ch.Ff ? '\n' : '');
  return at + 1;
}

function csi(source: string, at: number, paramsStart: number, b: ViewBuilder): number {
  const n = source.length;
  let j = paramsStart;
  while (j < n && source.charCodeAt(j) >= 0x30 && source.charCodeAt(j) <= 0x3f) j += 1;
  while (j < n && source.charCodeAt(j) >= 0x20 && source.charCodeAt(j) <= 0x2f) j += 1;
  if (j < n && source.charCodeAt(j) >= 0x40 && source.charCodeAt(j) <= 0x7e) {
    b.aside(at, j + 1, csiContribution(source, paramsStart, j));
    return j + 1;
  }
  // Cut short (end of the stream, or a control inside): what was read is set aside.
  b.aside(at, j, '');
  return j;
}

/**
 * OSC (ended by BEL or ST), DCS, SOS, PM and APC (ended by ST). As in xterm, ESC, CAN or SUB also
 * end the string; an unterminated string runs to the end of the stream (a terminal would swallow
 * all of it, and so does the payload).
 */
function controlString(source: string, at: number, payloadStart: number, belEnds: boolean, b: ViewBuilder): number {
  const n = source.length;
  let j = payloadStart;
  for (; j < n; j++) {
    const c = source.charCodeAt(j);
    if (c === Ch.Esc || c === Ch.Can || c === Ch.Sub || c === Ch.C1St || (belEnds && c === Ch.Bel)) break;
  }
  let end = j;
  if (j < n) {
    const c = source.charCodeAt(j);
    if (c === Ch.Esc) end = source.charCodeAt(j + 1) === Ch.Backslash ? j + 2 : j;
    else end = j + 1;
  }
  b.aside(at, end, '', [payloadStart, j]);
  return end;
}

const ROW_START = '<div><span>';
const ENTITY = /&(?:#([0-9]{1,7})|#[xX]([0-9a-fA-F]{1,6})|(amp|lt|gt|quot|apos|nbsp));/y;
const NAMED: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0' };

function codePoint(n: number): string | undefined {
  return n >= 0 && n <= 0x10ffff && (n < 0xd800 || n > 0xdfff) ? String.fromCodePoint(n) : undefined;
}

/**
 * An HTML screen (xterm's `serializeAsHTML`: one `<div><span>…</span></div>` per row, every cell
 * written): tags set aside, entities decoded, each row start a line break unless the row
 * continues the one above it (`breaks`; without them every row is its own line).
 */
export function htmlScreen(source: string, breaks?: readonly RowBreak[]): VisibleText {
  const b = new ViewBuilder(source);
  const n = source.length;
  let textFrom = 0;
  let row = -1;
  let i = 0;
  while (i < n) {
    const c = source.charCodeAt(i);
    if (c === 0x3c /* < */) {
      const close = source.indexOf('>', i + 1);
      if (close === -1) {
        i = n;
        break;
      }
      b.text(textFrom, i);
      let end = close + 1;
      let separator = '';
      if (source.startsWith(ROW_START, i)) {
        end = i + ROW_START.length;
        row += 1;
        const brk = breaks?.[row];
        if (row > 0 && brk !== 'wrap' && brk !== 'wrap-after-blank') separator = '\n';
      }
      b.aside(i, end, separator);
      i = textFrom = end;
      continue;
    }
    if (c === 0x26 /* & */) {
      ENTITY.lastIndex = i;
      const m = ENTITY.exec(source);
      const decoded = m ? (m[1] !== undefined ? codePoint(Number(m[1])) : m[2] !== undefined ? codePoint(parseInt(m[2], 16)) : NAMED[m[3] ?? '']) : undefined;
      if (m && decoded !== undefined) {
        b.text(textFrom, i);
        b.char(i, i + m[0].length, decoded);
        i = textFrom = i + m[0].length;
        continue;
      }
    }
    i += 1;
  }
  b.text(textFrom, n);
  return b.build();
}

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

/** The view position of a source offset (of the piece that holds it; the view's end past the last). */
export function viewOffset(view: VisibleText, sourceOffset: number): number {
  const { pieces } = view;
  let lo = 0;
  let hi = pieces.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((pieces[mid] as Piece).end <= sourceOffset) lo = mid + 1;
    else hi = mid;
  }
  const piece = pieces[lo];
  if (!piece) return view.text.length;
  return piece.kind === 'text' ? piece.viewStart + Math.max(0, sourceOffset - piece.start) : piece.viewStart;
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
