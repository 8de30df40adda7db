/**
 * Secret redaction for what a drive shows and records (screens, transcripts, recordings, audit
 * payloads). Pure: no Node API, no I/O. Each rule finds secrets in text and the secret gives way
 * to `[REDACTED:kind]`, keeping the key, scheme, user name or command around it so the reader still
 * sees what was there.
 *
 * Rules match the text as a person sees it: for styled or structured content the text is first
 * seen through a view (`visible-text.ts`) that sets escape sequences, tags and soft-wrap breaks
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
 */
import { htmlScreen, plainText, rewrite, screenRows, terminalStream, viewOffset, type RowBreak, type VisibleText } from './visible-text.js';

/** The kinds a marker can name, in the order the rules run. */
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
  'pypi-token',
  'dockerhub-token',
  'huggingface-token',
  'sendgrid-key',
  'twilio-key',
  'mailgun-key',
  'heroku-key',
  'shopify-token',
  'digitalocean-token',
  'databricks-token',
  'grafana-token',
  'sentry-token',
  'doppler-token',
  'linear-key',
  'vault-token',
  'telegram-bot-token',
  'age-secret-key',
  'azure-key',
  'azure-sas-signature',
  'azure-ad-client-secret',
  'docker-auth',
  'url-password',
  'authorization',
  'bearer-token',
  'basic-credentials',
  'netrc-password',
  'cli-password',
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

/** Where a secret is in a text (UTF-16 offsets, end exclusive) and what it is. */
export interface SecretSpan {
  readonly start: number;
  readonly end: number;
  readonly kind: RedactionKind;
}

const MARKER_PREFIX = '[REDACTED:';

/** The fixed text that stands in for a secret of `kind`. */
export function redactionMarker(kind: RedactionKind): string {
  return `${MARKER_PREFIX}${kind}]`;
}

/** One rule: the secrets it finds in a text, in order, not overlapping one another. */
type Finder = (text: string) => SecretSpan[];

/**
 * A rule from a global regex. `secretGroups` name the capture groups that may hold the secret (the
 * first that took part in the match is it); everything else in the match is kept. Without them the
 * whole match is the secret.
 */
function regexRule(kind: RedactionKind, pattern: RegExp, secretGroups?: readonly number[], accept?: (secret: string) => boolean): Finder {
  const re = secretGroups ? new RegExp(pattern.source, pattern.flags.includes('d') ? pattern.flags : `${pattern.flags}d`) : pattern;
  return (text) => {
    const spans: SecretSpan[] = [];
    re.lastIndex = 0;
    for (let m = re.exec(text); m; m = re.exec(text)) {
      if (m[0].length === 0) {
        re.lastIndex += 1;
        continue;
      }
      let start = m.index;
      let end = m.index + m[0].length;
      if (secretGroups) {
        const g = secretGroups.find((i) => m?.indices?.[i] !== undefined);
        const at = g === undefined ? undefined : m.indices?.[g];
        if (!at) continue;
        [start, end] = at;
      }
      const secret = text.slice(start, end);
      if (secret.length === 0 || secret.startsWith(MARKER_PREFIX) || (accept && !accept(secret))) continue;
      spans.push({ start, end, kind });
    }
    return spans;
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
const pemRule: Finder = (text) => {
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
  return orphans.length === 0 ? spans : merge(spans, orphans);
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

// ---- key = value assignments --------------------------------------------------------------------

/** Words that make a key sensitive; each hit is checked against the whole key below. */
const KEY_WORD = /pass(?:word|wd|phrase)|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|account[_-]?key|auth[_-]?key|client[_-]?key[_-]?data/gi;
const KEY_CHAR = /[A-Za-z0-9_.-]/;
const MAX_KEY = 64;
/** Separator and value right after a key: `=`, `:`, optional quotes around the key's end. */
const ASSIGNMENT_VALUE = /["']?[ \t]{0,4}[:=][ \t]{0,4}(?:"([^"\r\n]{1,4096})"|'([^'\r\n]{1,4096})'|([^\s"'`&,;<>(){}[\]]{3,512}))/y;
const BARE_VALUE_CHAR = /[^\s"'`&,;<>(){}[\]]/;
/** A bare value is followed this far (a kubeconfig's base64 key data is a few KiB). */
const MAX_BARE_VALUE = 65_536;

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
  if (/client_key_data/.test(joined)) return 'private-key';
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

const assignmentRule: Finder = (text) => {
  const spans: SecretSpan[] = [];
  let last = 0;
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
    let valueEnd = ASSIGNMENT_VALUE.lastIndex - (v[3] === undefined ? 1 : 0);
    const valueStart = valueEnd - value.length;
    if (v[3] !== undefined) {
      // A long bare value (base64 key data) is followed to its end, never cut at the regex bound.
      const limit = Math.min(text.length, valueStart + MAX_BARE_VALUE);
      while (valueEnd < limit && BARE_VALUE_CHAR.test(text.charAt(valueEnd))) valueEnd += 1;
    }
    // In code, `token = get_token()` or `api_key = os.environ["KEY"]` names where a secret comes
    // from: a call or an index, not the secret.
    const code = v[3] !== undefined && (text.charAt(valueEnd) === '(' || text.charAt(valueEnd) === '[');
    if (!value.startsWith(MARKER_PREFIX) && !code) spans.push({ start: valueStart, end: valueEnd, kind });
    last = valueEnd;
    KEY_WORD.lastIndex = Math.max(ASSIGNMENT_VALUE.lastIndex, valueEnd);
  }
  return spans;
};

// ---- command-line flags -------------------------------------------------------------------------

/** A flag's value: quoted, or a bare word that is not another flag, a redirection or a variable. */
const FLAG_VALUE = `(?:"([^"\\r\\n]{1,512})"|'([^'\\r\\n]{1,512})'|([^\\s"'<>|;&$\`(){}[\\]-][^\\s"'<>|;&\`]{0,511}))`;

/** Long flags that take a secret as their next argument (`--password X`, `-storepass X`). */
const SECRET_FLAG = new RegExp(`(?<![A-Za-z0-9_-])(-{1,2}[A-Za-z][A-Za-z0-9_-]{0,40})[ \\t]{1,4}${FLAG_VALUE}`, 'dg');
/** keytool-style passwords (single-dash, one word). */
const PASS_FLAG_NAMES = new Set(['pass', 'storepass', 'keypass', 'srcstorepass', 'deststorepass', 'srckeypass', 'destkeypass']);
/** `--token TOKEN` in a help text names a placeholder, not a secret. */
const METAVAR = /^[A-Z][A-Z0-9_]{0,31}$/;

/** The kind of secret a flag's next argument is, by the flag's last word (--password-stdin is not one). */
function flagKind(flag: string): RedactionKind | undefined {
  const name = flag.replace(/^-{1,2}/, '').toLowerCase();
  if (PASS_FLAG_NAMES.has(name)) return 'password';
  const words = name.split(/[-_]/).filter((w) => w.length > 0);
  const lastWord = words[words.length - 1] ?? '';
  const before = words[words.length - 2] ?? '';
  if (lastWord === 'password' || lastWord === 'passwd' || lastWord === 'passphrase') return 'password';
  if (lastWord === 'token') return 'token';
  if (lastWord === 'secret') return 'secret';
  if (lastWord === 'apikey' || (lastWord === 'key' && ['api', 'access', 'secret', 'auth'].includes(before))) return 'api-key';
  return undefined;
}

const secretFlagRule: Finder = (text) => {
  const spans: SecretSpan[] = [];
  SECRET_FLAG.lastIndex = 0;
  for (let m = SECRET_FLAG.exec(text); m; m = SECRET_FLAG.exec(text)) {
    const kind = flagKind(m[1] ?? '');
    const g = [2, 3, 4].find((i) => m?.indices?.[i] !== undefined);
    const at = g === undefined ? undefined : m.indices?.[g];
    if (!kind || !at) {
      // Only the flag was consumed: its value may be the next flag.
      SECRET_FLAG.lastIndex = m.index + (m[1]?.length ?? 1);
      continue;
    }
    const value = text.slice(at[0], at[1]);
    if (value.startsWith(MARKER_PREFIX) || (g === 4 && METAVAR.test(value))) continue;
    spans.push({ start: at[0], end: at[1], kind });
  }
  return spans;
};

/** How far after its command a flag still belongs to it (one command line). */
const MAX_COMMAND_LINE = 2048;

/** Line starts for positions that only grow: each newline is found once. */
class LineStarts {
  private start = 0;
  private next: number;
  constructor(private readonly text: string) {
    this.next = text.indexOf('\n');
  }

  of(pos: number): number {
    while (this.next !== -1 && this.next < pos) {
      this.start = this.next + 1;
      this.next = this.text.indexOf('\n', this.start);
    }
    return this.start;
  }
}

interface CommandFlagRule {
  readonly kind: RedactionKind;
  /** The command (global): a word, maybe after a path (`/usr/bin/mysql`). */
  readonly command: RegExp;
  /** The flag and its value (global, with indices); the secret is the first of `secretGroups` that matched. */
  readonly flag: RegExp;
  readonly secretGroups: readonly number[];
}

/** A command word: not inside another word; a path before it is fine. */
function command(words: string): RegExp {
  return new RegExp(`(?<![A-Za-z0-9_.-])(?:${words})(?![A-Za-z0-9_-])`, 'g');
}

/** A flag after whitespace, with its value (groups 1–3). */
function flag(source: string): RegExp {
  return new RegExp(`(?<=[ \\t])${source}${FLAG_VALUE}`, 'dg');
}

/**
 * A secret given as a short flag of one command (`mysql -pS3cret`, `curl -u user:pass`): the flag
 * counts when the command is on the same line before it (so `docker run -p 80:80` or `ps -u root`
 * stay as they are).
 */
function commandFlagRule(rule: CommandFlagRule): Finder {
  return (text) => {
    const ends: number[] = [];
    rule.command.lastIndex = 0;
    for (let m = rule.command.exec(text); m; m = rule.command.exec(text)) ends.push(m.index + m[0].length);
    if (ends.length === 0) return [];
    const lines = new LineStarts(text);
    const spans: SecretSpan[] = [];
    let k = -1;
    rule.flag.lastIndex = 0;
    for (let m = rule.flag.exec(text); m; m = rule.flag.exec(text)) {
      while (k + 1 < ends.length && (ends[k + 1] as number) <= m.index) k += 1;
      const commandEnd = ends[k];
      if (commandEnd === undefined || m.index - commandEnd > MAX_COMMAND_LINE || lines.of(m.index) > commandEnd) continue;
      const g = rule.secretGroups.find((i) => m?.indices?.[i] !== undefined);
      const at = g === undefined ? undefined : m.indices?.[g];
      if (!at || text.startsWith(MARKER_PREFIX, at[0])) continue;
      spans.push({ start: at[0], end: at[1], kind: rule.kind });
    }
    return spans;
  };
}

/** `user:password` after a flag, quoted or not: the user stays (groups 1–3 are the password). */
const USER_PASSWORD = `(?:"[^":\\r\\n]{0,128}:([^"\\r\\n]{1,256})"|'[^':\\r\\n]{0,128}:([^'\\r\\n]{1,256})'|[^\\s:"'%]{0,128}:([^\\s"']{1,256}))`;

const COMMAND_FLAG_RULES: readonly CommandFlagRule[] = [
  { kind: 'basic-credentials', command: command('curl'), flag: new RegExp(`(?<=[ \\t])(?:-[A-Za-z]{0,8}[uU]|--user|--proxy-user)(?:[ \\t]{1,4}|=)?${USER_PASSWORD}`, 'dg'), secretGroups: [1, 2, 3] },
  { kind: 'basic-credentials', command: command('(?:https?|xhs?)(?=[ \\t])'), flag: new RegExp(`(?<=[ \\t])(?:-a|--auth)(?:[ \\t]{1,4}|=)${USER_PASSWORD}`, 'dg'), secretGroups: [1, 2, 3] },
  { kind: 'basic-credentials', command: command('smbclient|rpcclient|smbcacls|smbget'), flag: new RegExp(`(?<=[ \\t])(?:-U|--user)(?:[ \\t]{1,4}|=)[^\\s%]{1,128}%([^\\s"']{1,256})`, 'dg'), secretGroups: [1] },
  { kind: 'cli-password', command: command('mysql|mysqldump|mysqladmin|mysqlimport|mysqlcheck|mysqlshow|mysqlslap|mysqlpump|mariadb|mariadb-dump|mariadb-admin'), flag: flag('-p'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('sshpass'), flag: flag('-p[ \\t]{0,4}'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('redis-cli|valkey-cli|keydb-cli'), flag: flag('(?:-a|--pass)[ \\t]{1,4}'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('(?:docker|podman|nerdctl|buildah|helm[ \\t]{1,4}registry|oras)[ \\t]{1,4}login'), flag: flag('-p[ \\t]{1,4}'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('ldapsearch|ldapadd|ldapmodify|ldapdelete|ldapmodrdn|ldappasswd|ldapwhoami|ldapcompare|ldapexop'), flag: flag('-w[ \\t]{1,4}'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('sqlcmd|bcp|osql'), flag: flag('-P[ \\t]{0,4}'), secretGroups: [1, 2, 3] },
  { kind: 'cli-password', command: command('mongo|mongosh|mongodump|mongorestore|mongoexport|mongoimport|mongostat|mongotop'), flag: flag('-p[ \\t]{1,4}'), secretGroups: [1, 2, 3] },
  { kind: 'aws-secret-access-key', command: command('aws[ \\t]{1,4}configure[ \\t]{1,4}set'), flag: flag('(?:[A-Za-z0-9_-]{1,64}\\.)?(?:aws_secret_access_key|aws_session_token)[ \\t]{1,4}'), secretGroups: [1, 2, 3] },
];

// ---- the rules, most specific first ---------------------------------------------------------------

/** Boundary: not preceded by a character that could continue a token. */
const B = '(?<![A-Za-z0-9_-])';
/** Boundary after a token. */
const E = '(?![A-Za-z0-9_-])';

const RULES: readonly Finder[] = [
  pemRule,
  // A JSON service-account key whose PEM footer was cut off is caught by pemRule's header rule.
  regexRule('jwt', new RegExp(`${B}eyJ[A-Za-z0-9_-]{8,8192}\\.[A-Za-z0-9_-]{4,16384}\\.[A-Za-z0-9_-]{0,8192}`, 'g')),
  regexRule('aws-access-key-id', /(?<![A-Z0-9])(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AIPA|ANPA|ANVA|AROA|APKA|ASCA)[A-Z0-9]{16}(?![A-Z0-9])/g),
  regexRule('aws-secret-access-key', /((?:aws_?)?secret_?(?:access_?)?key["']?[ \t]{0,4}[:=][ \t]{0,4}["']?)([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi, [2]),
  regexRule('google-api-key', new RegExp(`${B}AIza[0-9A-Za-z_-]{35}${E}`, 'g')),
  regexRule('google-oauth-token', new RegExp(`${B}ya29\\.[0-9A-Za-z_-]{20,2048}`, 'g')),
  regexRule('google-oauth-client-secret', new RegExp(`${B}GOCSPX-[0-9A-Za-z_-]{20,64}`, 'g')),
  regexRule('github-token', new RegExp(`${B}(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{40,251})${E}`, 'g')),
  regexRule('gitlab-token', new RegExp(`${B}(?:glpat|glptt|gldt|glrt|glcbt|glsoat|glft|glimt|glagent|gloas|glffct)-[A-Za-z0-9_.-]{20,300}`, 'g')),
  regexRule('slack-token', new RegExp(`${B}(?:xox[baprse]|xapp)-[A-Za-z0-9-]{10,250}`, 'g')),
  regexRule('slack-webhook', /(https:\/\/hooks\.slack\.com\/(?:services|workflows|triggers)\/)([A-Za-z0-9/_-]{20,200})/g, [2]),
  regexRule('anthropic-key', new RegExp(`${B}sk-ant-[a-z0-9]{2,16}-[A-Za-z0-9_-]{20,400}`, 'g')),
  regexRule('openai-key', new RegExp(`${B}sk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,400}`, 'g'), undefined, hasDigit),
  regexRule('stripe-key', new RegExp(`${B}(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,247}|${B}whsec_[A-Za-z0-9]{24,128}`, 'g')),
  regexRule('npm-token', new RegExp(`${B}npm_[A-Za-z0-9]{36}${E}`, 'g')),
  regexRule('pypi-token', new RegExp(`${B}pypi-AgE[A-Za-z0-9_-]{50,1000}`, 'g')),
  regexRule('dockerhub-token', new RegExp(`${B}dckr_(?:pat|oat)_[A-Za-z0-9_-]{20,64}`, 'g')),
  regexRule('huggingface-token', new RegExp(`${B}(?:hf_|api_org_)[A-Za-z]{34}${E}`, 'g')),
  regexRule('sendgrid-key', new RegExp(`${B}SG\\.[A-Za-z0-9_-]{22}\\.[A-Za-z0-9_-]{43}${E}`, 'g')),
  regexRule('twilio-key', /(?<![A-Za-z0-9])SK[0-9a-f]{32}(?![A-Za-z0-9])/g),
  regexRule('mailgun-key', new RegExp(`${B}key-[0-9a-f]{32}${E}`, 'g')),
  regexRule('heroku-key', new RegExp(`${B}HRKU-[A-Za-z0-9_-]{40,80}`, 'g')),
  regexRule('shopify-token', new RegExp(`${B}shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}${E}`, 'g')),
  regexRule('digitalocean-token', new RegExp(`${B}do[por]_v1_[a-f0-9]{64}${E}`, 'g')),
  regexRule('databricks-token', new RegExp(`${B}dapi[a-f0-9]{32}(?:-[0-9])?${E}`, 'g')),
  regexRule('grafana-token', new RegExp(`${B}(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}|glc_[A-Za-z0-9+/]{32,400}={0,3})`, 'g')),
  regexRule('sentry-token', new RegExp(`${B}(?:sntryu_[a-f0-9]{64}|sntrys_[A-Za-z0-9+/=_]{60,600})`, 'g')),
  regexRule('doppler-token', new RegExp(`${B}dp\\.(?:pt|st|ct|sa|scim|audit)\\.[A-Za-z0-9]{40,44}${E}`, 'g')),
  regexRule('linear-key', new RegExp(`${B}lin_(?:api|oauth)_[A-Za-z0-9]{40}${E}`, 'g')),
  regexRule('vault-token', new RegExp(`${B}hv[sbr]\\.[A-Za-z0-9_-]{24,400}`, 'g')),
  regexRule('telegram-bot-token', /(?<![A-Za-z0-9_:-])[0-9]{8,10}:AA[A-Za-z0-9_-]{33}(?![A-Za-z0-9_-])/g),
  regexRule('age-secret-key', /(?<![A-Za-z0-9_-])AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}/g),
  regexRule('azure-key', /((?<![A-Za-z0-9])(?:AccountKey|SharedAccessKey|SharedAccessSignature)=)([^;\s"']{8,1024})/g, [2]),
  regexRule('azure-sas-signature', /([?&]sig=)([A-Za-z0-9%+/=]{16,512})/g, [2]),
  regexRule('azure-ad-client-secret', /(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.]{3}[0-9]Q~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])/g),
  // ~/.docker/config.json: base64 of user:password.
  regexRule('docker-auth', /("auth"[ \t]{0,4}:[ \t]{0,4}")([A-Za-z0-9+/=]{8,4096})(?=")/g, [2]),
  // scheme://user:password@host: the user name stays, the password goes (an unencoded @ in it too).
  regexRule('url-password', /((?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{1,31}:\/\/[^\s:/@[\]]{0,128}:)([^\s/]{1,256})(?=@)/g, [2]),
  regexRule(
    'authorization',
    /((?<![A-Za-z0-9_-])(?:proxy-)?authorization["']?[ \t]{0,4}[:=][ \t]{0,4}["']?(?:(?:Bearer|Basic|Token|Digest|Bot|ApiKey|Negotiate|AWS4-HMAC-SHA256)[ \t]{1,4})?)([^\s"'<>]{1,4096})/gi,
    [2],
  ),
  regexRule('bearer-token', /((?<![A-Za-z0-9_-])Bearer[ \t]{1,4})([A-Za-z0-9._~+/-]{16,4096}=*)/g, [2], hasDigit),
  ...COMMAND_FLAG_RULES.map(commandFlagRule),
  // ~/.netrc: machine HOST login USER [account A] password SECRET (one line or several); the login
  // keeps prose ("the machine room password policy") out.
  regexRule('netrc-password', /((?<![A-Za-z0-9_-])(?:machine[ \t]{1,16}[^\s]{1,256}|default)(?:[ \t\r\n]{1,256}(?:login|account|port)[ \t]{1,16}[^\s]{1,256}){1,3}[ \t\r\n]{1,256}password[ \t]{1,16})([^\s]{1,256})/g, [2]),
  // openssl -pass pass:SECRET (also -passin/-passout).
  regexRule('cli-password', /((?<![A-Za-z0-9_-])-(?:pass|passin|passout)[ \t]{1,4}pass:)([^\s]{1,512})/g, [2]),
  secretFlagRule,
  assignmentRule,
];

/**
 * Joins the findings of a later rule into those of earlier ones (both sorted, each free of
 * overlaps): overlapping findings become one, named by the earlier rule.
 */
function merge(earlier: readonly SecretSpan[], later: readonly SecretSpan[]): SecretSpan[] {
  if (later.length === 0) return earlier as SecretSpan[];
  if (earlier.length === 0) return later as SecretSpan[];
  const out: SecretSpan[] = [];
  let i = 0;
  let j = 0;
  let cur: { start: number; end: number; kind: RedactionKind; early: boolean } | undefined;
  while (i < earlier.length || j < later.length) {
    const a = earlier[i];
    const b = later[j];
    const takeEarlier = b === undefined || (a !== undefined && a.start <= b.start);
    const next = takeEarlier ? (a as SecretSpan) : (b as SecretSpan);
    if (takeEarlier) i += 1;
    else j += 1;
    if (cur && next.start < cur.end) {
      cur.end = Math.max(cur.end, next.end);
      if (takeEarlier && !cur.early) {
        cur.kind = next.kind;
        cur.early = true;
      }
      continue;
    }
    if (cur) out.push({ start: cur.start, end: cur.end, kind: cur.kind });
    cur = { start: next.start, end: next.end, kind: next.kind, early: takeEarlier };
  }
  if (cur) out.push({ start: cur.start, end: cur.end, kind: cur.kind });
  return out;
}

/** Where the secrets are in `text`: sorted, not overlapping. Linear in the length of `text`. */
export function findSecrets(text: string): SecretSpan[] {
  let spans: SecretSpan[] = [];
  for (const rule of RULES) spans = merge(spans, rule(text));
  return spans;
}

// ---- redacting what a drive shows -------------------------------------------------------------------

/** A control-string payload shorter than this cannot hold a key and a value (most are colours, modes or nothing). */
const MIN_PAYLOAD = 6;

/** Redacts the secrets seen through `view`; control-string payloads are redacted on their own. */
function redactView(view: VisibleText, chunkStarts?: readonly number[], leading?: { readonly secret: LeadingSecret; readonly exact: boolean }): { readonly chunks: string[]; readonly count: number } {
  let spans = findSecrets(view.text);
  if (leading) {
    const end = leadingEnd(view.text, leading.secret, leading.exact);
    if (end > 0) spans = merge([{ start: 0, end, kind: leading.secret.kind }], spans);
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
 * Terminal output (or typed input) that may carry escape sequences: matched on the text they
 * draw, redacted in the stream itself.
 */
export function redactTerminalText(text: string): RedactionResult {
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
