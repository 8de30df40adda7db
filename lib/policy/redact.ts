/**
 * Secret redaction for decoded text (screens, transcripts, events, audit payloads). Pure: no Node
 * API, no I/O. Each rule is a pass over the text that replaces a secret with `[REDACTED:kind]`,
 * keeping the key, scheme or user name around it so the reader still sees what was there.
 *
 * Every pattern is linear in the input: each starts with a literal prefix or a boundary
 * lookbehind (so a long run is tried from its start only, not from every position inside it),
 * every quantifier after that is bounded, and no quantifier is nested. PEM blocks and
 * `key = value` assignments are scanned by hand because a regex for them would need an unbounded
 * run followed by a required suffix. The markers themselves never match a rule, so redacting twice
 * changes nothing.
 */

/** The kinds a marker can name, in the order the passes run. */
export const REDACTION_KINDS = [
  'private-key',
  'jwt',
  'aws-access-key-id',
  'aws-secret-access-key',
  'google-api-key',
  'google-oauth-token',
  'google-oauth-client-secret',
  'github-token',
  'gitlab-token',
  'slack-token',
  'slack-webhook',
  'anthropic-key',
  'openai-key',
  'stripe-key',
  'npm-token',
  'huggingface-token',
  'sendgrid-key',
  'twilio-key',
  'digitalocean-token',
  'azure-key',
  'azure-sas-signature',
  'url-password',
  'authorization',
  'bearer-token',
  'password',
  'secret',
  'token',
  'api-key',
] as const;

export type RedactionKind = (typeof REDACTION_KINDS)[number];

export interface RedactionResult {
  readonly text: string;
  /** How many secrets were replaced. */
  readonly count: number;
}

const MARKER_PREFIX = '[REDACTED:';

/** The fixed text that stands in for a secret of `kind`. */
export function redactionMarker(kind: RedactionKind): string {
  return `${MARKER_PREFIX}${kind}]`;
}

type Pass = (text: string) => RedactionResult;

/**
 * A pass that replaces every match of `pattern` (global). `secretGroup` names the capture group
 * holding the secret; everything else in the match is kept. Without it the whole match goes.
 */
function regexPass(kind: RedactionKind, pattern: RegExp, secretGroup?: number, accept?: (secret: string) => boolean): Pass {
  const marker = redactionMarker(kind);
  return (text) => {
    let count = 0;
    const out = text.replace(pattern, (match: string, ...rest: unknown[]) => {
      if (secretGroup === undefined) {
        if (accept && !accept(match)) return match;
        count += 1;
        return marker;
      }
      const groups = rest.slice(0, -2) as Array<string | undefined>;
      const secret = groups[secretGroup - 1];
      if (!secret || secret.startsWith(MARKER_PREFIX) || (accept && !accept(secret))) return match;
      // Rebuild the match around the secret: the groups before it are the kept prefix.
      const at = groups.slice(0, secretGroup - 1).reduce((n, g) => n + (g?.length ?? 0), 0);
      count += 1;
      return match.slice(0, at) + marker + match.slice(at + secret.length);
    });
    return { text: out, count };
  };
}

const hasDigit = (s: string): boolean => /[0-9]/.test(s);

// ---- PEM private keys ---------------------------------------------------------------------------

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

interface Span {
  readonly start: number;
  readonly end: number;
}

/**
 * The first match of `pattern` (global) at or after a position, for positions that only grow: a
 * search is repeated only when the position passes the last match, so the text is scanned once.
 */
function nextMatch(pattern: RegExp, text: string): (from: number) => Span | undefined {
  let searchedFrom = -1;
  let found: Span | undefined;
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
 * Redacts from each BEGIN … PRIVATE KEY header to its footer; when the footer is missing, the
 * header plus the base64 body lines that follow it (a truncated key is still a secret).
 */
const pemPass: Pass = (text) => {
  if (!text.includes('PRIVATE KEY')) return { text, count: 0 };
  const marker = redactionMarker('private-key');
  let out = '';
  let last = 0;
  let count = 0;
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
    out += text.slice(last, start) + marker;
    last = end;
    count += 1;
    PEM_BEGIN.lastIndex = end;
  }
  return count === 0 ? { text, count } : { text: out + text.slice(last), count };
};

// ---- key = value assignments --------------------------------------------------------------------

/** Words that make a key sensitive; each hit is checked against the whole key below. */
const KEY_WORD = /pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key|auth[_-]?key/gi;
const KEY_CHAR = /[A-Za-z0-9_.-]/;
const MAX_KEY = 64;
/** Separator and value right after a key: `=`, `:`, optional quotes around the key's end. */
const ASSIGNMENT_VALUE = /["']?[ \t]{0,4}[:=][ \t]{0,4}(?:"([^"\r\n]{1,512})"|'([^'\r\n]{1,512})'|([^\s"'`&,;<>(){}[\]]{3,512}))/y;

/** The kind a key names, or undefined when it is not a secret's key (max_tokens, tokenizer, PWD). */
function keyKind(key: string): RedactionKind | undefined {
  // camelCase → snake, then segments: apiKey → api_key, clientSecret → client_secret.
  const segments = key
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((s) => s.length > 0);
  const joined = segments.join('_');
  if (/aws_secret(?:_access)?_key|secret_access_key/.test(joined)) return 'aws-secret-access-key';
  if (segments.some((s) => /pass(?:word|wd|phrase)/.test(s))) return 'password';
  if (segments.some((s) => s.includes('secret'))) return 'secret';
  if (segments.some((s) => s.endsWith('token'))) return 'token';
  for (let i = 0; i < segments.length; i++) {
    const s = segments[i] ?? '';
    if (s === 'apikey' || s === 'accesskey' || s === 'privatekey' || s === 'accountkey' || s === 'authkey') return 'api-key';
    if (['api', 'access', 'private', 'account', 'auth'].includes(s) && segments[i + 1] === 'key') return 'api-key';
  }
  return undefined;
}

const assignmentPass: Pass = (text) => {
  let out = '';
  let last = 0;
  let count = 0;
  KEY_WORD.lastIndex = 0;
  for (let m = KEY_WORD.exec(text); m; m = KEY_WORD.exec(text)) {
    // Extend the hit to the whole key (bounded both ways).
    let keyStart = m.index;
    while (keyStart > last && m.index - keyStart < MAX_KEY && KEY_CHAR.test(text.charAt(keyStart - 1))) keyStart -= 1;
    let keyEnd = m.index + m[0].length;
    while (keyEnd < text.length && keyEnd - keyStart < MAX_KEY && KEY_CHAR.test(text.charAt(keyEnd))) keyEnd += 1;
    const before = keyStart > 0 ? text.charAt(keyStart - 1) : '';
    // Not a key: a path component (/etc/passwd: …), or a run longer than MAX_KEY (not judged).
    if (before === '/' || before === '\\' || KEY_CHAR.test(before)) {
      KEY_WORD.lastIndex = Math.max(KEY_WORD.lastIndex, keyEnd);
      continue;
    }
    ASSIGNMENT_VALUE.lastIndex = keyEnd;
    const v = ASSIGNMENT_VALUE.exec(text);
    const key = text.slice(keyStart, keyEnd);
    const kind = v ? keyKind(key) : undefined;
    if (!v || !kind) {
      KEY_WORD.lastIndex = Math.max(KEY_WORD.lastIndex, keyEnd);
      continue;
    }
    const value = v[1] ?? v[2] ?? v[3] ?? '';
    const valueEnd = ASSIGNMENT_VALUE.lastIndex - (v[3] === undefined ? 1 : 0);
    const valueStart = valueEnd - value.length;
    if (!value.startsWith(MARKER_PREFIX)) {
      out += text.slice(last, valueStart) + redactionMarker(kind);
      last = valueEnd;
      count += 1;
    }
    KEY_WORD.lastIndex = ASSIGNMENT_VALUE.lastIndex;
  }
  return count === 0 ? { text, count } : { text: out + text.slice(last), count };
};

// ---- the passes, most specific first --------------------------------------------------------------

/** Boundary: not preceded by a character that could continue a token. */
const B = '(?<![A-Za-z0-9_-])';
/** Boundary after a token. */
const E = '(?![A-Za-z0-9_-])';

const PASSES: readonly Pass[] = [
  pemPass,
  // A JSON service-account key whose PEM footer was cut off is caught by pemPass's header rule.
  regexPass('jwt', new RegExp(`${B}eyJ[A-Za-z0-9_-]{8,8192}\\.[A-Za-z0-9_-]{4,16384}\\.[A-Za-z0-9_-]{0,8192}`, 'g')),
  regexPass('aws-access-key-id', /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])/g),
  regexPass(
    'aws-secret-access-key',
    /((?:aws_?)?secret_?(?:access_?)?key["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    2,
  ),
  regexPass('google-api-key', new RegExp(`${B}AIza[0-9A-Za-z_-]{35}${E}`, 'g')),
  regexPass('google-oauth-token', new RegExp(`${B}ya29\\.[0-9A-Za-z_-]{20,2048}`, 'g')),
  regexPass('google-oauth-client-secret', new RegExp(`${B}GOCSPX-[0-9A-Za-z_-]{20,64}`, 'g')),
  regexPass('github-token', new RegExp(`${B}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{40,251})${E}`, 'g')),
  regexPass('gitlab-token', new RegExp(`${B}(?:glpat|glptt|gldt|glrt|glcbt|glsoat)-[A-Za-z0-9_-]{20,128}`, 'g')),
  regexPass('slack-token', new RegExp(`${B}(?:xox[baprs]|xapp)-[A-Za-z0-9-]{10,250}`, 'g')),
  regexPass('slack-webhook', /(https:\/\/hooks\.slack\.com\/services\/)([A-Za-z0-9/_-]{20,200})/g, 2),
  regexPass('anthropic-key', new RegExp(`${B}sk-ant-[a-z0-9]{2,16}-[A-Za-z0-9_-]{20,400}`, 'g')),
  regexPass('openai-key', new RegExp(`${B}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,400}`, 'g'), undefined, hasDigit),
  regexPass('stripe-key', new RegExp(`${B}(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,247}|${B}whsec_[A-Za-z0-9]{24,128}`, 'g')),
  regexPass('npm-token', new RegExp(`${B}npm_[A-Za-z0-9]{36}${E}`, 'g')),
  regexPass('huggingface-token', new RegExp(`${B}hf_[A-Za-z]{34}${E}`, 'g')),
  regexPass('sendgrid-key', new RegExp(`${B}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${E}`, 'g')),
  regexPass('twilio-key', /(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])/g),
  regexPass('digitalocean-token', new RegExp(`${B}do[por]_v1_[a-f0-9]{64}${E}`, 'g')),
  regexPass('azure-key', /((?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([^;\s"']{8,1024})/g, 2),
  regexPass('azure-sas-signature', /([?&]sig=)([A-Za-z0-9%+/=]{16,512})/g, 2),
  // scheme://user:password@host: the user name stays, the password goes.
  regexPass('url-password', /((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s:/@[\]]{0,128}:)([^\s/@]{1,256})(?=@)/g, 2),
  regexPass(
    'authorization',
    /((?<![A-Za-z0-9_-])(?:proxy-)?authorization["']?[ \t]{0,4}[:=][ \t]{0,4}["']?(?:(?:Bearer|Basic|Token|Digest|Bot|ApiKey|Negotiate|AWS4-HMAC-SHA256)[ \t]{1,4})?)([^\s"'<>]{1,4096})/gi,
    2,
  ),
  regexPass('bearer-token', /((?<![A-Za-z0-9_-])Bearer[ \t]{1,4})([A-Za-z0-9._~+/-]{16,4096}=*)/g, 2, hasDigit),
  assignmentPass,
];

/**
 * Replaces the secrets in `text` with `[REDACTED:kind]` markers. Linear in the length of `text`;
 * redacting an already redacted text changes nothing.
 */
export function redactSecrets(text: string): RedactionResult {
  let current = text;
  let count = 0;
  for (const pass of PASSES) {
    const r = pass(current);
    current = r.text;
    count += r.count;
  }
  return { text: current, count };
}
