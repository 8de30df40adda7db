/**
 * Secrets given on a command line: a long flag that takes one (`--password X`, `-storepass X`),
 * and the short flags of known commands (`mysql -pS3cret`, `curl -u user:pass`), which count only
 * when the command is on the same line before them.
 */
import { MARKER_PREFIX, type RedactionKind, type SecretFinder, type SecretSpan } from './secret-span.js';

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

export const secretFlagRule: SecretFinder = (text) => {
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
export function commandFlagRule(rule: CommandFlagRule): SecretFinder {
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

export const COMMAND_FLAG_RULES: readonly CommandFlagRule[] = [
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
