/**
 * Issue 10, item 4: relative paths in the config. `match: { path: 'bash' }` was resolved against
 * the host process's current directory, so a `./bash` planted there ran. Every path of the config
 * is now absolute or a CONFIG_INVALID naming its key, refused before anything exists on disk; and
 * the PATH lookup of tmux and bwrap skips relative entries for the same reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, Driver } from '../../lib/index.js';
import { validateConfig } from '../../lib/policy/config.js';
import { findExecutable } from '../../lib/launch/plan-launch.js';
import { CONSENT, allow } from '../helpers.js';

let planted: string;

beforeAll(() => {
  // /var/tmp: visible (read-only) inside a workspace jail, where /tmp is a private tmpfs; on the
  // old code the pane showed PLANTED-PROGRAM-RAN.
  planted = mkdtempSync('/var/tmp/td-planted-');
  const script = '#!/bin/sh\necho PLANTED-PROGRAM-RAN\nexec /bin/sh\n';
  for (const name of ['bash', 'tmux', 'bwrap']) {
    writeFileSync(join(planted, name), script);
    chmodSync(join(planted, name), 0o755);
  }
  mkdirSync(join(planted, 'bin'));
  writeFileSync(join(planted, 'bin', 'tool'), script);
  chmodSync(join(planted, 'bin', 'tool'), 0o755);
});

afterAll(() => {
  rmSync(planted, { recursive: true, force: true });
});

function issuesOf(config: unknown, fromFile = true): { path: string; message: string }[] {
  try {
    validateConfig(config, { fromFile });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).code).toBe('CONFIG_INVALID');
    return [...(err as ConfigError).issues];
  }
  return [];
}

describe('every path in the config is absolute', () => {
  it.each([['bash'], ['bin/tool'], ['./bash'], ['../bin/bash'], ['~/bin/tool'], ['']])('match.path %j is a config error naming allow.0.match.path', (path) => {
    const issues = issuesOf({ allow: [allow('bash', path)] });
    expect(issues).toEqual([{ path: 'allow.0.match.path', message: expect.stringMatching(/absolute path/) }]);
  });

  it('names the key of each relative path: listed paths, credential paths, the data dir, an identity file', () => {
    const issues = issuesOf({
      dataDir: 'state/tmux-drive',
      allow: [allow('a', '/bin/bash'), allow('b', '/bin/bash', { scope: { filesystem: 'listed-paths', paths: ['/srv/ok', 'listed-a'], credentialPaths: ['.aws/credentials'] } })],
      hosts: [{ id: 'h', ssh: { host: 'example.org', user: 'me', identityFile: 'id_ed25519' } }],
    });
    expect(issues.map((i) => i.path).sort()).toEqual(['allow.1.scope.credentialPaths.0', 'allow.1.scope.paths.1', 'dataDir', 'hosts.0.ssh.identityFile']);
  });

  it('refuses "~" where it is not expanded (not silently taken as a directory named ~)', () => {
    const issues = issuesOf({ allow: [allow('a', '/bin/bash', { scope: { filesystem: 'listed-paths', paths: ['~/src'] } })] });
    expect(issues).toEqual([{ path: 'allow.0.scope.paths.0', message: expect.stringContaining('"~" are not expanded') }]);
  });

  it('credentialPaths take "~" and "~/…" (the host user\'s home, expanded at launch), never "~user" nor a relative path', () => {
    expect(issuesOf({ allow: [allow('a', '/bin/bash', { scope: { credentialPaths: ['~/.config/gh', '~'] } })] })).toEqual([]);
    const issues = issuesOf({ allow: [allow('a', '/bin/bash', { scope: { credentialPaths: ['~root/.ssh', '~.ssh', '.aws'] } })] });
    expect(issues).toEqual([0, 1, 2].map((i) => ({ path: `allow.0.scope.credentialPaths.${i}`, message: expect.stringContaining('"~user" are not expanded') })));
  });

  it('refuses control characters in a path (NUL, newline), naming the key', () => {
    expect(issuesOf({ allow: [allow('a', '/bin/ba\0sh')] })).toEqual([{ path: 'allow.0.match.path', message: expect.stringContaining('control characters') }]);
    expect(issuesOf({ allow: [allow('a', '/bin/bash', { scope: { filesystem: 'listed-paths', paths: ['/srv/a\nb'] } })] })[0]?.path).toBe('allow.0.scope.paths.0');
  });

  it('accepts absolute paths, also with .. and symlinks in them (realpath at launch)', () => {
    expect(issuesOf({ allow: [allow('a', '/usr/bin/../bin/bash', { scope: { credentialPaths: ['/etc/hostname'] } })], dataDir: '/var/lib/td' })).toEqual([]);
  });
});

describe('a planted ./bash in the host process\'s current directory', () => {
  it('never runs: Driver.open refuses the relative entry before creating anything', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'td-rel-')), 'data');
    const before = process.cwd();
    process.chdir(planted);
    try {
      const err = await Driver.open({ dataDir, config: { allow: [{ id: 'bash', match: { path: 'bash' }, consent: CONSENT }] } }).then(
        async (d) => {
          // The old code got here: the planted program ran in the pane.
          const s = await d.create({ allowId: 'bash' }).catch((e: unknown) => e);
          if (s && typeof s === 'object' && 'wait' in s) {
            await (s as { wait(o: object): Promise<unknown> }).wait({ forText: 'PLANTED-PROGRAM-RAN', timeoutMs: 5000 });
            await (s as { kill(): Promise<void> }).kill();
          }
          await d.close();
          return undefined;
        },
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).issues).toEqual([{ path: 'allow.0.match.path', message: expect.stringMatching(/absolute path/) }]);
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      process.chdir(before);
      rmSync(join(dataDir, '..'), { recursive: true, force: true });
    }
  });

  it('a relative PATH entry (".", "bin") is skipped when tmux and bwrap are looked up', () => {
    const before = process.cwd();
    process.chdir(planted);
    try {
      const found = findExecutable('tmux', `.:bin::${process.env.PATH ?? '/usr/bin:/bin'}`);
      expect(found).toBeDefined();
      expect(found?.startsWith('/')).toBe(true);
      expect(found?.startsWith(planted)).toBe(false);
      expect(findExecutable('tool', 'bin:.')).toBeUndefined();
    } finally {
      process.chdir(before);
    }
  });
});
