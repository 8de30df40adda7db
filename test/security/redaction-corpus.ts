/**
 * Secret formats as a user meets them on a terminal: env listings, config files, command lines,
 * JSON, logs. Every value is fake and generated here (no line of this file is itself a scannable
 * token). Each format names the parts that must never survive a redaction (`secrets`) and the
 * marker kind it should get; the helpers build the styled, wrapped and split forms the corpus
 * tests print through real programs.
 */
import type { RedactionKind } from '../../lib/policy/redact.js';

export interface SecretFormat {
  /** Short id, used in labels: letters, digits and dashes. */
  readonly id: string;
  readonly kind: RedactionKind;
  /** What is printed (one or more lines, `\n` between them). */
  readonly text: string;
  /** The secret parts: none may survive, not even a piece (see `leakedPieces`). */
  readonly secrets: readonly string[];
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A deterministic generator: the same corpus on every run. */
function generator(seed: number): (alphabet: string, n: number) => string {
  let x = seed >>> 0;
  return (alphabet, n) => {
    let s = '';
    for (let i = 0; i < n; i++) {
      x = (Math.imul(x, 1103515245) + 12345) >>> 0;
      s += alphabet[(x >>> 8) % alphabet.length];
    }
    return s;
  };
}

let seedCounter = 1000;
const rnd = (alphabet: string, n: number): string => generator(seedCounter++)(alphabet, n);
const b62 = (n: number): string => rnd(ALNUM, n);
const hex = (n: number): string => rnd('0123456789abcdef', n);
const upper = (n: number): string => rnd('ABCDEFGHIJKLMNOPQRSTUVWXYZ234567', n);
const b64 = (n: number): string => rnd(`${ALNUM}+/`, n);
const urlsafe = (n: number): string => rnd(`${ALNUM}_-`, n);
/** A password as people pick them: letters, digits and some punctuation a shell leaves alone. */
const pw = (n: number): string => rnd(`${ALNUM}!%^*_+.~`, n);

const prefix = (...parts: string[]): string => parts.join('');

function pemBody(lines: number, width: number): string[] {
  return Array.from({ length: lines }, (_, i) => (i === lines - 1 ? `${b64(width - 8)}==` : b64(width)));
}

const rsaBody = pemBody(5, 64);
const opensshBody = pemBody(4, 70);
const gcpBody = pemBody(4, 64);
const kubeKeyData = b64(240);

export const FORMATS: readonly SecretFormat[] = (() => {
  const f: SecretFormat[] = [];
  const add = (id: string, kind: RedactionKind, text: string, ...secrets: string[]): void => {
    for (const s of secrets) if (!text.includes(s)) throw new Error(`corpus ${id}: secret not in text`);
    f.push({ id, kind, text, secrets });
  };
  let s: string;
  s = prefix('AKIA', upper(16));
  add('aws-key-id', 'aws-access-key-id', `AWS_ACCESS_KEY_ID=${s}`, s);
  s = b64(40);
  add('aws-credentials', 'aws-secret-access-key', `[default]\naws_secret_access_key = ${s}`, s);
  s = b64(40);
  add('aws-configure', 'aws-secret-access-key', `aws configure set aws_secret_access_key ${s}`, s);
  add('pem-rsa', 'private-key', ['-----BEGIN RSA PRIVATE KEY-----', ...rsaBody, '-----END RSA PRIVATE KEY-----'].join('\n'), ...rsaBody);
  add('pem-openssh', 'private-key', ['-----BEGIN OPENSSH PRIVATE KEY-----', ...opensshBody, '-----END OPENSSH PRIVATE KEY-----'].join('\n'), ...opensshBody);
  add(
    'gcp-service-account',
    'private-key',
    `{"type": "service_account", "project_id": "acme", "private_key": "-----BEGIN PRIVATE KEY-----\\n${gcpBody.join('\\n')}\\n-----END PRIVATE KEY-----\\n", "client_email": "svc@acme.iam.gserviceaccount.com"}`,
    ...gcpBody,
  );
  s = `eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJ${urlsafe(60)}.${urlsafe(86)}`;
  add('jwt', 'jwt', `[auth] session=${s} user=42`, s.slice(3));
  s = prefix('AIza', urlsafe(35));
  add('google-api-key', 'google-api-key', `curl "https://maps.googleapis.com/maps/api/geocode/json?key=${s}&address=x"`, s);
  s = prefix('ya29.', urlsafe(120));
  add('google-oauth', 'google-oauth-token', `access: ${s}`, s);
  s = prefix('GOCSPX-', urlsafe(28));
  add('google-client-secret', 'google-oauth-client-secret', `client_id=123.apps.googleusercontent.com ${s}`, s);
  s = prefix('ghp_', b62(36));
  add('github-classic', 'github-token', `export GH_TOKEN=${s}`, s);
  s = prefix('github_pat_', '11', upper(20), '_', b62(59));
  add('github-fine-grained', 'github-token', `git clone https://oauth2:${s}@github.com/acme/app.git`, s);
  s = prefix('glpat-', urlsafe(20));
  add('gitlab', 'gitlab-token', `glab auth login --hostname gitlab.example.com --token ${s}`, s);
  s = prefix('xoxb-', '1234567890', '-', '1234567890123', '-', b62(24));
  add('slack-bot', 'slack-token', `SLACK_BOT_TOKEN=${s}`, s);
  s = b62(24);
  add('slack-webhook', 'slack-webhook', `https://hooks.slack.com/services/T0000ABCD/B0000EFGH/${s}`, s);
  s = prefix('sk-ant-api03-', urlsafe(93), 'AA');
  add('anthropic', 'anthropic-key', `ANTHROPIC_API_KEY=${s}`, s);
  s = prefix('sk-proj-', urlsafe(74), 'T3BlbkFJ', urlsafe(74));
  add('openai-project', 'openai-key', `OPENAI_API_KEY=${s}`, s);
  s = prefix('sk_live_', b62(24));
  add('stripe', 'stripe-key', `Stripe.api_key = '${s}'`, s);
  s = prefix('npm_', b62(36));
  add('npmrc', 'npm-token', `//registry.npmjs.org/:_authToken=${s}`, s);
  s = prefix('pypi-AgEIcHlwaS5vcmc', urlsafe(140));
  add('pypirc', 'pypi-token', `[pypi]\n  username = __token__\n  password = ${s}`, s);
  s = prefix('dckr_pat_', urlsafe(27));
  add('dockerhub', 'dockerhub-token', `echo ${s} | docker login -u acme --password-stdin`, s);
  s = prefix('hf_', rnd('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 34));
  add('huggingface', 'huggingface-token', `huggingface-cli login --token ${s}`, s);
  s = prefix('SG.', urlsafe(22), '.', urlsafe(43));
  add('sendgrid', 'sendgrid-key', `sendgrid key ${s}`, s);
  s = prefix('SK', hex(32));
  add('twilio', 'twilio-key', `twilio api key ${s}`, s);
  s = prefix('key-', hex(32));
  add('mailgun', 'mailgun-key', `MAILGUN_KEY ${s}`, s);
  s = prefix('HRKU-AA', urlsafe(58));
  add('heroku', 'heroku-key', `heroku authorizations:create -> ${s}`, s);
  s = prefix('shpat_', hex(32));
  add('shopify', 'shopify-token', `X-Shopify-Access-Token ${s}`, s);
  s = prefix('dop_v1_', hex(64));
  add('digitalocean', 'digitalocean-token', `doctl auth init -t ${s}`, s);
  s = prefix('dapi', hex(32));
  add('databricks', 'databricks-token', `host = https://acme.cloud.databricks.com\ntoken ${s}`, s);
  s = prefix('hvs.', urlsafe(91));
  add('vault', 'vault-token', `Key: token ${s}`, s);
  s = prefix('7', rnd('0123456789', 9), ':AA', urlsafe(33));
  add('telegram', 'telegram-bot-token', `bot ${s} started`, s);
  s = prefix('AGE-SECRET-KEY-1', rnd('QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L', 58));
  add('age', 'age-secret-key', `# created: 2026-11-30\n${s}`, s);
  s = `${b64(86)}==`;
  add('azure-connection-string', 'azure-key', `DefaultEndpointsProtocol=https;AccountName=acme;AccountKey=${s};EndpointSuffix=core.windows.net`, s);
  s = b62(43);
  add('azure-sas-url', 'azure-sas-signature', `https://acme.blob.core.windows.net/c/f.txt?sv=2022-11-02&ss=b&sp=r&se=2026-12-01&sig=${s}%3D`, s);
  s = prefix(b62(3), '8Q~', urlsafe(34).replace(/-/g, '.'));
  add('azure-ad-secret', 'azure-ad-client-secret', `New client secret created, copy it now: ${s} (expires 2027)`, s);
  s = Buffer.from(`acme:${pw(16)}`).toString('base64');
  add('docker-config', 'docker-auth', `{\n  "auths": {\n    "https://index.docker.io/v1/": {\n      "auth": "${s}"\n    }\n  }\n}`, s);
  s = pw(14);
  add('netrc-line', 'netrc-password', `machine api.example.com login bob password ${s}`, s);
  s = pw(14);
  add('netrc-block', 'netrc-password', `machine ftp.example.org\n    login anonymous\n    password ${s}`, s);
  s = pw(14);
  add('curl-user', 'basic-credentials', `curl -fsS -u admin:${s} https://api.example.com/v1/items`, s);
  s = pw(14);
  add('mysql-p', 'cli-password', `mysql -h db.internal -u root -p${s} shop`, s);
  s = pw(14);
  add('sshpass', 'cli-password', `sshpass -p ${s} ssh deploy@build.example.com`, s);
  s = pw(14);
  add('redis-cli', 'cli-password', `redis-cli -h cache.internal -a ${s} --no-auth-warning ping`, s);
  s = pw(14);
  add('password-flag', 'password', `rabbitmqadmin --username ops --password ${s} list queues`, s);
  s = pw(14);
  add('openssl-pass', 'cli-password', `openssl enc -aes-256-cbc -salt -pass pass:${s} -in notes.txt`, s);
  s = pw(14);
  add('ldapsearch', 'cli-password', `ldapsearch -x -D cn=admin,dc=acme,dc=org -w ${s} -b dc=acme,dc=org`, s);
  s = pw(14);
  add('sqlcmd', 'cli-password', `sqlcmd -S localhost -U sa -P ${s} -Q "select 1"`, s);
  s = pw(14);
  add('keytool', 'password', `keytool -list -keystore app.jks -storepass ${s}`, s);
  s = pw(14);
  add('postgres-url', 'url-password', `DATABASE_URL=postgresql://app:${s}@db.internal:5432/app?sslmode=require`, s);
  s = pw(14);
  add('mongodb-url', 'url-password', `mongosh "mongodb+srv://admin:${s}@cluster0.ab1cd.mongodb.net/test"`, s);
  s = pw(14);
  add('redis-url', 'url-password', `REDIS_URL=redis://default:${s}@cache.internal:6379/0`, s);
  s = pw(14);
  add('mysql-url', 'url-password', `mysql://root:${s}@127.0.0.1:3306/shop`, s);
  s = Buffer.from(`admin:${pw(16)}`).toString('base64');
  add('authorization-basic', 'authorization', `> Authorization: Basic ${s}\n> Accept: */*`, s);
  s = b62(40);
  add('authorization-bearer', 'authorization', `curl -H "Authorization: Bearer ${s}" https://api.example.com/v1`, s);
  s = urlsafe(48).replace(/^[^0-9]/, '7');
  add('bearer', 'bearer-token', `using Bearer ${s} for the call`, s);
  s = b62(32);
  add('export-token', 'token', `export DEPLOY_TOKEN=${s}`, s);
  const envPassword = pw(16);
  const envSecret = hex(64);
  add('dotenv', 'password', `# .env\nDB_HOST=db.internal\nDB_PASSWORD=${envPassword}\nSECRET_KEY_BASE=${envSecret}`, envPassword, envSecret);
  s = b62(40);
  add('kubeconfig-token', 'token', `users:\n- name: ci\n  user:\n    token: ${s}`, s);
  add('kubeconfig-key-data', 'private-key', `users:\n- name: admin\n  user:\n    client-key-data: ${kubeKeyData}`, kubeKeyData);
  s = pw(20);
  add('yaml-passwd', 'password', `db:\n  passwd: "${s}"`, s);
  s = b62(32);
  add('json-api-key', 'api-key', `{"api_key": "${s}", "region": "eu"}`, s);
  s = pw(14);
  add('grep-color', 'password', `\x1b[35m\x1b[Kconfig.ini\x1b[m\x1b[K\x1b[36m\x1b[K:\x1b[m\x1b[K\x1b[01;31m\x1b[Kpassword\x1b[m\x1b[K=${s}`, s);
  s = b62(16);
  add('properties-secret', 'secret', `app.client.secret=${s}`, s);
  return f;
})();

/**
 * Text that must come back unchanged (no false positives), with why each is there: what the other
 * tests and real sessions read (prompts, listings, logs, code) and near misses of every new rule.
 */
export const NEGATIVES: ReadonlyArray<readonly [name: string, text: string]> = [
  ['git log with full hashes', `commit 2397d74e1c6a5b0f9d8e7c6b5a4f3e2d1c0b9a87\nAuthor: Dev <dev@example.com>\nDate:   Mon Nov 30 12:00:00 2026 +0000\n\n    Merge 98c876d4e2a1f0b3c5d7e9f1a2b4c6d8e0f1a3b5 into main`],
  ['UUIDs and request ids', 'request 3f2b8c1e-9a4d-4e7b-8c2f-1d0e9b8a7c6d done; trace=123e4567-e89b-12d3-a456-426614174000'],
  ['a base64 PNG data URL', `<img src="data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==">`],
  ['docker run and ps with -u and -p', 'docker run -u 1000:1000 -p 8080:80 nginx\nps -u root -p 1\nsudo -u postgres psql\nssh -p 2222 deploy@host'],
  ['mysql prompting for the password', 'mysql -u root -p shop\nEnter password: '],
  ['help text with metavars', '  --password PASSWORD   the password to use\n  --token TOKEN         an API token\n  --password-stdin      read it from stdin'],
  ['a login failure in a log', 'login failed for user bob: password incorrect (3 attempts)'],
  ['code that reads secrets', 'token = get_token()\napi_key = os.environ["API_KEY"]\npassword = getpass.getpass()'],
  ['curl without credentials', 'curl -fsSL -o out.json -H "Accept: application/json" https://api.example.com/v1/items'],
  ['an ls -la listing', 'total 48\ndrwxr-xr-x  5 dev dev 4096 Nov 30 12:00 .\n-rw-------  1 dev dev  220 Nov 30 12:00 .netrc\n-rw-r--r--  1 dev dev  807 Nov 30 12:00 .profile'],
  ['a shell prompt and a command', 'dev@host:~/src$ git status --short\n M lib/policy/redact.ts'],
  ['prose about machines and passwords', 'The machine room password policy is strict. Login with your badge.'],
  ['hyphenated words and flags', 'disk-usage-report --max-tokens 4096 --token-limit 100 --secret-name app-secret'],
  ['sha256 digests', 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08  node.tar.gz'],
  ['a long dashed rule', '-'.repeat(120)],
  ['keys of a key=value file without values', 'password=\ntoken: \nsecret ='],
];

/** Escape sequences inserted around the first secret of a format. */
export type Style = 'before' | 'inside' | 'after';

/** The format's text with SGR right before, inside, or right after its first secret. */
export function styled(format: SecretFormat, style: Style): string {
  const secret = format.secrets[0] as string;
  const at = format.text.indexOf(secret);
  const head = format.text.slice(0, at);
  const tail = format.text.slice(at + secret.length);
  const half = Math.floor(secret.length / 2);
  switch (style) {
    case 'before':
      return `${head}\x1b[1;32m${secret}\x1b[0m${tail}`;
    case 'inside':
      // As bash highlights a paste that wraps: the highlight is restarted in the middle.
      return `${head}\x1b[7m${secret.slice(0, half)}\x1b[27m\x1b[7m${secret.slice(half)}\x1b[27m${tail}`;
    case 'after':
      return `${head}${secret}\x1b[4;31m${tail.length > 0 ? tail : ' '}\x1b[0m`;
  }
}

/**
 * The format's text with blanks before the line of its first secret so that the secret starts
 * `cols / 2` columns before the right margin of a `cols`-wide terminal: it wraps.
 */
export function wrappedAt(format: SecretFormat, cols: number): string {
  const secret = format.secrets[0] as string;
  const at = format.text.indexOf(secret);
  const lineStart = format.text.lastIndexOf('\n', at) + 1;
  const column = visibleLength(format.text.slice(lineStart, at));
  const want = cols - Math.min(Math.floor(secret.length / 2), Math.floor(cols / 2));
  const pad = (((want - column) % cols) + cols) % cols;
  return format.text.slice(0, lineStart) + ' '.repeat(pad) + format.text.slice(lineStart);
}

function visibleLength(s: string): number {
  return s.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').length;
}

/** Where to cut the format's text in two writes: in the middle of its first secret. */
export function splitPoint(format: SecretFormat): number {
  const secret = format.secrets[0] as string;
  return format.text.indexOf(secret) + Math.floor(secret.length / 2);
}

/** Pieces of a secret long enough to count as a leak: 12 for hex (16 symbols), else 8. */
function pieceLength(secret: string): number {
  const n = /^[0-9a-f]+$/.test(secret) ? 12 : 8;
  return Math.min(n, secret.length);
}

/**
 * The pieces of `format`'s secrets found in `text` (each checked as is and as a person would see
 * it: escapes and tags removed, entities decoded, rows joined). Empty when nothing leaked.
 */
export function leakedPieces(format: SecretFormat, text: string): string[] {
  const views = [text, seen(text)];
  const found: string[] = [];
  for (const secret of format.secrets) {
    const n = pieceLength(secret);
    for (let i = 0; i + n <= secret.length; i++) {
      const piece = secret.slice(i, i + n);
      if (views.some((v) => v.includes(piece))) {
        found.push(piece);
        break;
      }
    }
  }
  return found;
}

/** Text as a reader sees it, rows joined: ANSI escapes, HTML tags and diff row prefixes removed. */
export function seen(text: string): string {
  return text
    .replace(/\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?/g, '')
    .replace(/\x1b[P^_X][^\x1b]*(?:\x1b\\)?/g, '')
    .replace(/\x1b\[[0-9;?>=!]*[ -/]*[@-~]/g, '')
    .replace(/\x1b[ -/]*[0-~]/g, '')
    .replace(/<[^>]*>/g, '')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/^@\d+ /gm, '')
    .replace(/[\x00-\x1f\x7f]/g, '');
}
