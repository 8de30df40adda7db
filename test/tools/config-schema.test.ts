/**
 * docs/config.schema.json is generated from the valibot schema and committed: it must equal what
 * tools/config-schema.ts generates now (so it never drifts), and be as closed as the valibot
 * schema (an unknown key anywhere is rejected).
 */
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import AjvModule from 'ajv';
import addFormatsModule from 'ajv-formats';
import { configJsonSchema, renderConfigSchema, schemaPath } from '../../tools/config-schema.js';
import { validateConfig } from '../../lib/policy/config.js';
import { CONSENT } from '../helpers.js';

// Both are CommonJS with a default export.
const Ajv = ((AjvModule as unknown as { default?: unknown }).default ?? AjvModule) as typeof AjvModule;
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as typeof addFormatsModule;

function validator() {
  const ajv = new Ajv({ allErrors: true, strict: true });
  addFormats(ajv);
  return ajv.compile(configJsonSchema());
}

const GOOD = {
  dataDir: '/var/lib/agent/tmux-drive',
  worker: { maxSessions: 4 },
  defaults: { cols: 120, rows: 40 },
  allow: [
    { id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT },
    {
      id: 'claude',
      match: { path: '/usr/local/bin/claude', argsPrefix: ['--permission-mode', 'default'] },
      scope: { filesystem: 'home', network: 'full', credentialPaths: ['/home/me/.claude'] },
      profile: 'claude-code',
      passEnv: ['ANTHROPIC_API_KEY'],
      limits: { maxSessions: 2 },
      consent: CONSENT,
    },
  ],
  drive: { maxCostUsd: null },
};

describe('docs/config.schema.json', () => {
  it('is exactly what tools/config-schema.ts generates from the valibot schema now', () => {
    expect(readFileSync(schemaPath(), 'utf8')).toBe(renderConfigSchema());
  });

  it('accepts what the valibot schema accepts', () => {
    const validate = validator();
    expect(validate(GOOD), JSON.stringify(validate.errors)).toBe(true);
    expect(() => validateConfig(GOOD, { fromFile: true })).not.toThrow();
    expect(validate({})).toBe(true);
  });

  it('rejects an unknown key anywhere (additionalProperties: false), like the valibot schema', () => {
    const validate = validator();
    const variants: Array<[string, unknown]> = [
      ['top level', { ...GOOD, bogus: 1 }],
      ['worker', { ...GOOD, worker: { maxSessions: 2, threads: 4 } }],
      ['allow entry', { allow: [{ ...GOOD.allow[0], shell: true }] }],
      ['match', { allow: [{ ...GOOD.allow[0], match: { path: '/bin/bash', sha: 'x' } }] }],
      ['scope', { allow: [{ ...GOOD.allow[0], scope: { filesystem: 'workspace', writable: ['/'] } }] }],
      ['consent', { allow: [{ ...GOOD.allow[0], consent: { ...CONSENT, by: 'me' } }] }],
      ['drive', { drive: { readMode: 'digest', turbo: true } }],
    ];
    for (const [where, config] of variants) {
      expect(validate(config), where).toBe(false);
      expect(validate.errors?.some((e) => e.keyword === 'additionalProperties'), where).toBe(true);
      expect(() => validateConfig(config, { fromFile: true }), where).toThrow(expect.objectContaining({ code: 'CONFIG_INVALID' }));
    }
  });

  it('rejects what the valibot schema rejects: missing consent, a bad enum, a bad hash', () => {
    const validate = validator();
    expect(validate({ allow: [{ id: 'x', match: { path: '/bin/x' } }] })).toBe(false);
    expect(validate({ allow: [{ ...GOOD.allow[0], scope: { network: 'some' } }] })).toBe(false);
    expect(validate({ allow: [{ ...GOOD.allow[0], match: { path: '/bin/bash', hash: 'md5:abc' } }] })).toBe(false);
    expect(validate({ allow: [{ ...GOOD.allow[0], consent: { acknowledgedRisk: false, acknowledgedAt: CONSENT.acknowledgedAt } }] })).toBe(false);
  });
});
