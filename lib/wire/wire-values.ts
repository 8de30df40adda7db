/**
 * Library values that JSON cannot carry as they are: transcript entries (pane bytes are a
 * Uint8Array when redaction is off: base64 on the wire) and a wait's text pattern (a RegExp: its
 * source and flags). Both directions, so the client hands back the library's own shapes.
 */
import type { TranscriptEntry, TranscriptKind } from '../session/transcript.js';

export interface WireTranscriptEntry {
  readonly seq: number;
  readonly time: number;
  readonly kind: TranscriptKind;
  /** Text: typed input, or output already redacted (and so decoded) by the host. */
  readonly text?: string;
  /** Pane bytes as they came (redaction off), base64. */
  readonly bytes?: string;
  readonly tags?: TranscriptEntry['tags'];
}

export function toWireEntry(e: TranscriptEntry): WireTranscriptEntry {
  return {
    seq: e.seq,
    time: e.time,
    kind: e.kind,
    ...(typeof e.data === 'string' ? { text: e.data } : e.data instanceof Uint8Array ? { bytes: Buffer.from(e.data.buffer, e.data.byteOffset, e.data.byteLength).toString('base64') } : {}),
    ...(e.tags ? { tags: e.tags } : {}),
  };
}

export function fromWireEntry(w: WireTranscriptEntry): TranscriptEntry {
  const data = typeof w.text === 'string' ? w.text : typeof w.bytes === 'string' ? new Uint8Array(Buffer.from(w.bytes, 'base64')) : undefined;
  return { seq: w.seq, time: w.time, kind: w.kind, ...(data === undefined ? {} : { data }), ...(w.tags ? { tags: w.tags } : {}) };
}

/** A wait's forText on the wire: a string, or a regular expression's source and flags. */
export type WireTextPattern = string | { readonly regex: string; readonly flags?: string };

export function toWirePattern(p: string | RegExp): WireTextPattern {
  return typeof p === 'string' ? p : { regex: p.source, ...(p.flags ? { flags: p.flags } : {}) };
}
