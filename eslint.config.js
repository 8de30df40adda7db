// The lint backstop of the pure-layer fence (docs/architecture.md, "The fence"). The compiler keeps
// the same rules through lib/<layer>/tsconfig.json; this catches what a type check cannot see
// (a global that some typings happen to declare, an import the tsconfig's include list lets
// through) and says why in its message. test/architecture/fence.test.ts proves both reject each
// kind of breach in each layer.
import { builtinModules } from 'node:module';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

/** Each pure layer: the lower layers it may import, and the packages it may import. */
const PURE_LAYERS = {
  common: { layers: [], packages: [] },
  control: { layers: ['common'], packages: [] },
  emulator: { layers: ['common', 'control'], packages: ['@xterm/headless', '@xterm/addon-serialize'] },
  perceive: { layers: ['common', 'control'], packages: ['valibot'] },
  policy: { layers: ['common', 'control'], packages: ['valibot'] },
};

const CLOCK = 'a pure layer reads time and arms timers only through the Clock it is given (lib/common/clock.ts)';
const HOST = 'a pure layer does no I/O and sees no host: that lives in backends/, journal/ or the session';
const DOM = 'there is no DOM in a pure layer';

const RESTRICTED_GLOBALS = [
  ...['setTimeout', 'setInterval', 'setImmediate', 'clearTimeout', 'clearInterval', 'clearImmediate', 'queueMicrotask', 'requestAnimationFrame', 'cancelAnimationFrame', 'requestIdleCallback', 'performance'].map(
    (name) => ({ name, message: CLOCK }),
  ),
  ...['process', 'Buffer', 'global', 'require', 'module', '__dirname', '__filename', 'fetch', 'console'].map((name) => ({ name, message: HOST })),
  ...['window', 'document', 'navigator', 'self', 'location', 'localStorage', 'HTMLElement', 'Event', 'EventTarget'].map((name) => ({ name, message: DOM })),
];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/** The rules for a file `depth` folders below lib/<layer>/ (its imports climb that much more to reach lib/). */
function layerRules(layer, { layers, packages }, depth) {
  const toLib = `^(\\.\\./){${depth + 1}}`;
  const others = layers.length > 0 ? `${toLib}(?!(${layers.join('|')})/)` : toLib;
  const otherPackages = `^(?!\\.\\.?/|node:)${packages.length > 0 ? `(?!(${packages.map(escape).join('|')})$)` : ''}`;
  return {
    'no-restricted-globals': ['error', ...RESTRICTED_GLOBALS],
    'no-restricted-properties': ['error', ...RESTRICTED_GLOBALS.map(({ name, message }) => ({ object: 'globalThis', property: name, message }))],
    'no-restricted-imports': [
      'error',
      {
        paths: builtinModules.map((name) => ({ name, message: HOST })),
        patterns: [
          { regex: '^node:', message: HOST },
          { regex: others, message: `lib/${layer} may import ${layers.length > 0 ? layers.map((l) => `lib/${l}`).join(' and ') : 'no other layer'} (docs/architecture.md)` },
          { regex: otherPackages, message: `lib/${layer} may import ${packages.length > 0 ? packages.join(', ') : 'no package'}: a new one is a design decision (docs/architecture.md)` },
        ],
      },
    ],
    'no-restricted-syntax': [
      'error',
      { selector: 'ImportExpression', message: 'no dynamic import in a pure layer: its imports are static, where the fence sees them' },
      { selector: 'TSImportType', message: 'no import() type in a pure layer: import the type statically, where the fence sees it' },
    ],
    // A @ts-ignore would open the compiler's fence for a line.
    '@typescript-eslint/ban-ts-comment': ['error', { 'ts-ignore': true, 'ts-expect-error': true, 'ts-nocheck': true }],
  };
}

export default defineConfig(
  { ignores: ['dist/', 'node_modules/', '.tmp/', 'bench/results/'] },
  ...Object.entries(PURE_LAYERS).flatMap(([layer, allowed]) =>
    [0, 1, 2].map((depth) => ({
      files: [`lib/${layer}/${'*/'.repeat(depth)}*.ts`],
      languageOptions: { parser: tseslint.parser },
      plugins: { '@typescript-eslint': tseslint.plugin },
      // An eslint-disable comment would open the backstop for a line.
      linterOptions: { noInlineConfig: true },
      rules: layerRules(layer, allowed, depth),
    })),
  ),
  // Deeper than lib/<layer>/a/b/: refused, so that no file escapes the rules above.
  { files: ['lib/{common,control,emulator,perceive,policy}/*/*/*/**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { 'no-restricted-syntax': ['error', { selector: 'Program', message: 'a pure layer nests two folders at most (eslint.config.js)' }] } },
);
