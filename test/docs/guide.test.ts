/**
 * docs/guide.md's configuration reference is checked against the JSON Schema generated from the
 * valibot schema: every key (top level, allow entries, nested objects) has a row, no row names a
 * key the schema lacks, and each documented default is the schema's default.
 */
import { describe, expect, it } from 'vitest';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configJsonSchema, repoRoot } from '../../tools/config-schema.js';

interface JsonSchemaNode {
  readonly type?: string;
  readonly properties?: Record<string, JsonSchemaNode>;
  readonly items?: JsonSchemaNode;
  readonly default?: unknown;
}

/** Every key path of the schema, with its default: `worker.maxSessions`, `allow[].scope.paths`. */
function schemaKeys(node: JsonSchemaNode, prefix = ''): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [key, child] of Object.entries(node.properties ?? {})) {
    const path = prefix ? `${prefix}.${key}` : key;
    out.set(path, child.default);
    for (const [k, v] of schemaKeys(child, path)) out.set(k, v);
    if (child.type === 'array' && child.items?.properties) for (const [k, v] of schemaKeys(child.items, `${path}[]`)) out.set(k, v);
  }
  return out;
}

const guide = readFileSync(join(repoRoot(), 'docs', 'guide.md'), 'utf8');

function section(title: string): string {
  const start = guide.indexOf(`\n## ${title}\n`);
  expect(start, `section "${title}"`).toBeGreaterThan(-1);
  const next = guide.indexOf('\n## ', start + 1);
  return guide.slice(start, next === -1 ? undefined : next);
}

/** Table rows of the reference: key → default cell. Cells split on unescaped pipes. */
function referenceRows(): Map<string, string> {
  const rows = new Map<string, string>();
  for (const line of section('Configuration reference').split('\n')) {
    if (!line.startsWith('| `')) continue;
    const cells = line.split(/(?<!\\)\|/).slice(1, -1).map((c) => c.trim());
    const key = /^`([^`]+)`$/.exec(cells[0] ?? '')?.[1];
    expect(key, line).toBeDefined();
    expect(rows.has(key as string), `duplicate row ${key}`).toBe(false);
    rows.set(key as string, cells[2] ?? '');
  }
  return rows;
}

describe('docs/guide.md configuration reference', () => {
  const keys = schemaKeys(configJsonSchema() as JsonSchemaNode);
  const rows = referenceRows();

  it('has a row for every key of the schema, top level and allow entries included', () => {
    for (const key of ['allow', 'worker', 'dataDir', 'unsafeDisableSandbox', 'allow[].consent.acknowledgedAt', 'allow[].scope.filesystem']) expect(keys.has(key)).toBe(true);
    expect([...keys.keys()].filter((k) => !rows.has(k))).toEqual([]);
  });

  it('documents no key the schema lacks', () => {
    expect([...rows.keys()].filter((k) => !keys.has(k))).toEqual([]);
  });

  it('gives each key the default the schema has', () => {
    for (const [key, def] of keys) {
      expect(rows.get(key), key).toBe(def === undefined ? '—' : `\`${JSON.stringify(def)}\``);
    }
  });

  it('links the schema, and security.md when it exists', () => {
    expect(guide).toContain('(config.schema.json)');
    if (guide.includes('(security.md)')) expect(existsSync(join(repoRoot(), 'docs', 'security.md'))).toBe(true);
  });
});

describe('docs/config.md: every key, acts or refused', () => {
  const configDoc = readFileSync(join(repoRoot(), 'docs', 'config.md'), 'utf8');
  const keys = schemaKeys(configJsonSchema() as JsonSchemaNode);

  it('has a row for every key of the schema, saying "acts" or "refused" and naming a test', () => {
    const table = configDoc.slice(configDoc.indexOf('\n## Every key\n'));
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    const missing: string[] = [];
    for (const key of keys.keys()) {
      const row = rows.find((r) => r.startsWith(`| \`${key}\` |`));
      if (!row) {
        missing.push(key);
        continue;
      }
      expect(row, key).toMatch(/\b(acts|act|refused)\b/);
    }
    expect(missing).toEqual([]);
  });

  it('the guide no longer says a key is accepted but not acted on (allow[].profile, autoAnswer act)', () => {
    expect(guide).not.toMatch(/not (yet )?acted on|ahead of the code that uses them/);
  });
});
