/**
 * `key = value` and `"key": "value"` assignments whose key names a secret (password, secret,
 * token, api_key … as a whole segment: max_tokens, tokenizer and PWD are not), with the value
 * quoted or bare; a call or an index in code (`token = get_token()`) names where a secret comes
 * from and is kept.
 */
import { MARKER_PREFIX, type RedactionKind, type SecretFinder, type SecretSpan } from './secret-span.js';

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

export const assignmentRule: SecretFinder = (text) => {
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
