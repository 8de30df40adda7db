/**
 * The rules, most specific first, and the one call that runs them all over a text. A rule is a
 * function from a text to the secrets in it; most are a global regex whose capture groups say
 * which part is the secret (the key, scheme, user name or command around it stays).
 */
import { assignmentRule } from './assignment-rule.js';
import { COMMAND_FLAG_RULES, commandFlagRule, secretFlagRule } from './flag-rules.js';
import { pemRule } from './pem-rule.js';
import { MARKER_PREFIX, mergeSpans, type RedactionKind, type SecretFinder, type SecretSpan } from './secret-span.js';

/**
 * A rule from a global regex. `secretGroups` name the capture groups that may hold the secret (the
 * first that took part in the match is it); everything else in the match is kept. Without them the
 * whole match is the secret.
 */
function regexRule(kind: RedactionKind, pattern: RegExp, secretGroups?: readonly number[], accept?: (secret: string) => boolean): SecretFinder {
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

/** Boundary: not preceded by a character that could continue a token. */
const B = '(?<![A-Za-z0-9_-])';
/** Boundary after a token. */
const E = '(?![A-Za-z0-9_-])';

const RULES: readonly SecretFinder[] = [
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

/** Where the secrets are in `text`: sorted, not overlapping. Linear in the length of `text`. */
export function findSecrets(text: string): SecretSpan[] {
  let spans: SecretSpan[] = [];
  for (const rule of RULES) spans = mergeSpans(spans, rule(text));
  return spans;
}
