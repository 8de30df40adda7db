/** Reads an operator's config file (YAML or JSON) or takes an object, and fills in the defaults. */
import { closeSync, fstatSync, openSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from '../common/errors.js';
import { validateConfig } from '../policy/config.js';
import { resolveDataDir } from './data-dir.js';
import type { AllowEntry, DriverConfig, DriverConfigInput } from '../policy/config-schema.js';

export function defaultDataDir(env: NodeJS.ProcessEnv = process.env): string {
  const state = env.XDG_STATE_HOME && env.XDG_STATE_HOME.startsWith('/') ? env.XDG_STATE_HOME : join(homedir(), '.local', 'state');
  return join(state, 'tmux-drive');
}

/** The built-in allowlist used when no config is given: the user's shell, workspace-only, no network. */
export function defaultShellEntry(env: NodeJS.ProcessEnv = process.env): AllowEntry {
  const shell = env.SHELL && env.SHELL.startsWith('/') ? env.SHELL : '/bin/bash';
  return {
    id: 'shell',
    match: { path: shell, argsPrefix: [] },
    scope: { filesystem: 'workspace', paths: [], network: 'none', hosts: [], credentialPaths: [], uid: 'daemon' },
    profile: 'shell',
    autoAnswer: 'safe-only',
    hintPatterns: [],
    env: {},
    passEnv: [],
    backend: 'tmux',
    consent: { acknowledgedRisk: true, acknowledgedAt: '1970-01-01T00:00:00Z' },
    limits: {},
    approveOnCreate: false,
  };
}

/** A config is written by hand: 1 MiB holds thousands of allow entries, and bounds what a typo'd path (a log file, /dev/zero) can cost. */
export const MAX_CONFIG_FILE_BYTES = 1024 * 1024;

/** The text of an operator's config file: a regular file of at most MAX_CONFIG_FILE_BYTES. */
function readConfigFile(source: string): string {
  let fd: number;
  try {
    fd = openSync(source, 'r');
  } catch (err) {
    throw new ConfigError(`cannot read config file ${source}: ${(err as Error).message}`, [], 'CONFIG_UNREADABLE');
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ConfigError(`cannot read config file ${source}: not a regular file`, [], 'CONFIG_UNREADABLE');
    if (st.size > MAX_CONFIG_FILE_BYTES) {
      throw new ConfigError(`config file ${source} is ${st.size} bytes; a config is at most ${MAX_CONFIG_FILE_BYTES} bytes`, [{ path: '(file)', message: `at most ${MAX_CONFIG_FILE_BYTES} bytes` }]);
    }
    return readFileSync(fd, 'utf8');
  } catch (err) {
    if (err instanceof ConfigError) throw err;
    throw new ConfigError(`cannot read config file ${source}: ${(err as Error).message}`, [], 'CONFIG_UNREADABLE');
  } finally {
    closeSync(fd);
  }
}

export interface LoadedConfig {
  readonly config: DriverConfig;
  readonly dataDir: string;
  /** Where the config came from: a file path, 'object', or 'built-in default'. */
  readonly source: string;
}

/**
 * `config` may be a path to a YAML/JSON file (operator-owned: the only place that may set
 * unsafeDisableSandbox), an object, or absent (the built-in default allowing `shell`).
 */
export function loadConfig(config?: DriverConfigInput | string, dataDirOverride?: string): LoadedConfig {
  let parsed: DriverConfig;
  let source: string;
  if (typeof config === 'string') {
    source = resolve(config);
    const text = readConfigFile(source);
    let raw: unknown;
    try {
      raw = source.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    } catch (err) {
      throw new ConfigError(`cannot read config file ${source}: ${(err as Error).message}`, [], 'CONFIG_UNREADABLE');
    }
    parsed = validateConfig(raw, { fromFile: true, source });
  } else if (config !== undefined) {
    source = 'object';
    parsed = validateConfig(config, { fromFile: false, source });
  } else {
    source = 'built-in default';
    parsed = validateConfig({}, { fromFile: false, source });
    parsed = { ...parsed, allow: [defaultShellEntry()] };
  }
  const dataDir = resolveDataDir(dataDirOverride ?? parsed.dataDir ?? defaultDataDir());
  return { config: parsed, dataDir, source };
}
