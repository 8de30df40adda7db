/**
 * PEM private keys: from a BEGIN … PRIVATE KEY header to its footer; with the footer missing, the
 * header and the base64 lines after it; with the header missing (scrolled off), the base64 lines
 * above the footer. Every scan is bounded, and many headers without a footer cost one scan.
 */
import { mergeSpans, type SecretFinder, type SecretSpan } from './secret-span.js';

const PEM_BEGIN = /-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_END = /-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----/g;
const PEM_NEXT_BEGIN = new RegExp(PEM_BEGIN.source, 'g');
/** A key block is a few KiB (RSA-8192 is ~6.5 KiB); a footer farther away is not this key's. */
const PEM_MAX_SPAN = 65_536;
/** Body lines of a key whose footer is not in the text (a key scrolled off or cut by a read). */
const PEM_BODY_LINE = /^[ \t]{0,16}(?:[A-Za-z0-9+/=]{1,200}|(?:Proc-Type|DEK-Info|Comment|Version):[^\r\n]{0,200})?[ \t\r]{0,16}$/;
const PEM_HEADER_TAIL = /[A-Za-z0-9+/=\\]{0,16384}/y;
/** Longer lines are not base64 body lines (PEM wraps at 64, OpenSSH at 70). */
const PEM_MAX_LINE = 240;

/**
 * Where the body of a key without a footer ends: `from` is the end of its header; the body is the
 * base64 lines that follow (blank lines are crossed but never end the body). Every scan is bounded.
 */
function pemBodyLinesEnd(text: string, start: number, from: number): number {
  let p = from;
  while (p < text.length && p - from < 64 && (text[p] === ' ' || text[p] === '\t' || text[p] === '\r')) p += 1;
  if (text.charAt(p) !== '\n') return from;
  let end = from;
  let lineStart = p;
  while (lineStart - start < PEM_MAX_SPAN) {
    const first = lineStart + 1;
    const limit = Math.min(text.length, first + PEM_MAX_LINE + 1);
    let eol = first;
    while (eol < limit && text[eol] !== '\n') eol += 1;
    if (eol === limit && limit < text.length) break;
    const line = text.slice(first, eol);
    if (!PEM_BODY_LINE.test(line)) break;
    if (line.trim().length > 0) end = eol;
    if (eol >= text.length) break;
    lineStart = eol;
  }
  return end;
}

interface Range {
  readonly start: number;
  readonly end: number;
}

/**
 * The first match of `pattern` (global) at or after a position, for positions that only grow: a
 * search is repeated only when the position passes the last match, so the text is scanned once.
 */
function nextMatch(pattern: RegExp, text: string): (from: number) => Range | undefined {
  let searchedFrom = -1;
  let found: Range | undefined;
  return (from) => {
    if (searchedFrom >= 0 && from >= searchedFrom && (found === undefined || found.start >= from)) return found;
    pattern.lastIndex = from;
    const m = pattern.exec(text);
    searchedFrom = from;
    found = m ? { start: m.index, end: m.index + m[0].length } : undefined;
    return found;
  };
}

/**
 * Where the body of a key without a header begins (the header scrolled off the top of a screen):
 * the base64 lines right above its footer at `footerStart`, not above `floor`. Every scan is bounded.
 */
function pemBodyLinesStart(text: string, footerStart: number, floor: number): number {
  let p = footerStart;
  while (p > floor && footerStart - p < 64 && (text[p - 1] === ' ' || text[p - 1] === '\t')) p -= 1;
  if (p <= floor || text[p - 1] !== '\n') return footerStart;
  let start = footerStart;
  let lineEnd = p - 1;
  while (lineEnd >= floor && footerStart - lineEnd < PEM_MAX_SPAN) {
    const limit = Math.max(floor, lineEnd - PEM_MAX_LINE - 1);
    let first = lineEnd;
    while (first > limit && text[first - 1] !== '\n') first -= 1;
    if (first === limit && first > floor && text[first - 1] !== '\n') break;
    if (!PEM_BODY_LINE.test(text.slice(first, lineEnd))) break;
    if (text.slice(first, lineEnd).trim().length > 0) start = first;
    if (first <= floor) break;
    lineEnd = first - 1;
  }
  return start;
}

/**
 * From each BEGIN … PRIVATE KEY header to its footer; when the footer is missing, the header plus
 * the base64 body lines that follow it (a truncated key is still a secret); when the header is
 * missing, the body lines above the footer.
 */
export const pemRule: SecretFinder = (text) => {
  if (!text.includes('PRIVATE KEY')) return [];
  const spans: SecretSpan[] = [...pemHeaderSpans(text)];
  // Footers no header claimed.
  let floor = 0;
  let h = 0;
  const orphans: SecretSpan[] = [];
  PEM_END.lastIndex = 0;
  for (let m = PEM_END.exec(text); m; m = PEM_END.exec(text)) {
    while (h < spans.length && (spans[h] as SecretSpan).end <= m.index) floor = Math.max(floor, (spans[h++] as SecretSpan).end);
    if (h < spans.length && (spans[h] as SecretSpan).start <= m.index) continue;
    const start = pemBodyLinesStart(text, m.index, floor);
    if (start < m.index) orphans.push({ start, end: m.index + m[0].length, kind: 'private-key' });
    floor = m.index + m[0].length;
  }
  return orphans.length === 0 ? spans : mergeSpans(spans, orphans);
};

function pemHeaderSpans(text: string): SecretSpan[] {
  const spans: SecretSpan[] = [];
  // The next footer (and header) at or after a position, remembered so that many headers without
  // a footer cost one scan, not one scan each.
  const nextFooter = nextMatch(PEM_END, text);
  const nextHeader = nextMatch(PEM_NEXT_BEGIN, text);
  PEM_BEGIN.lastIndex = 0;
  for (let m = PEM_BEGIN.exec(text); m; m = PEM_BEGIN.exec(text)) {
    const start = m.index;
    const headerEnd = start + m[0].length;
    const f = nextFooter(headerEnd);
    const h = nextHeader(headerEnd);
    let end: number;
    // A footer belongs to this header when no other header comes first.
    if (f && f.start - headerEnd <= PEM_MAX_SPAN && (h === undefined || h.start > f.start)) {
      end = f.end;
    } else {
      // The rest of the header's line may carry the body with literal "\n" escapes (JSON).
      PEM_HEADER_TAIL.lastIndex = headerEnd;
      end = PEM_HEADER_TAIL.exec(text) ? PEM_HEADER_TAIL.lastIndex : headerEnd;
      end = pemBodyLinesEnd(text, start, end);
    }
    spans.push({ start, end, kind: 'private-key' });
    PEM_BEGIN.lastIndex = end;
  }
  return spans;
}
