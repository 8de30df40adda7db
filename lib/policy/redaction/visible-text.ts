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
 * Every builder is one forward scan: linear in the source. This file has the view, its builder and
 * the builders of plain text, text rows and HTML screens; terminal-stream.ts builds the view of a
 * terminal stream and view-rewrite.ts writes replacements back into the source.
 */
/**
 * How a screen row follows the row above it: a new line, a soft wrap at the right margin, or a
 * soft wrap after blank cells. The emulator's snapshots carry these (`ScreenSnapshot.rowBreaks`);
 * the type is declared here so that policy compiles without the emulator (docs/architecture.md),
 * and the session, which passes one to the other, is where the compiler checks they agree.
 */
export type RowBreak = 'line' | 'wrap' | 'wrap-after-blank';

/** One piece of the source, in order; pieces tile the source without gaps. */
export interface Piece {
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

export class ViewBuilder {
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
