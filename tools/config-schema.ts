/**
 * Writes docs/config.schema.json: the JSON Schema of the operator's config file, generated from
 * the valibot schema (lib/policy/config-schema.ts, the single source) so that editors can complete
 * and check a config. Closed like the valibot schema: `additionalProperties: false` everywhere.
 *
 *   npm run build && node dist/tools/config-schema.js          # (re)write docs/config.schema.json
 *   node dist/tools/config-schema.js --check                    # exit 1 if the committed file drifted
 *
 * A test compares the committed file with what this generates, so it never drifts.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { toJsonSchema } from '@valibot/to-json-schema';
import { DriverConfigSchema } from '../lib/policy/config-schema.js';

/** The JSON Schema object (draft-07, what editors and yaml-language-server read). */
export function configJsonSchema(): Record<string, unknown> {
  // errorMode 'throw': a valibot construct the converter cannot express must fail the build, not
  // be silently dropped from the schema editors check against.
  const body = toJsonSchema(DriverConfigSchema, { target: 'draft-07', errorMode: 'throw' }) as Record<string, unknown>;
  const { $schema: _ignored, ...rest } = body;
  return {
    $schema: 'http://json-schema.org/draft-07/schema#',
    title: 'tmux-drive configuration',
    description:
      'The operator config file of tmux-drive (YAML or JSON). Closed: an unknown key anywhere is an error. Generated from lib/policy/config-schema.ts by tools/config-schema.ts; do not edit by hand.',
    ...rest,
  };
}

/** The file's text: two-space indented JSON with a final newline. */
export function renderConfigSchema(): string {
  return `${JSON.stringify(configJsonSchema(), null, 2)}\n`;
}

/** The repository root: the nearest directory above this file holding package.json. */
export function repoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`no package.json above ${from}`);
    dir = up;
  }
}

export function schemaPath(): string {
  return join(repoRoot(), 'docs', 'config.schema.json');
}

function main(argv: readonly string[]): number {
  const target = schemaPath();
  const text = renderConfigSchema();
  if (argv.includes('--check')) {
    const current = existsSync(target) ? readFileSync(target, 'utf8') : '';
    if (current !== text) {
      process.stderr.write(`config-schema: ${target} is out of date; run: node dist/tools/config-schema.js\n`);
      return 1;
    }
    process.stdout.write(`config-schema: ${target} is up to date\n`);
    return 0;
  }
  writeFileSync(target, text);
  process.stdout.write(`config-schema: wrote ${target}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
