/**
 * Secret redaction: a corpus of realistic-looking fake secrets in the contexts they show up in on
 * a terminal (env listings, config files, curl commands, JSON, logs), ordinary text that must stay
 * as it is, and adversarial inputs that would make a backtracking pattern quadratic.
 */
import { describe, expect, it } from 'vitest';
import { REDACTION_KINDS, redactSecrets, redactTerminalChunks, redactTerminalText, redactionMarker, type RedactionKind } from '../../lib/policy/redact.js';
import { b62 } from '../fake-secrets.js';

// Fake values, assembled so that no line of this file is itself a scannable token.
const hex = (n: number, seed = 3): string => {
  let x = seed;
  let s = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    s += '0123456789abcdef'[x % 16];
  }
  return s;
};
const PEM_BODY = [b62(64, 1), b62(64, 2), b62(64, 3), `${b62(40, 4)}==`].join('\n');

interface Case {
  readonly name: string;
  readonly input: string;
  readonly kind: RedactionKind;
  /** The secret text that must be gone. */
  readonly secret: string;
  /** Text around it that must stay. */
  readonly keep?: readonly string[];
}

const awsKeyId = `AKIA${b62(16, 11).toUpperCase().replace(/[^A-Z0-9]/g, 'Q')}`;
const awsSecret = `${b62(20, 12)}/${b62(19, 13)}`;
const jwt = `eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkphbmUifQ.${b62(43, 14)}`;
const ghp = `ghp_${b62(36, 15)}`;
const pat = `github_pat_11${b62(20, 16)}_${b62(59, 17)}`;
const glpat = `glpat-${b62(20, 18)}`;
const slack = `xoxb-${'1234567890'}-${'1234567890123'}-${b62(24, 19)}`;
const openai = `sk-proj-${b62(48, 20)}_${b62(20, 21)}`;
const openaiLegacy = `sk-${b62(20, 22)}T3BlbkFJ${b62(20, 23)}`;
const anthropic = `sk-ant-api03-${b62(80, 24)}-${b62(12, 25)}AA`;
const stripe = `sk_live_${b62(24, 26)}`;
const stripeRestricted = `rk_live_${b62(24, 27)}`;
const npm = `npm_${b62(36, 28)}`;
const googleKey = `AIza${b62(35, 29)}`;
const azureKey = `${b62(86, 30)}==`;
const hf = `hf_${b62(34, 31).replace(/[0-9]/g, 'x')}`;
const sendgrid = `SG.${b62(22, 32)}.${b62(43, 33)}`;
const twilio = `SK${hex(32, 34)}`;
const doToken = `dop_v1_${hex(64, 35)}`;
const basic = Buffer.from('admin:correct horse battery').toString('base64');

const CORPUS: readonly Case[] = [
  { name: 'AWS access key id in an env listing', input: `AWS_ACCESS_KEY_ID=${awsKeyId}`, kind: 'aws-access-key-id', secret: awsKeyId, keep: ['AWS_ACCESS_KEY_ID='] },
  { name: 'AWS secret key in ~/.aws/credentials', input: `[default]\naws_secret_access_key = ${awsSecret}\n`, kind: 'aws-secret-access-key', secret: awsSecret, keep: ['aws_secret_access_key = '] },
  { name: 'AWS secret key exported', input: `export AWS_SECRET_ACCESS_KEY="${awsSecret}"`, kind: 'aws-secret-access-key', secret: awsSecret, keep: ['export AWS_SECRET_ACCESS_KEY='] },
  {
    name: 'PEM RSA private key',
    input: `$ cat id_rsa\n-----BEGIN RSA PRIVATE KEY-----\n${PEM_BODY}\n-----END RSA PRIVATE KEY-----\n$ `,
    kind: 'private-key',
    secret: b62(64, 2),
    keep: ['$ cat id_rsa\n', '\n$ '],
  },
  { name: 'OpenSSH private key cut off by the screen', input: `-----BEGIN OPENSSH PRIVATE KEY-----\n${b62(70, 5)}\n${b62(70, 6)}`, kind: 'private-key', secret: b62(70, 6) },
  {
    name: 'GCP service-account JSON',
    input: `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\\n${b62(64, 8)}\\n${b62(64, 9)}\\n-----END PRIVATE KEY-----\\n", "client_email": "svc@proj.iam.gserviceaccount.com"}`,
    kind: 'private-key',
    secret: b62(64, 9),
    keep: ['"client_email": "svc@proj.iam.gserviceaccount.com"'],
  },
  { name: 'Google API key in a URL', input: `curl "https://maps.googleapis.com/maps/api/geocode/json?key=${googleKey}&address=x"`, kind: 'google-api-key', secret: googleKey, keep: ['&address=x'] },
  { name: 'GitHub classic token', input: `git clone https://${ghp}@github.com/acme/app.git`, kind: 'github-token', secret: ghp, keep: ['@github.com/acme/app.git'] },
  { name: 'GitHub OAuth token', input: `GH_TOKEN=gho_${b62(36, 40)}`, kind: 'github-token', secret: `gho_${b62(36, 40)}` },
  { name: 'GitHub fine-grained token', input: `token: ${pat}`, kind: 'github-token', secret: pat },
  { name: 'GitLab personal access token', input: `glab auth login --token ${glpat}`, kind: 'gitlab-token', secret: glpat, keep: ['glab auth login --token '] },
  { name: 'Slack bot token', input: `SLACK_BOT_TOKEN=${slack}`, kind: 'slack-token', secret: slack },
  { name: 'OpenAI project key', input: `OPENAI_API_KEY=${openai}`, kind: 'openai-key', secret: openai, keep: ['OPENAI_API_KEY='] },
  { name: 'OpenAI legacy key', input: `openai.api_key = "${openaiLegacy}"`, kind: 'openai-key', secret: openaiLegacy },
  { name: 'Anthropic key', input: `ANTHROPIC_API_KEY=${anthropic}`, kind: 'anthropic-key', secret: anthropic },
  { name: 'Stripe secret key', input: `Stripe.api_key = '${stripe}'`, kind: 'stripe-key', secret: stripe },
  { name: 'Stripe restricted key', input: `STRIPE_KEY ${stripeRestricted}`, kind: 'stripe-key', secret: stripeRestricted },
  { name: 'JWT in a log line', input: `[auth] session=${jwt} user=42`, kind: 'jwt', secret: jwt, keep: [' user=42'] },
  { name: 'Bearer header in a curl command', input: `curl -H "Authorization: Bearer ${b62(40, 41)}" https://api.example.com/v1`, kind: 'authorization', secret: b62(40, 41), keep: ['Authorization: Bearer ', 'https://api.example.com/v1'] },
  { name: 'Basic auth header', input: `> Authorization: Basic ${basic}\n> Accept: */*`, kind: 'authorization', secret: basic, keep: ['Authorization: Basic ', '> Accept: */*'] },
  { name: 'Bearer token without a header', input: `using Bearer ${b62(32, 42)} for the call`, kind: 'bearer-token', secret: b62(32, 42), keep: [' for the call'] },
  { name: 'Postgres URL with a password', input: 'DATABASE_URL=postgres://app:S3cr3t-pa55@db.internal:5432/app', kind: 'url-password', secret: 'S3cr3t-pa55', keep: ['postgres://app:', '@db.internal:5432/app'] },
  { name: 'Redis URL with only a password', input: 'redis://:hunter2hunter2@cache:6379/0', kind: 'url-password', secret: 'hunter2hunter2', keep: ['@cache:6379/0'] },
  { name: 'npm token in .npmrc', input: `//registry.npmjs.org/:_authToken=${npm}`, kind: 'npm-token', secret: npm },
  {
    name: 'Azure storage connection string',
    input: `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${azureKey};EndpointSuffix=core.windows.net`,
    kind: 'azure-key',
    secret: azureKey,
    keep: ['AccountName=acme;AccountKey=', ';EndpointSuffix=core.windows.net'],
  },
  { name: 'password= assignment', input: 'mysql --user=root --password=Tr0ub4dor&3', kind: 'password', secret: 'Tr0ub4dor', keep: ['--password='] },
  { name: 'passwd: in YAML', input: 'db:\n  passwd: "correct horse battery staple"\n', kind: 'password', secret: 'correct horse battery staple', keep: ['  passwd: "'] },
  { name: 'secret= in a properties file', input: 'app.client.secret=a9f3kd0s8f7g6h5j', kind: 'secret', secret: 'a9f3kd0s8f7g6h5j', keep: ['app.client.secret='] },
  { name: 'token= in a query string', input: 'GET /hook?token=7d1f0c2b9e8a&x=1 HTTP/1.1', kind: 'token', secret: '7d1f0c2b9e8a', keep: ['&x=1 HTTP/1.1'] },
  { name: 'api_key in JSON', input: '{"api_key": "k-29fj20fj20fj29", "region": "eu"}', kind: 'api-key', secret: 'k-29fj20fj20fj29', keep: ['"region": "eu"'] },
  { name: 'camelCase apiKey', input: 'const client = new Client({ apiKey: process_env_KEY_x9 })', kind: 'api-key', secret: 'process_env_KEY_x9' },
  { name: 'Hugging Face token', input: `HF_TOKEN ${hf}`, kind: 'huggingface-token', secret: hf },
  { name: 'SendGrid key', input: `sendgrid ${sendgrid}`, kind: 'sendgrid-key', secret: sendgrid },
  { name: 'Twilio API key', input: `twilio api key ${twilio}`, kind: 'twilio-key', secret: twilio },
  { name: 'DigitalOcean token', input: `doctl auth init -t ${doToken}`, kind: 'digitalocean-token', secret: doToken },
  { name: 'Slack webhook', input: `https://hooks.slack.com/services/T0000ABCD/B0000EFGH/${b62(24, 43)}`, kind: 'slack-webhook', secret: b62(24, 43) },
];

describe('redactSecrets: the corpus', () => {
  it('covers at least twenty formats', () => {
    expect(new Set(CORPUS.map((c) => c.kind)).size).toBeGreaterThanOrEqual(20);
  });

  it.each(CORPUS)('$name', ({ input, kind, secret, keep }) => {
    const r = redactSecrets(input);
    expect(r.text).not.toContain(secret);
    expect(r.text).toContain(redactionMarker(kind));
    expect(r.count).toBeGreaterThanOrEqual(1);
    for (const k of keep ?? []) expect(r.text).toContain(k);
  });

  it('names only known kinds', () => {
    const all = redactSecrets(CORPUS.map((c) => c.input).join('\n')).text;
    for (const m of all.matchAll(/\[REDACTED:([a-z0-9-]+)\]/g)) expect(REDACTION_KINDS).toContain(m[1]);
  });

  it('redacts the whole corpus at once and counts each secret', () => {
    const r = redactSecrets(CORPUS.map((c) => c.input).join('\n'));
    for (const c of CORPUS) expect(r.text).not.toContain(c.secret);
    expect(r.count).toBeGreaterThanOrEqual(CORPUS.length);
  });

  it('is idempotent: a redacted text has nothing left to redact', () => {
    for (const c of CORPUS) {
      const once = redactSecrets(c.input);
      expect(redactSecrets(once.text)).toEqual({ text: once.text, count: 0 });
    }
  });

  it('gives a precise result for a typical env listing', () => {
    const r = redactSecrets(`HOME=/root\nGITHUB_TOKEN=${ghp}\nPATH=/usr/bin\n`);
    expect(r).toEqual({ text: 'HOME=/root\nGITHUB_TOKEN=[REDACTED:github-token]\nPATH=/usr/bin\n', count: 1 });
  });
});

describe('redactSecrets: ordinary text stays as it is', () => {
  const NEGATIVES: ReadonlyArray<readonly [string, string]> = [
    ['prose', 'The quick brown fox jumps over the lazy dog. Tokens are counted per request.'],
    ['a git SHA', 'commit 2397d74e1c6a5b0f9d8e7c6b5a4f3e2d1c0b9a87\nAuthor: Dev <dev@example.com>'],
    ['short SHAs in a log', '2397d74 Pane death through a window subscription\n98c876d tools/ in the build'],
    ['a sha256 digest', `sha256:${hex(64, 50)}  node-v20.tar.gz`],
    ['UUIDs', 'request 3f2b8c1e-9a4d-4e7b-8c2f-1d0e9b8a7c6d and 123e4567-e89b-12d3-a456-426614174000'],
    ['a password prompt', '[sudo] password for dev: '],
    ['a path to passwd', 'cat: /etc/passwd: Permission denied'],
    ['token counts', 'max_tokens=4096 num_tokens: 512 tokenizer=cl100k'],
    ['PWD in env', 'PWD=/home/dev/src\nOLDPWD=/home/dev'],
    ['URLs without credentials', 'https://example.com:8443/path?q=1 ssh://git@github.com/acme/app.git git@github.com:acme/app.git'],
    ['an e-mail address', 'mail dev@example.com about it'],
    ['a public key', '-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----'],
    ['a certificate', '-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIEAgAAuTANBgkqhkiG9w0BAQUFADBa\n-----END CERTIFICATE-----'],
    ['hyphenated words', 'disk-usage-report-for-the-whole-cluster and task-runner-configuration-file'],
    ['base64 that is not a JWT', 'aGVsbG8gd29ybGQgdGhpcyBpcyBqdXN0IGJhc2U2NA=='],
    ['a shell prompt and ls', 'dev@host:~/src$ ls -la\ntotal 48\ndrwxr-xr-x  5 dev dev 4096 Nov 30 12:00 .'],
    ['npm words', 'npm_config_cache=/tmp/npm npm_lifecycle_event=test'],
    ['a Stripe publishable key', `pk_live_${b62(24, 51)}`],
    ['an AWS-looking word too short', 'AKIA1234 is not a key id'],
    ['Basic as a word', 'Basic configuration is described below'],
  ];
  it.each(NEGATIVES)('%s', (_name, input) => {
    expect(redactSecrets(input)).toEqual({ text: input, count: 0 });
  });

  it('leaves an empty string alone', () => {
    expect(redactSecrets('')).toEqual({ text: '', count: 0 });
  });
});

describe('redactSecrets: linear time on adversarial input', () => {
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const ADVERSARIAL: ReadonlyArray<readonly [string, string]> = [
    ['one long word', fill('a')],
    ['long base64 run', fill(b62(64, 60))],
    ['hex run', fill(hex(64, 61))],
    ['spaces', fill(' ')],
    ['PEM headers without a footer', fill('-----BEGIN RSA PRIVATE KEY-----')],
    ['PEM headers, one line each', fill('-----BEGIN PRIVATE KEY-----\n')],
    ['PEM footers', fill('-----END PRIVATE KEY-----')],
    ['password keys without values', fill('password')],
    ['password keys with separators', fill('password=')],
    ['keys followed by spaces', fill('token    ')],
    ['long keys', fill(`${'x'.repeat(200)}secret`)],
    ['JWT prefixes', fill('eyJ')],
    ['JWT first segments', fill(`eyJ${'a'.repeat(100)}.`)],
    ['URL schemes', fill('ab://')],
    ['URL user parts', fill('https://user:')],
    ['Authorization headers', fill('Authorization: ')],
    ['Bearer words', fill('Bearer ')],
    ['sk- prefixes', fill('sk-')],
    ['GitHub prefixes', fill('ghp_')],
    ['AKIA prefixes', fill('AKIA')],
    ['AccountKey', fill('AccountKey=')],
    ['colons and equals', fill(':=')],
    ['quotes', fill('"password": "')],
    ['netrc machines and logins', fill('machine h login u ')],
    ['netrc blanks between words', fill(`machine h${' '.repeat(300)}login u${'\n'.repeat(300)}`)],
    ['curl -u without a password', fill('curl -u user')],
    ['curl then many -u flags', `curl ${fill(' -u a:')}`],
    ['mysql -p flags', `mysql ${fill(' -p')}`],
    ['commands without flags', fill('mysql sshpass redis-cli ')],
    ['docker auth keys', fill('"auth": "')],
    ['secret flags', fill('--password ')],
    ['secret flags with values', fill('--api-key v ')],
    ['keytool flags', fill('-storepass ')],
    ['openssl pass:', fill('-pass pass:')],
    ['long bare values', `token=${fill('a')}`],
    ['Azure AD secret shapes', fill('abc8Q~')],
    ['telegram shapes', fill('123456789:AA')],
    ['vendor prefixes', fill('pypi-AgE dckr_pat_ HRKU- shpat_ dapi hvs. glsa_ sntrys_ dp.st. lin_api_ key- ')],
  ];
  it.each(ADVERSARIAL)('%s (1 MiB)', (_name, input) => {
    const started = performance.now();
    const r = redactSecrets(input);
    const ms = performance.now() - started;
    expect(typeof r.text).toBe('string');
    // Linear passes over 1 MiB take tens of ms; a quadratic one would take minutes.
    expect(ms).toBeLessThan(2000);
  });
});

describe('redactTerminalText: a keystroke too short for a secret', () => {
  // The short-text path skips the view; the chunks path never does: both must agree.
  const alphabet = [...'aApPwWxz09 =:_-/+."\'@%\x1b[;~', '\x08', '\r', '\n', '\t', '\x7f', '\x9b', 'é', '\u{1F600}'];
  it('agrees with the full redaction for every text of 1 to 2 characters (controls included)', () => {
    for (const a of alphabet) {
      for (const b of ['', ...alphabet]) {
        const text = a + b;
        expect(redactTerminalText(text), JSON.stringify(text)).toEqual({ text: redactTerminalChunks([text]).chunks[0], count: redactTerminalChunks([text]).count });
      }
    }
  });

  it('no text of 3 characters is a secret either (the bound has a character to spare)', () => {
    const letters = [...'pPwWax0=: -"\''];
    for (const a of letters) for (const b of letters) for (const c of letters) expect(redactSecrets(a + b + c).count, a + b + c).toBe(0);
  });
});
