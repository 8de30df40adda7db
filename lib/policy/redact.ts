/**
 * Secret redaction for what a drive shows and records (screens, transcripts, recordings, audit
 * payloads). Pure: no Node API, no I/O. Each rule finds secrets in text and the secret gives way
 * to `[REDACTED:kind]`, keeping the key, scheme, user name or command around it so the reader still
 * sees what was there.
 *
 * Rules match the text as a person sees it: for styled or structured content the text is first
 * seen through a view (`redaction/visible-text.ts`) that sets escape sequences, tags and soft-wrap breaks
 * aside, and the secret's range is mapped back onto the content itself, so `\e[32mghp_…`, a key
 * wrapped at the right margin, `&amp;sig=` and a secret split over two chunks of output are all
 * found, and no visible character of a secret survives in any format.
 *
 * Every pattern is linear in the input: each starts with a literal prefix or a boundary
 * lookbehind (so a long run is tried from its start only, not from every position inside it),
 * every quantifier after that is bounded, and no quantifier is nested. PEM blocks, `key = value`
 * assignments and command-line flags are scanned by hand because a regex for them would need an
 * unbounded run followed by a required suffix (or an unbounded look back for the command). All
 * rules run on the same text and their findings are merged (an overlap joins, the earlier rule
 * names it). The markers themselves never match a rule, so redacting twice changes nothing.
 *
 * This file is the redaction API. The rooms behind it, in lib/policy/redaction/: find-secrets.ts
 * (the rule table), pem-rule.ts, assignment-rule.ts and flag-rules.ts (the rules scanned by
 * hand), secret-span.ts (kinds, markers, merging), visible-text.ts, terminal-stream.ts and
 * view-rewrite.ts (the views a text is matched through, and writing the result back).
 */
import { findSecrets } from './redaction/find-secrets.js';
import { mergeSpans, redactionMarker, type RedactionKind, type SecretSpan } from './redaction/secret-span.js';
import { rewrite } from './redaction/view-rewrite.js';
import { terminalStream } from './redaction/terminal-stream.js';
import { htmlScreen, plainText, screenRows, viewOffset, type RowBreak, type VisibleText } from './redaction/visible-text.js';

export { findSecrets } from './redaction/find-secrets.js';
export { REDACTION_KINDS, redactionMarker, type RedactionKind, type SecretSpan } from './redaction/secret-span.js';

export interface RedactionResult {
  readonly text: string;
  /** How many secrets were replaced. */
  readonly count: number;
}

// ---- redacting what a drive shows -------------------------------------------------------------------

/** A control-string payload shorter than this cannot hold a key and a value (most are colours, modes or nothing). */
const MIN_PAYLOAD = 6;

/** Redacts the secrets seen through `view`; control-string payloads are redacted on their own. */
function redactView(view: VisibleText, chunkStarts?: readonly number[], leading?: { readonly secret: LeadingSecret; readonly exact: boolean }): { readonly chunks: string[]; readonly count: number } {
  let spans = findSecrets(view.text);
  if (leading) {
    const end = leadingEnd(view.text, leading.secret, leading.exact);
    if (end > 0) spans = mergeSpans([{ start: 0, end, kind: leading.secret.kind }], spans);
  }
  let count = spans.length;
  const chunks = rewrite(view, spans, {
    replacement: (_range, i) => redactionMarker((spans[i] as SecretSpan).kind),
    payload: (payload) => {
      if (payload.length < MIN_PAYLOAD) return payload;
      const r = redactSecrets(payload);
      count += r.count;
      return r.text;
    },
    ...(chunkStarts ? { chunkStarts } : {}),
  });
  return { chunks, count };
}

/**
 * Replaces the secrets in plain `text` with `[REDACTED:kind]` markers. Linear in the length of
 * `text`; redacting an already redacted text changes nothing.
 */
export function redactSecrets(text: string): RedactionResult {
  const spans = findSecrets(text);
  if (spans.length === 0) return { text, count: 0 };
  const [out] = rewrite(plainText(text), spans, { replacement: (_r, i) => redactionMarker((spans[i] as SecretSpan).kind) });
  return { text: out ?? '', count: spans.length };
}

/**
 * Every rule needs a key, flag or prefix, a separator and a value of at least one character, so no
 * secret is shorter than 3 characters; controls are excluded (a backspace or a cursor movement
 * changes the text the stream draws).
 */
const SHORTEST_SECRET_CHARS = 3;

function tooShortForASecret(text: string): boolean {
  if (text.length >= SHORTEST_SECRET_CHARS) return false;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x20 || (unit >= 0x7f && unit <= 0x9f)) return false;
  }
  return true;
}

/**
 * Terminal output (or typed input) that may carry escape sequences: matched on the text they
 * draw, redacted in the stream itself.
 */
export function redactTerminalText(text: string): RedactionResult {
  // A keystroke's text (typed one character at a time) is audited on the keystroke path: too
  // short for any rule, it is returned as is without building a view.
  if (tooShortForASecret(text)) return { text, count: 0 };
  const r = redactView(terminalStream(text));
  return { text: r.chunks[0] ?? '', count: r.count };
}

/**
 * Consecutive chunks of one terminal stream (a transcript's output entries, a recording's events):
 * matched across chunk boundaries, so a secret split over two chunks is found. Each chunk comes
 * back in its place; a secret's marker goes where the secret starts.
 */
export function redactTerminalChunks(chunks: readonly string[]): { readonly chunks: string[]; readonly count: number } {
  if (chunks.length === 0) return { chunks: [], count: 0 };
  const starts: number[] = [];
  let at = 0;
  for (const [i, c] of chunks.entries()) {
    if (i > 0) starts.push(at);
    at += c.length;
  }
  return redactView(terminalStream(chunks.join('')), starts);
}

/** The formats of a screen read. */
export type ScreenFormat = 'text' | 'ansi' | 'html';

/**
 * What the top of a screen shows of secrets that only the history above it reveals: the rest of a
 * secret that starts above, or a secret whose key, prefix or command scrolled off. It covers the
 * screen from its top to `lines` line breaks and then `chars` characters, as a text row reads.
 */
export interface LeadingSecret {
  readonly lines: number;
  readonly chars: number;
  readonly kind: RedactionKind;
}

/**
 * Where a leading secret ends in a view of the screen: after `lines` line breaks, then `chars`
 * (exactly, in text rows), or the whole of that line (ANSI and HTML, whose columns a text row
 * cannot be matched to exactly: blanks are cursor moves or padding there).
 */
function leadingEnd(text: string, leading: LeadingSecret, exact: boolean): number {
  let at = 0;
  for (let k = 0; k < leading.lines; k++) {
    const nl = text.indexOf('\n', at);
    if (nl === -1) return text.length;
    at = nl + 1;
  }
  if (exact || leading.chars === 0) return Math.min(text.length, at + leading.chars);
  const eol = text.indexOf('\n', at);
  return eol === -1 ? text.length : eol;
}

/**
 * Text rows around the top edge of a screen (`rows`: the rows above it, then its first rows,
 * joined by `\n`, with one break per row; the screen starts at row `firstRow`): what of secrets
 * seen only with the rows above the screen shows at its top, if anything.
 */
export function secretAcrossTop(rows: string, rowBreaks: readonly RowBreak[], firstRow: number): LeadingSecret | undefined {
  let at = 0;
  for (let r = 0; r < firstRow; r++) {
    const nl = rows.indexOf('\n', at);
    if (nl === -1) return undefined;
    at = nl + 1;
  }
  const view = screenRows(rows, rowBreaks);
  const top = viewOffset(view, at);
  const below = view.text.slice(top);
  const alone = findSecrets(below);
  // Secrets that cross the top, and secrets below it that the screen alone does not find.
  const hidden = findSecrets(view.text).filter((s) => s.end > top && (s.start < top || !alone.some((a) => a.start <= s.start - top && a.end >= s.end - top)));
  const last = hidden[hidden.length - 1];
  if (!last) return undefined;
  const shown = below.slice(0, last.end - top);
  const lastBreak = shown.lastIndexOf('\n');
  let lines = 0;
  for (let i = shown.indexOf('\n'); i !== -1; i = shown.indexOf('\n', i + 1)) lines += 1;
  return { lines, chars: shown.length - (lastBreak + 1), kind: (hidden[0] as SecretSpan).kind };
}

/**
 * A screen as read: `text` rows joined by `\n` (a soft-wrapped row is joined with the one above it
 * for matching, as `rowBreaks` says: one per row), `ansi` (the serialized stream) or `html` (one
 * element per row, `rowBreaks` as for text). `leading`: the part of a secret from above the screen
 * that its top shows (see `secretAcrossTop`).
 */
export function redactScreen(content: string, format: ScreenFormat, rowBreaks?: readonly RowBreak[], leading?: LeadingSecret): RedactionResult {
  const view = format === 'ansi' ? terminalStream(content) : format === 'html' ? htmlScreen(content, rowBreaks) : rowBreaks ? screenRows(content, rowBreaks) : plainText(content);
  const r = redactView(view, undefined, leading ? { secret: leading, exact: format === 'text' } : undefined);
  return { text: r.chunks[0] ?? '', count: r.count };
}

/**
 * A command line's words (the argv of a create): matched as the line a shell would show, so a flag
 * and its value in two words (`-u user:pass`, `--password X`) are found; each word comes back in its
 * place.
 */
export function redactArgv(argv: readonly string[]): { readonly argv: string[]; readonly count: number } {
  if (argv.length === 0) return { argv: [], count: 0 };
  const chunks: string[] = [];
  for (const [i, word] of argv.entries()) {
    if (i > 0) chunks.push(' ');
    chunks.push(word);
  }
  const r = redactTerminalChunks(chunks);
  // A word is one argument: what follows a secret after a blank inside the same word is the rest
  // of that secret (`--password 'two words'`), not another argument.
  const words = r.chunks.filter((_c, i) => i % 2 === 0).map((w) => w.replace(/(\[REDACTED:[a-z0-9-]+\])\s[^]*$/, '$1'));
  return { argv: words, count: r.count };
}
