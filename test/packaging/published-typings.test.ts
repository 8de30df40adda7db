/**
 * Issue 13, packaging: the published package as a consumer installs it. `npm pack` makes the
 * tarball; a scratch project gets it unpacked in node_modules/tmux-drive beside ONLY the package's
 * production dependencies (and @types/node, which a consumer brings), none of its devDependencies:
 * the typings once imported @xterm/xterm (a devDependency) through @xterm/addon-serialize's, and a
 * consumer with skipLibCheck false failed with TS2307. The project type-checks with strict settings
 * and skipLibCheck false, and an import of the package runs.
 *
 * Offline: the dependencies are this checkout's own node_modules, linked in (no registry). The
 * links keep their place for the type-checker (preserveSymlinks), so a package's imports resolve
 * from the scratch project as in a real install, never from this checkout's devDependencies.
 * Uses dist/ (built when missing; `npm test` builds first).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { ROOT, ensureBuilt } from '../cli/dist.js';

let scratch: string;

/** The installed paths of the production dependency tree (top-level packages only: nested ones come with their parent). */
function productionPackages(): string[] {
  const out = execFileSync('npm', ['ls', '--omit=dev', '--all', '--parseable'], { cwd: ROOT, encoding: 'utf8' });
  const top = join(ROOT, 'node_modules');
  return [...new Set(out.split('\n').filter((p) => p.startsWith(`${top}/`) && !relative(top, p).includes('node_modules')))];
}

beforeAll(() => {
  ensureBuilt();
  scratch = mkdtempSync(join(tmpdir(), 'td-consumer-'));
  const packed = JSON.parse(execFileSync('npm', ['pack', '--json', '--pack-destination', scratch], { cwd: ROOT, encoding: 'utf8' })) as { filename: string }[];
  const tarball = join(scratch, packed[0]?.filename ?? '');
  const modules = join(scratch, 'node_modules');
  mkdirSync(join(modules, 'tmux-drive'), { recursive: true });
  execFileSync('tar', ['-xzf', tarball, '-C', join(modules, 'tmux-drive'), '--strip-components=1']);
  const consumerOwn = ['@types/node', 'undici-types'].map((p) => join(ROOT, 'node_modules', p));
  for (const pkg of [...productionPackages(), ...consumerOwn]) {
    const link = join(modules, relative(join(ROOT, 'node_modules'), pkg));
    mkdirSync(dirname(link), { recursive: true });
    symlinkSync(pkg, link);
  }
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'consumer', version: '0.0.0', type: 'module', private: true }));
  writeFileSync(
    join(scratch, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noUncheckedIndexedAccess: true,
        exactOptionalPropertyTypes: true,
        skipLibCheck: false,
        preserveSymlinks: true,
        types: ['node'],
        noEmit: true,
      },
      files: ['consumer.ts'],
    }),
  );
  writeFileSync(
    join(scratch, 'consumer.ts'),
    [
      "import { Driver, classifyScreen, loadConfig, TmuxDriveError, type SessionInfo } from 'tmux-drive';",
      'const infos: SessionInfo[] = [];',
      "export const surface = [typeof Driver.open, typeof classifyScreen, typeof loadConfig, TmuxDriveError.name, infos.length].join(',');",
      '',
    ].join('\n'),
  );
}, 60_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the published package, installed by a consumer', () => {
  it('the published typings import no devDependency', () => {
    // @xterm/xterm became a dependency when the console began serving it to browsers; the check
    // stays that no devDependency is needed by the typings or at run time.
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: Record<string, string>; dependencies: Record<string, string> };
    const devOnly = Object.keys(pkg.devDependencies).filter((name) => name !== '@types/node' && !(name in pkg.dependencies));
    expect(devOnly.length).toBeGreaterThan(0);
    // What the published typings import, by package name (a devDependency reached by a production
    // dependency's own dependencies, such as ajv through the MCP SDK, may be installed; it may not be imported).
    const typings = spawnSync('grep', ['-rhoE', "from '[^.'][^']*'", join(scratch, 'node_modules', 'tmux-drive', 'dist', 'lib'), '--include=*.d.ts'], { encoding: 'utf8' }).stdout;
    const imported = new Set(typings.split('\n').filter(Boolean).map((line) => line.slice(6, -1).split('/').slice(0, line.startsWith("from '@") ? 2 : 1).join('/')));
    expect(imported.size).toBeGreaterThan(0);
    expect(devOnly.filter((name) => imported.has(name))).toEqual([]);
  });

  it('type-checks with strict settings and skipLibCheck false (no TS2307/TS7016 for a devDependency)', () => {
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', scratch], { cwd: scratch, encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
    // ~10 s of CPU; the margin is for a machine shared with other test runs.
  }, 120_000);

  it('an import of the package runs', () => {
    const run = spawnSync(process.execPath, ['--input-type=module', '-e', "const m = await import('tmux-drive'); console.log([typeof m.Driver.open, typeof m.classifyScreen, typeof m.loadConfig].join(','));"], { cwd: scratch, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.trim()).toBe('function,function,function');
  });
});
