/**
 * Issue 13, "config that is accepted and does nothing": every key either acts or is refused with
 * CONFIG_INVALID naming it and the reason. The keys of the seed configs that tmux-drive does not
 * act on (REFUSED_KEYS) are refused by the schema itself, so the JSON Schema editors use refuses
 * them too; a key read only beside another key's value (scope.paths, scope.hosts) is refused
 * without it; drive.durable: false acts (checked with a real bash on the spawn backend).
 * docs/config.md has the table of every key: acts or refused, and its test.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { ConfigError, Driver } from '../../lib/index.js';
import { validateConfig } from '../../lib/policy/config.js';
import { REFUSED_KEYS } from '../../lib/policy/config-schema.js';
import { configJsonSchema } from '../../tools/config-schema.js';
import type { CreateApprovalRequest } from '../../lib/index.js';
import { allow, openDriver } from '../helpers.js';

const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule;
const ajv = new Ajv({ allErrors: true, strict: true });
addFormats(ajv);
const jsonSchemaAccepts = ajv.compile(configJsonSchema());

type Config = Record<string, unknown>;
const oneEntry = (extra: Record<string, unknown>): Config => ({ allow: [{ ...allow('a', '/bin/bash'), ...extra }] });

function issuesOf(config: Config): { path: string; message: string }[] {
  try {
    validateConfig(config, { fromFile: true });
    return [];
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
    return [...(err as ConfigError).issues];
  }
}

/** [key as the docs name it, a config setting it as the seeds do, the issue's path, the reason] */
const REFUSED: ReadonlyArray<readonly [string, Config, string, string]> = [
  ['worker.maxConcurrentAttentionTurns', { worker: { maxConcurrentAttentionTurns: 2 } }, 'worker.maxConcurrentAttentionTurns', REFUSED_KEYS['worker.maxConcurrentAttentionTurns']],
  ['allow[].hintPatterns (non-empty)', oneEntry({ hintPatterns: ['\\(y/n\\) $'] }), 'allow.0.hintPatterns', REFUSED_KEYS['allow[].hintPatterns']],
  ['allow[].scope.network: listed-hosts', oneEntry({ scope: { network: 'listed-hosts' } }), 'allow.0.scope.network', REFUSED_KEYS['allow[].scope.network: listed-hosts']],
  ['drive.mode: auto', { drive: { mode: 'auto' } }, 'drive.mode', REFUSED_KEYS['drive.mode']],
  ['drive.mode: detached', { drive: { mode: 'detached' } }, 'drive.mode', REFUSED_KEYS['drive.mode']],
  ['drive.heartbeatMs', { drive: { heartbeatMs: 90_000 } }, 'drive.heartbeatMs', REFUSED_KEYS['drive.heartbeatMs']],
];

describe('keys tmux-drive does not act on are refused, naming the key and the reason', () => {
  it.each(REFUSED)('%s', (_key, config, path, reason) => {
    expect(issuesOf(config)).toEqual([{ path, message: expect.stringContaining(reason) }]);
  });

  it.each(REFUSED.filter(([key]) => key !== 'allow[].scope.network: listed-hosts'))('%s: the JSON Schema refuses it too', (_key, config) => {
    expect(jsonSchemaAccepts(config)).toBe(false);
  });

  it('the values that describe what tmux-drive does are accepted: hintPatterns [], drive.mode attached', () => {
    const config = { ...oneEntry({ hintPatterns: [] }), drive: { mode: 'attached' } };
    expect(issuesOf(config)).toEqual([]);
    expect(jsonSchemaAccepts(config)).toBe(true);
  });
});

describe('a key read only beside another value is refused without it', () => {
  it('scope.paths without filesystem listed-paths (they would not be bound)', () => {
    expect(issuesOf(oneEntry({ scope: { filesystem: 'workspace', paths: ['/srv/data'] } }))).toEqual([{ path: 'allow.0.scope.paths', message: expect.stringContaining('only with filesystem "listed-paths"') }]);
    expect(issuesOf(oneEntry({ scope: { filesystem: 'listed-paths', paths: ['/srv/data'] } }))).toEqual([]);
  });

  it('scope.hosts (read only with listed-hosts, which is refused)', () => {
    expect(issuesOf(oneEntry({ scope: { network: 'full', hosts: ['api.example.com'] } }))).toEqual([{ path: 'allow.0.scope.hosts', message: expect.stringContaining('listed-hosts') }]);
  });

  it('drive.durable false with an entry on a remote host (a remote drive is always in its tmux server)', () => {
    const config = { ...oneEntry({ host: 'h' }), hosts: [{ id: 'h', ssh: { host: 'example.org', user: 'me' } }], drive: { durable: false } };
    expect(issuesOf(config)).toEqual([{ path: 'allow.0.host', message: expect.stringContaining('drive.durable is false') }]);
  });
});

describe("a seed's config file", () => {
  it('is refused by Driver.open, every inert key named in one error, before anything is created', async () => {
    const root = mkdtempSync(join(tmpdir(), 'td-keys-'));
    const dataDir = join(root, 'data');
    const file = join(root, 'config.yaml');
    writeFileSync(
      file,
      [
        'worker: { maxSessions: 4, idleTtlMs: 1800000, maxConcurrentAttentionTurns: 2 }',
        'allow:',
        '  - id: bash',
        '    match: { path: /usr/bin/bash }',
        '    scope: { filesystem: workspace, network: none, credentialPaths: [], uid: dedicated }',
        '    autoAnswer: safe-only',
        '    consent: { acknowledgedRisk: true, acknowledgedAt: "2026-06-14T00:00:00Z" }',
        'drive: { mode: auto, readMode: digest, durable: true, heartbeatMs: 90000, maxCostUsd: null, notify: terminal, heartbeatNotifyMs: 3600000 }',
        '',
      ].join('\n'),
    );
    try {
      const err = await Driver.open({ dataDir, config: file }).then(
        async (d) => void (await d.close()),
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues.map((i) => i.path).sort()).toEqual(['drive.heartbeatMs', 'drive.mode', 'worker.maxConcurrentAttentionTurns']);
      expect((err as ConfigError).message).toContain('runs no agent turns');
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('drive.durable: false acts', () => {
  it('every local drive runs on a host-owned pty (spawn backend): listed durable false, no tmux server, no fallback warning', async () => {
    const warnings: string[] = [];
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })], { drive: { durable: false } }, { logger: { warn: (m) => warnings.push(m) } });
    try {
      const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'not-durable' });
      expect(s.backendKind).toBe('spawn');
      expect(s.durable).toBe(false);
      expect(t.driver.list()).toEqual([expect.objectContaining({ id: 'not-durable', backend: 'spawn', durable: false, state: 'live' })]);
      expect(readdirSync(join(t.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'))).toEqual([]);
      await s.wait({ forText: '$ ', timeoutMs: 10_000 });
      await s.sendText('echo pty-$((6 * 7))', { submit: true });
      expect((await s.wait({ forText: /^pty-42$/m, timeoutMs: 10_000 })).outcome).toBe('text');
      expect(warnings.filter((w) => w.includes('tmux is not installed'))).toEqual([]);
      await s.kill();
    } finally {
      await t.cleanup();
    }
  });

  it('the default (durable) still runs on tmux', async () => {
    const t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
    try {
      const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name: 'durable' });
      expect(s.backendKind).toBe('tmux');
      expect(s.durable).toBe(true);
      await s.kill();
    } finally {
      await t.cleanup();
    }
  });
});

describe('allow[].approveOnCreate acts: each launch of the entry waits for the approver', () => {
  const BASH = { env: { PS1: '$ ' } };
  const ARGS = ['--norc', '--noprofile'];

  it('without an approver (the CLI, the MCP server) the entry never launches: APPROVAL_REQUIRED, nothing journaled or started', async () => {
    const t = await openDriver([allow('gated', '/bin/bash', { ...BASH, approveOnCreate: true }), allow('free', '/bin/bash', BASH)]);
    try {
      await expect(t.driver.create({ allowId: 'gated', args: ARGS, name: 'gated-1' })).rejects.toMatchObject({ code: 'APPROVAL_REQUIRED', context: { allowId: 'gated', name: 'gated-1' } });
      expect(t.driver.list()).toEqual([]);
      expect(readdirSync(join(t.dataDir, 'tmux')).filter((f) => f.endsWith('.sock'))).toEqual([]);
      // An entry without the flag is not gated.
      await (await t.driver.create({ allowId: 'free', args: ARGS, name: 'free-1' })).kill();
    } finally {
      await t.cleanup();
    }
  });

  it('the approver sees what would run; only a literal true launches, false or a throw is APPROVAL_DENIED', async () => {
    const asked: CreateApprovalRequest[] = [];
    const answers: unknown[] = [false, 'yes', new Error('approval service down'), true];
    const t = await openDriver([allow('gated', '/bin/bash', { ...BASH, approveOnCreate: true })], {}, {
      approveCreate: (request) => {
        asked.push(request);
        const answer = answers.shift();
        if (answer instanceof Error) throw answer;
        return answer as boolean;
      },
    });
    try {
      for (const name of ['no', 'truthy', 'throws']) {
        await expect(t.driver.create({ allowId: 'gated', args: ARGS, name, project: 'p' })).rejects.toMatchObject({ code: 'APPROVAL_DENIED', context: { name } });
      }
      expect(t.driver.list()).toEqual([]);
      const s = await t.driver.create({ allowId: 'gated', args: ARGS, name: 'approved', project: 'p' });
      await s.wait({ forText: '$ ', timeoutMs: 10_000 });
      expect(t.driver.list().map((i) => i.id)).toEqual(['approved']);
      expect(asked).toHaveLength(4);
      expect(asked[3]).toEqual({ allowId: 'gated', name: 'approved', argv: ['/usr/bin/bash', ...ARGS], project: 'p' });
      await s.kill();
    } finally {
      await t.cleanup();
    }
  });
});
