/**
 * `transcript()`: a page of the evidence ring as a caller gets it. With redaction on, output comes
 * back as redacted text (decoded across entries) and typed input redacted too; with it off, output
 * is the raw bytes. Output is one stream and typed input another: each is redacted across its
 * entries with the entries around the page as context, so a secret split over two chunks, or
 * over the page's edge, is still found.
 */
import { redactTerminalChunks } from '../policy/redact.js';
import type { Transcript, TranscriptEntry } from './transcript.js';

/** Entries looked at on each side of a page for secrets that cross its edge. */
const CONTEXT_ENTRIES = 64;
/** Characters of context on each side: more than the largest secret a rule matches (a PEM key is < 64 KiB). */
const CONTEXT_CHARS = 65_536;

export function transcriptPage(ring: Transcript, opts: { after?: number; limit?: number }, redact: boolean): TranscriptEntry[] {
  const entries = ring.read(opts);
  if (!redact || entries.length === 0) return entries;
  const first = (entries[0] as TranscriptEntry).seq;
  const last = (entries[entries.length - 1] as TranscriptEntry).seq;
  const before = ring.read({ after: Math.max(0, first - 1 - CONTEXT_ENTRIES), limit: CONTEXT_ENTRIES }).filter((e) => e.seq < first);
  const after = ring.read({ after: last, limit: CONTEXT_ENTRIES });
  const redacted = new Map<TranscriptEntry, string>();
  for (const kind of ['output', 'input'] as const) {
    const window = [...contextTail(before, kind), ...entries.filter((e) => e.kind === kind && e.data !== undefined), ...contextHead(after, kind)];
    const decoder = new TextDecoder('utf-8');
    const texts = window.map((e) => (typeof e.data === 'string' ? e.data : decoder.decode(e.data, { stream: true })));
    const r = redactTerminalChunks(texts);
    for (const [i, e] of window.entries()) redacted.set(e, r.chunks[i] ?? '');
  }
  return entries.map((e) => {
    const text = redacted.get(e);
    return text === undefined ? e : { ...e, data: text };
  });
}

function dataLength(e: TranscriptEntry): number {
  return e.data === undefined ? 0 : typeof e.data === 'string' ? e.data.length : e.data.byteLength;
}

/** The last entries of `kind` in `entries`, up to CONTEXT_CHARS of data. */
function contextTail(entries: readonly TranscriptEntry[], kind: TranscriptEntry['kind']): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let size = 0;
  for (let i = entries.length - 1; i >= 0 && size < CONTEXT_CHARS; i--) {
    const e = entries[i] as TranscriptEntry;
    if (e.kind !== kind || e.data === undefined) continue;
    out.unshift(e);
    size += dataLength(e);
  }
  return out;
}

/** The first entries of `kind` in `entries`, up to CONTEXT_CHARS of data. */
function contextHead(entries: readonly TranscriptEntry[], kind: TranscriptEntry['kind']): TranscriptEntry[] {
  const out: TranscriptEntry[] = [];
  let size = 0;
  for (const e of entries) {
    if (size >= CONTEXT_CHARS) break;
    if (e.kind !== kind || e.data === undefined) continue;
    out.push(e);
    size += dataLength(e);
  }
  return out;
}
