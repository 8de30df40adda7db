/**
 * What redaction finds and writes: the kinds of secret, a secret's place in a text, the marker
 * that stands in for it, and how the findings of the rules are merged.
 */

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

/** Where a secret is in a text (UTF-16 offsets, end exclusive) and what it is. */
export interface SecretSpan {
  readonly start: number;
  readonly end: number;
  readonly kind: RedactionKind;
}

export const MARKER_PREFIX = '[REDACTED:';

/** The fixed text that stands in for a secret of `kind`. */
export function redactionMarker(kind: RedactionKind): string {
  return `${MARKER_PREFIX}${kind}]`;
}

/** One rule: the secrets it finds in a text, in order, not overlapping one another. */
export type SecretFinder = (text: string) => SecretSpan[];


/**
 * Joins the findings of a later rule into those of earlier ones (both sorted, each free of
 * overlaps): overlapping findings become one, named by the earlier rule.
 */
export function mergeSpans(earlier: readonly SecretSpan[], later: readonly SecretSpan[]): SecretSpan[] {
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
