/**
 * The pure-layer fence (docs/architecture.md): for each pure layer, a file that arms a timer from a
 * global, imports `node:*`, reads the DOM, or imports a layer it may not is rejected by the
 * compiler (the layer's own tsconfig, the one `npm run build` runs) and by the lint backstop (the
 * eslint config `npm run lint` runs). The breaches are virtual files placed inside each layer, so
 * the tree is never touched; the real tree passes both, which this file also checks (that is how
 * `npm test` fails when a pure layer breaks the fence).
 */
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const LAYERS = ['common', 'control', 'emulator', 'perceive', 'policy'] as const;
type Layer = (typeof LAYERS)[number];

/** A layer each one may not import: the one above it in the house, or a sibling. */
const FORBIDDEN_LAYER: Readonly<Record<Layer, string>> = {
  common: '../control/ids.js',
  control: '../emulator/cell-grid.js',
  emulator: '../perceive/screen.js',
  perceive: '../emulator/cell-grid.js',
  policy: '../emulator/mirror.js',
};

/** A legitimate import of each layer, so a probe that passes shows the fence is not shut on everything. */
const ALLOWED_IMPORT: Readonly<Record<Layer, string>> = {
  common: './errors.js',
  control: '../common/errors.js',
  emulator: '../control/ids.js',
  perceive: '../control/encode.js',
  policy: '../common/errors.js',
};

interface Breach {
  readonly name: string;
  readonly source: (layer: Layer) => string;
  /** What tsc says, by diagnostic code. */
  readonly tsCodes: readonly number[];
  readonly lintRule: string;
}

const BREACHES: readonly Breach[] = [
  { name: 'a setTimeout', source: () => 'export const timer = setTimeout(() => undefined, 10);\n', tsCodes: [2304], lintRule: 'no-restricted-globals' },
  { name: 'a queueMicrotask', source: () => 'queueMicrotask(() => undefined);\nexport {};\n', tsCodes: [2304], lintRule: 'no-restricted-globals' },
  { name: 'globalThis.setInterval', source: () => 'export const timer = globalThis.setInterval(() => undefined, 10);\n', tsCodes: [7017], lintRule: 'no-restricted-properties' },
  { name: "an import of 'node:fs'", source: () => "import { readFileSync } from 'node:fs';\nexport const read = readFileSync;\n", tsCodes: [2307], lintRule: 'no-restricted-imports' },
  { name: 'the DOM (document)', source: () => 'export const title = document.title;\n', tsCodes: [2584], lintRule: 'no-restricted-globals' },
  { name: "Node's process", source: () => 'export const pid = process.pid;\n', tsCodes: [2591], lintRule: 'no-restricted-globals' },
  {
    name: 'an import of a layer it may not import',
    source: (layer) => `import * as other from '${FORBIDDEN_LAYER[layer]}';\nexport const o = other;\n`,
    tsCodes: [6307],
    lintRule: 'no-restricted-imports',
  },
  {
    name: 'an import from above lib/ (the session)',
    source: () => "import * as session from '../session/session.js';\nexport const s = session;\n",
    tsCodes: [6307],
    lintRule: 'no-restricted-imports',
  },
];

/** Compiles a layer the way `tsc -b tsconfig.fence.json` does, optionally with one extra virtual file. */
class LayerCompiler {
  readonly #parsed = new Map<Layer, ts.ParsedCommandLine>();
  /** Library and layer files parse once for all programs (the options are the same but for paths). */
  readonly #sourceFiles = new Map<string, ts.SourceFile>();

  config(layer: Layer): ts.ParsedCommandLine {
    let parsed = this.#parsed.get(layer);
    if (!parsed) {
      const host: ts.ParseConfigFileHost = { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => expect.fail(ts.flattenDiagnosticMessageText(d.messageText, '\n')) };
      parsed = ts.getParsedCommandLineOfConfigFile(join(ROOT, 'lib', layer, 'tsconfig.json'), undefined, host);
      if (!parsed) throw new Error(`no config for ${layer}`);
      expect(parsed.errors).toEqual([]);
      this.#parsed.set(layer, parsed);
    }
    return parsed;
  }

  /** Diagnostics of the probe file, or of the whole layer when there is none. */
  diagnose(layer: Layer, probe?: { path: string; text: string }): readonly ts.Diagnostic[] {
    const { options, fileNames } = this.config(layer);
    const host = ts.createCompilerHost(options);
    const getSourceFile = host.getSourceFile.bind(host);
    host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
      if (probe && resolve(fileName) === probe.path) return ts.createSourceFile(fileName, probe.text, languageVersion, true);
      // The emulator maps @xterm/xterm elsewhere: its resolution differs, its files do not.
      const cached = this.#sourceFiles.get(fileName);
      if (cached) return cached;
      const created = getSourceFile(fileName, languageVersion, onError, shouldCreate);
      if (created) this.#sourceFiles.set(fileName, created);
      return created;
    };
    const fileExists = host.fileExists.bind(host);
    host.fileExists = (fileName) => (probe !== undefined && resolve(fileName) === probe.path) || fileExists(fileName);
    const rootNames = probe ? [...fileNames, probe.path] : fileNames;
    const program = ts.createProgram({ rootNames, options, host });
    if (!probe) return ts.getPreEmitDiagnostics(program);
    const file = program.getSourceFile(probe.path);
    if (!file) throw new Error(`the probe ${probe.path} is not in the program`);
    return [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics(), ...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)];
  }
}

function describeDiagnostics(diagnostics: readonly ts.Diagnostic[]): string[] {
  return diagnostics.map((d) => `TS${d.code} ${d.file ? d.file.fileName.slice(ROOT.length + 1) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`);
}

const compiler = new LayerCompiler();
let eslint: ESLint;

beforeAll(() => {
  eslint = new ESLint({ cwd: ROOT });
});

async function lintRules(layer: Layer, text: string, file = 'fence-probe.ts'): Promise<string[]> {
  const [result] = await eslint.lintText(text, { filePath: join(ROOT, 'lib', layer, file) });
  expect(result?.fatalErrorCount ?? 0).toBe(0);
  return (result?.messages ?? []).map((m) => m.ruleId ?? `fatal: ${m.message}`);
}

describe('the real tree passes the fence', () => {
  it.each(LAYERS)('lib/%s compiles under its own tsconfig', (layer) => {
    expect(describeDiagnostics(compiler.diagnose(layer))).toEqual([]);
  });

  it('lint finds nothing in the pure layers', async () => {
    const results = await eslint.lintFiles(LAYERS.map((l) => `lib/${l}`));
    const problems = results.flatMap((r) => r.messages.map((m) => `${r.filePath.slice(ROOT.length + 1)}:${m.line} ${m.ruleId}: ${m.message}`));
    expect(problems).toEqual([]);
    expect(results.length).toBeGreaterThan(40);
  });

  it('the emulator compiles without the DOM lib, which xterm typings would pull in', () => {
    const { options, fileNames } = compiler.config('emulator');
    const program = ts.createProgram({ rootNames: fileNames, options });
    const files = program.getSourceFiles().map((f) => f.fileName);
    expect(files.some((f) => f.endsWith('/@xterm/addon-serialize/typings/addon-serialize.d.ts'))).toBe(true);
    expect(files.filter((f) => /lib\.dom|@types\/node|@xterm\/xterm\//.test(f))).toEqual([]);
  });
});

describe.each(LAYERS)('lib/%s', (layer) => {
  const probePath = join(ROOT, 'lib', layer, 'fence-probe.ts');

  it('accepts a probe that keeps the rules (the fence is not simply shut)', async () => {
    const text = `import * as allowed from '${ALLOWED_IMPORT[layer]}';\nexport const bytes = new Uint8Array([1, 2]).length + Object.keys(allowed).length;\n`;
    expect(describeDiagnostics(compiler.diagnose(layer, { path: probePath, text }))).toEqual([]);
    expect(await lintRules(layer, text)).toEqual([]);
  });

  it.each(BREACHES)('rejects $name, in the compiler and in lint', async (breach) => {
    const text = breach.source(layer);
    const codes = compiler.diagnose(layer, { path: probePath, text }).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining([...breach.tsCodes]));
    expect(await lintRules(layer, text)).toContain(breach.lintRule);
  });
});

describe('a room inside a layer (lib/emulator/screen/)', () => {
  const probePath = join(ROOT, 'lib', 'emulator', 'screen', 'fence-probe.ts');

  it('may import its own layer and the ones below', async () => {
    const text = "import { charWidth } from '../char-width.js';\nimport { isPaneId } from '../../control/ids.js';\nexport const both = [charWidth, isPaneId];\n";
    expect(describeDiagnostics(compiler.diagnose('emulator', { path: probePath, text }))).toEqual([]);
    expect(await lintRules('emulator', text, 'screen/fence-probe.ts')).toEqual([]);
  });

  it('may not import another layer', async () => {
    const text = "import * as screen from '../../perceive/screen.js';\nexport const s = screen;\n";
    expect(compiler.diagnose('emulator', { path: probePath, text }).map((d) => d.code)).toContain(6307);
    expect(await lintRules('emulator', text, 'screen/fence-probe.ts')).toContain('no-restricted-imports');
  });

  it('nor arm a timer', async () => {
    const text = 'export const timer = setTimeout(() => undefined, 10);\n';
    expect(compiler.diagnose('emulator', { path: probePath, text }).map((d) => d.code)).toContain(2304);
    expect(await lintRules('emulator', text, 'screen/fence-probe.ts')).toContain('no-restricted-globals');
  });
});

describe('what only lint sees', () => {
  it.each(LAYERS)('lib/%s may not open the fence with a comment', async (layer) => {
    const text = '// eslint-disable-next-line no-restricted-globals\n// @ts-ignore\nexport const timer = setTimeout(() => undefined, 10);\n';
    const rules = await lintRules(layer, text);
    expect(rules).toContain('no-restricted-globals');
    expect(rules).toContain('@typescript-eslint/ban-ts-comment');
  });

  it('a package a layer was not given is refused (xterm outside the emulator, valibot in control)', async () => {
    expect(await lintRules('perceive', "import '@xterm/headless';\n")).toContain('no-restricted-imports');
    expect(await lintRules('control', "import * as v from 'valibot';\nexport const s = v.string();\n")).toContain('no-restricted-imports');
    expect(await lintRules('emulator', "import xterm from '@xterm/headless';\nexport const t = xterm;\n")).toEqual([]);
  });

  it('a file nested deeper than two folders is refused', async () => {
    expect(await lintRules('control', 'export const x = 1;\n', 'a/b/c/deep.ts')).toContain('no-restricted-syntax');
  });

  it('a dynamic import is refused', async () => {
    expect(await lintRules('policy', "export const load = () => import('../common/errors.js');\n")).toContain('no-restricted-syntax');
  });
});
