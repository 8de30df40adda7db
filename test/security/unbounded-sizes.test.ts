/**
 * Issue 10, item 8: unbounded sizes. `defaults.scrollback: 2000000000` was accepted (host RSS
 * 2.1 GB after `seq 1 3000000`). Every size of the config schema now has an upper bound
 * (CONFIG_BOUNDS, each with its reason): each is tested just inside (accepted) and just outside
 * (CONFIG_INVALID naming the key), and the JSON Schema editors use carries the same bound.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ConfigError, Driver } from '../../lib/index.js';
import { validateConfig } from '../../lib/policy/config.js';
import { CONFIG_BOUNDS as B } from '../../lib/policy/config-schema.js';
import { MAX_CONFIG_FILE_BYTES, loadConfig } from '../../lib/driver/load-config.js';
import { configJsonSchema } from '../../tools/config-schema.js';
import { CONSENT, allow } from '../helpers.js';

const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule;
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
const jsonSchemaAccepts = ajv.compile(configJsonSchema());

type Config = Record<string, unknown>;
const entry = (extra: Record<string, unknown> = {}): Config => ({ ...allow('a', '/bin/bash'), ...extra });
const oneEntry = (extra: Record<string, unknown>): Config => ({ allow: [entry(extra)] });
const path = (chars: number): string => `/${'p'.repeat(chars - 1)}`;
const text = (chars: number): string => 'w'.repeat(chars);
const list = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));
const envOf = (n: number): Record<string, string> => Object.fromEntries(list(n, (i) => [`V${i}`, 'x']));
const host = (extra: Record<string, unknown> = {}, ssh: Record<string, unknown> = {}): Config => ({ id: 'h', ssh: { host: 'example.org', user: 'me', ...ssh }, ...extra });

/**
 * [what, the issue's key path, a config just inside the bound, one just outside it]. Keys refused
 * whatever their value (drive.heartbeatMs, hintPatterns, scope.hosts: test/policy/config-keys.test.ts)
 * have no "inside".
 */
const BOUNDS: ReadonlyArray<readonly [string, string, Config, Config]> = [
  ['worker.maxSessions', 'worker.maxSessions', { worker: { maxSessions: B.sessions } }, { worker: { maxSessions: B.sessions + 1 } }],
  ['worker.idleTtlMs', 'worker.idleTtlMs', { worker: { idleTtlMs: B.timerMs } }, { worker: { idleTtlMs: B.timerMs + 1 } }],
  ['worker.ringBytes', 'worker.ringBytes', { worker: { ringBytes: B.ringBytes } }, { worker: { ringBytes: B.ringBytes + 1 } }],
  ['worker.stuckMs', 'worker.stuckMs', { worker: { stuckMs: B.timerMs } }, { worker: { stuckMs: B.timerMs + 1 } }],
  ['defaults.cols', 'defaults.cols', { defaults: { cols: B.cells } }, { defaults: { cols: B.cells + 1 } }],
  ['defaults.rows', 'defaults.rows', { defaults: { rows: B.cells } }, { defaults: { rows: B.cells + 1 } }],
  ['defaults.scrollback', 'defaults.scrollback', { defaults: { scrollback: B.scrollbackLines } }, { defaults: { scrollback: B.scrollbackLines + 1 } }],
  ['drive.heartbeatNotifyMs', 'drive.heartbeatNotifyMs', { drive: { heartbeatNotifyMs: B.timerMs } }, { drive: { heartbeatNotifyMs: B.timerMs + 1 } }],
  ['drive.maxCostUsd', 'drive.maxCostUsd', { drive: { maxCostUsd: B.costUsd } }, { drive: { maxCostUsd: B.costUsd + 0.01 } }],
  ['dataDir length', 'dataDir', { dataDir: path(B.pathChars) }, { dataDir: path(B.pathChars + 1) }],
  ['allow entries', 'allow', { allow: list(B.allowEntries, (i) => allow(`e${i}`, '/bin/bash')) }, { allow: list(B.allowEntries + 1, (i) => allow(`e${i}`, '/bin/bash')) }],
  ['allow[].id length', 'allow.0.id', { allow: [allow(text(64), '/bin/bash')] }, { allow: [allow(text(65), '/bin/bash')] }],
  ['allow[].match.path length', 'allow.0.match.path', { allow: [allow('a', path(B.pathChars))] }, { allow: [allow('a', path(B.pathChars + 1))] }],
  ['allow[].match.argsPrefix count', 'allow.0.match.argsPrefix', oneEntry({ match: { path: '/bin/bash', argsPrefix: list(B.words, () => '-x') } }), oneEntry({ match: { path: '/bin/bash', argsPrefix: list(B.words + 1, () => '-x') } })],
  ['allow[].match.argsPrefix word', 'allow.0.match.argsPrefix.0', oneEntry({ match: { path: '/bin/bash', argsPrefix: [text(B.wordChars)] } }), oneEntry({ match: { path: '/bin/bash', argsPrefix: [text(B.wordChars + 1)] } })],
  ['allow[].scope.paths count', 'allow.0.scope.paths', oneEntry({ scope: { filesystem: 'listed-paths', paths: list(B.pathEntries, (i) => `/srv/${i}`) } }), oneEntry({ scope: { filesystem: 'listed-paths', paths: list(B.pathEntries + 1, (i) => `/srv/${i}`) } })],
  ['allow[].scope.paths length', 'allow.0.scope.paths.0', oneEntry({ scope: { filesystem: 'listed-paths', paths: [path(B.pathChars)] } }), oneEntry({ scope: { filesystem: 'listed-paths', paths: [path(B.pathChars + 1)] } })],
  ['allow[].scope.credentialPaths count', 'allow.0.scope.credentialPaths', oneEntry({ scope: { credentialPaths: list(B.pathEntries, (i) => `/c/${i}`) } }), oneEntry({ scope: { credentialPaths: list(B.pathEntries + 1, (i) => `/c/${i}`) } })],
  ['allow[].scope.credentialPaths length', 'allow.0.scope.credentialPaths.0', oneEntry({ scope: { credentialPaths: [path(B.pathChars)] } }), oneEntry({ scope: { credentialPaths: [path(B.pathChars + 1)] } })],
  ['allow[].env count', 'allow.0.env', oneEntry({ env: envOf(B.words) }), oneEntry({ env: envOf(B.words + 1) })],
  ['allow[].env value', 'allow.0.env.V', oneEntry({ env: { V: text(B.wordChars) } }), oneEntry({ env: { V: text(B.wordChars + 1) } })],
  ['allow[].env name', `allow.0.env.${'N'.repeat(B.envNameChars + 1)}`, oneEntry({ env: { ['N'.repeat(B.envNameChars)]: 'x' } }), oneEntry({ env: { ['N'.repeat(B.envNameChars + 1)]: 'x' } })],
  ['allow[].passEnv count', 'allow.0.passEnv', oneEntry({ passEnv: list(B.words, (i) => `P${i}`) }), oneEntry({ passEnv: list(B.words + 1, (i) => `P${i}`) })],
  ['allow[].passEnv name', 'allow.0.passEnv.0', oneEntry({ passEnv: ['N'.repeat(B.envNameChars)] }), oneEntry({ passEnv: ['N'.repeat(B.envNameChars + 1)] })],
  ['allow[].limits.wallClockMs', 'allow.0.limits.wallClockMs', oneEntry({ limits: { wallClockMs: B.timerMs } }), oneEntry({ limits: { wallClockMs: B.timerMs + 1 } })],
  ['allow[].limits.maxInteractions', 'allow.0.limits.maxInteractions', oneEntry({ limits: { maxInteractions: B.count } }), oneEntry({ limits: { maxInteractions: B.count + 1 } })],
  ['allow[].limits.maxRequestsPerSession', 'allow.0.limits.maxRequestsPerSession', oneEntry({ limits: { maxRequestsPerSession: B.count } }), oneEntry({ limits: { maxRequestsPerSession: B.count + 1 } })],
  ['allow[].limits.maxSessions', 'allow.0.limits.maxSessions', oneEntry({ limits: { maxSessions: B.sessions } }), oneEntry({ limits: { maxSessions: B.sessions + 1 } })],
  // The timestamp format bounds it already (at most 9 fraction digits); 64 is the JSON Schema's bound.
  ['allow[].consent.acknowledgedAt', 'allow.0.consent.acknowledgedAt', oneEntry({ consent: { ...CONSENT, acknowledgedAt: '2026-11-30T00:00:00.123456789+00:00' } }), oneEntry({ consent: { ...CONSENT, acknowledgedAt: `2026-11-30T00:00:00.${'0'.repeat(44)}Z` } })],
  ['hosts count', 'hosts', { hosts: list(B.remoteHosts, (i) => host({ id: `h${i}` })) }, { hosts: list(B.remoteHosts + 1, (i) => host({ id: `h${i}` })) }],
  ['hosts[].ssh.options count', 'hosts.0.ssh.options', { hosts: [host({}, { options: list(B.sshOptions, (i) => `ServerAliveInterval=${i + 1}`) })] }, { hosts: [host({}, { options: list(B.sshOptions + 1, (i) => `ServerAliveInterval=${i + 1}`) })] }],
  ['hosts[].ssh.options length', 'hosts.0.ssh.options.0', { hosts: [host({}, { options: [`K=${'v'.repeat(B.sshOptionChars - 2)}`] })] }, { hosts: [host({}, { options: [`K=${'v'.repeat(B.sshOptionChars - 1)}`] })] }],
  ['hosts[].ssh.identityFile length', 'hosts.0.ssh.identityFile', { hosts: [host({}, { identityFile: path(B.pathChars) })] }, { hosts: [host({}, { identityFile: path(B.pathChars + 1) })] }],
  ['hosts[].ssh.host length', 'hosts.0.ssh.host', { hosts: [host({}, { host: text(253) })] }, { hosts: [host({}, { host: text(254) })] }],
  ['hosts[].dataDir length', 'hosts.0.dataDir', { hosts: [host({ dataDir: path(81) })] }, { hosts: [host({ dataDir: path(82) })] }],
];

function issuePaths(config: Config): string[] {
  try {
    validateConfig(config, { fromFile: true });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
    return [...new Set((err as ConfigError).issues.map((i) => i.path))];
  }
}

describe('every size in the config has an upper bound', () => {
  it.each(BOUNDS)('%s: accepted at the bound, CONFIG_INVALID naming %s one past it', (_what, key, inside, outside) => {
    expect(issuePaths(inside)).toEqual([]);
    expect(issuePaths(outside)).toEqual([key]);
  });

  it.each(BOUNDS)('%s: the JSON Schema carries the same bound', (_what, _key, inside, outside) => {
    expect(jsonSchemaAccepts(inside), JSON.stringify(jsonSchemaAccepts.errors?.slice(0, 2))).toBe(true);
    expect(jsonSchemaAccepts(outside)).toBe(false);
  });

  it('refuses the sizes of the report and the values a timer cannot hold', () => {
    expect(issuePaths({ defaults: { scrollback: 2_000_000_000 } })).toEqual(['defaults.scrollback']);
    // Node fires a setTimeout beyond 2^31-1 ms after 1 ms: a 30-day cap would evict at once.
    expect(issuePaths(oneEntry({ limits: { wallClockMs: 30 * 24 * 3600 * 1000 } }))).toEqual(['allow.0.limits.wallClockMs']);
    expect(issuePaths({ drive: { maxCostUsd: Number.POSITIVE_INFINITY } })).toEqual(['drive.maxCostUsd']);
  });

  it('Driver.open refuses an unbounded scrollback before creating anything', async () => {
    const root = mkdtempSync(join(tmpdir(), 'td-bounds-'));
    const dataDir = join(root, 'data');
    try {
      const err = await Driver.open({ dataDir, config: { defaults: { scrollback: 2_000_000_000 }, allow: [allow('bash', '/bin/bash')] } }).then(
        async (d) => void (await d.close()),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => i.path)).toEqual(['defaults.scrollback']);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('the config file itself is bounded', () => {
  it(`a file of at most ${MAX_CONFIG_FILE_BYTES} bytes is read; one byte more is CONFIG_INVALID`, () => {
    const root = mkdtempSync(join(tmpdir(), 'td-bounds-'));
    try {
      const file = join(root, 'config.yaml');
      const body = 'allow: []\n';
      writeFileSync(file, body + '#'.repeat(MAX_CONFIG_FILE_BYTES - body.length - 1) + '\n');
      expect(loadConfig(file, root).config.allow).toEqual([]);
      writeFileSync(file, body + '#'.repeat(MAX_CONFIG_FILE_BYTES - body.length) + '\n');
      expect(() => loadConfig(file, root)).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('a config path that is not a regular file (/dev/zero, a directory) is CONFIG_UNREADABLE, not an endless read', () => {
    expect(() => loadConfig('/dev/zero')).toThrow(expect.objectContaining({ code: 'CONFIG_UNREADABLE' }));
    expect(() => loadConfig(tmpdir())).toThrow(expect.objectContaining({ code: 'CONFIG_UNREADABLE' }));
  });
});
