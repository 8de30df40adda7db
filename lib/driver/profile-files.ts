/**
 * Reads the profile files (profiles/*.json) and hands the parsed JSON to the pure loader
 * (lib/perceive/profile.ts). The built-in directory is found relative to this module, which runs
 * both as TypeScript source (lib/driver/profile-files.ts, under vitest) and compiled
 * (dist/lib/profile-files.js): `profiles/` is one or two levels up.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { ConfigError } from '../common/errors.js';
import { loadProfiles, type ProfileSet, type ProfileSource } from '../perceive/profile.js';

/** The package's own profiles/ directory. */
export function builtinProfilesDir(): string {
  for (const rel of ['../../../profiles/', '../../profiles/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'shell.json'))) return dir;
  }
  throw new ConfigError('the built-in profiles directory (profiles/shell.json) was not found next to the package', [], 'CONFIG_UNREADABLE');
}

/** Every *.json in `dirs` (default: the built-in directory), validated together (ids are unique across them). */
export function loadProfileFiles(dirs: readonly string[] = [builtinProfilesDir()]): ProfileSet {
  const sources: ProfileSource[] = [];
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith('.json')).sort();
    } catch (err) {
      throw new ConfigError(`cannot read the profiles directory ${dir}: ${(err as Error).message}`, [], 'CONFIG_UNREADABLE');
    }
    for (const name of names) {
      const path = join(dir, name);
      let data: unknown;
      try {
        data = JSON.parse(readFileSync(path, 'utf8'));
      } catch (err) {
        throw new ConfigError(`cannot read profile ${path}: ${(err as Error).message}`, [{ path: name, message: (err as Error).message }], 'CONFIG_UNREADABLE');
      }
      sources.push({ name, data });
    }
  }
  return loadProfiles(sources);
}
