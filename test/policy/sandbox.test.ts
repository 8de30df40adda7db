/** The bwrap argv of each scope, as data: what is hidden, what is exposed, and in which order. */
import { describe, expect, it } from 'vitest';
import { sandboxArgv, type SandboxInput } from '../../lib/policy/sandbox.js';
import type { Scope } from '../../lib/policy/config-schema.js';

const SCOPE: Scope = { filesystem: 'workspace', paths: [], network: 'none', hosts: [], credentialPaths: [], uid: 'dedicated' };
const BASE: SandboxInput = {
  bwrapPath: '/usr/bin/bwrap',
  scope: SCOPE,
  dataDir: '/home/dev/.local/state/tmux-drive',
  workspace: '/home/dev/.local/state/tmux-drive/workspace',
  userHome: '/home/dev',
  cwd: '/home/dev/.local/state/tmux-drive/workspace',
  argv: ['/usr/bin/bash', '--norc'],
};

/** The argv as [option, args…] groups, up to `--`. */
function options(argv: readonly string[]): string[][] {
  const arity: Record<string, number> = { '--bind': 2, '--ro-bind': 2, '--dev': 1, '--proc': 1, '--tmpfs': 1, '--chdir': 1, '--unsetenv': 1, '--cap-drop': 1 };
  const out: string[][] = [];
  for (let i = 1; i < argv.length && argv[i] !== '--'; ) {
    const opt = argv[i] ?? '';
    const n = arity[opt] ?? 0;
    out.push(argv.slice(i, i + 1 + n));
    i += 1 + n;
  }
  return out;
}
const at = (argv: readonly string[], group: readonly string[]): number => options(argv).findIndex((g) => g.join('\0') === group.join('\0'));

describe('sandboxArgv', () => {
  it('workspace/none: read-only root, hidden /tmp, /run, home and data dir, the workspace writable, no capabilities', () => {
    const argv = sandboxArgv(BASE);
    expect(options(argv)).toEqual([
      ['--ro-bind', '/', '/'],
      ['--dev', '/dev'],
      ['--proc', '/proc'],
      ['--tmpfs', '/tmp'],
      ['--tmpfs', '/run'],
      ['--tmpfs', '/home/dev'],
      ['--tmpfs', BASE.dataDir],
      ['--bind', BASE.workspace, BASE.workspace],
      ['--unshare-all'],
      ['--cap-drop', 'ALL'],
      ['--die-with-parent'],
      ['--chdir', BASE.cwd],
    ]);
    expect(argv.slice(argv.indexOf('--'))).toEqual(['--', '/usr/bin/bash', '--norc']);
    expect(argv).not.toContain('--share-net');
  });

  it('masks the data dir after every exposed path, so none can bring it back', () => {
    const argv = sandboxArgv({ ...BASE, scope: { ...SCOPE, filesystem: 'listed-paths', paths: ['/home/dev'], credentialPaths: ['/home/dev/.local'] } });
    const mask = at(argv, ['--tmpfs', BASE.dataDir]);
    expect(mask).toBeGreaterThan(at(argv, ['--bind', '/home/dev', '/home/dev']));
    expect(mask).toBeGreaterThan(at(argv, ['--ro-bind', '/home/dev/.local', '/home/dev/.local']));
    expect(at(argv, ['--bind', BASE.workspace, BASE.workspace])).toBeGreaterThan(mask);
  });

  it('home: binds the home writable (then masks the data dir inside it)', () => {
    const argv = sandboxArgv({ ...BASE, scope: { ...SCOPE, filesystem: 'home' } });
    expect(at(argv, ['--bind', '/home/dev', '/home/dev'])).toBeGreaterThan(-1);
    expect(at(argv, ['--tmpfs', '/home/dev'])).toBe(-1);
    expect(at(argv, ['--tmpfs', BASE.dataDir])).toBeGreaterThan(at(argv, ['--bind', '/home/dev', '/home/dev']));
  });

  it('full/full: writable root and the host network, the data dir still masked, capabilities still dropped', () => {
    const argv = sandboxArgv({ ...BASE, scope: { ...SCOPE, filesystem: 'full', network: 'full' } });
    expect(options(argv).slice(0, 3)).toEqual([['--bind', '/', '/'], ['--dev', '/dev'], ['--proc', '/proc']]);
    expect(argv).toContain('--share-net');
    expect(at(argv, ['--tmpfs', '/run'])).toBe(-1);
    expect(at(argv, ['--tmpfs', BASE.dataDir])).toBeGreaterThan(-1);
    expect(at(argv, ['--cap-drop', 'ALL'])).toBeGreaterThan(-1);
  });

  it('credential paths are bound read-only, after the writable ones', () => {
    const argv = sandboxArgv({ ...BASE, scope: { ...SCOPE, filesystem: 'listed-paths', paths: ['/srv/data'], credentialPaths: ['/srv/data/token'] } });
    expect(at(argv, ['--ro-bind', '/srv/data/token', '/srv/data/token'])).toBeGreaterThan(at(argv, ['--bind', '/srv/data', '/srv/data']));
  });

  it('re-exposes a program installed in the hidden home, read-only', () => {
    const argv = sandboxArgv({ ...BASE, argv: ['/home/dev/.local/share/claude/versions/2.0.0', '--help'] });
    expect(at(argv, ['--ro-bind', '/home/dev/.local/share/claude/versions/2.0.0', '/home/dev/.local/share/claude/versions/2.0.0'])).toBeGreaterThan(at(argv, ['--tmpfs', '/home/dev']));
  });

  it('re-exposes a program under /tmp or /run, and none that is visible anyway', () => {
    for (const bin of ['/tmp/tool/bin/x', '/run/current-system/sw/bin/x']) {
      expect(at(sandboxArgv({ ...BASE, argv: [bin] }), ['--ro-bind', bin, bin])).toBeGreaterThan(-1);
    }
    expect(options(sandboxArgv(BASE)).filter((g) => g[0] === '--ro-bind')).toEqual([['--ro-bind', '/', '/']]);
  });

  it('does not hide a home that is / or absent', () => {
    for (const userHome of ['/', '']) {
      const argv = sandboxArgv({ ...BASE, userHome });
      expect(options(argv).filter((g) => g[0] === '--tmpfs').map((g) => g[1])).toEqual(['/tmp', '/run', BASE.dataDir]);
    }
  });

  it('binds the read-only parts of the workspace after the workspace', () => {
    const projects = `${BASE.workspace}/projects`;
    const argv = sandboxArgv({ ...BASE, readOnly: [projects] });
    expect(at(argv, ['--ro-bind', projects, projects])).toBeGreaterThan(at(argv, ['--bind', BASE.workspace, BASE.workspace]));
  });

  it('hands the program its argv words untouched, after --', () => {
    const words = ['/usr/bin/python3', '-c', 'print("a; b")', '--bind', '/', '/', '$(id)'];
    const argv = sandboxArgv({ ...BASE, argv: words });
    expect(argv.slice(argv.indexOf('--') + 1)).toEqual(words);
  });
});
