/** Reads an operator's config file (YAML or JSON) or takes an object, and fills in the defaults. */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { ConfigError } from './errors.js';
import { validateConfig } from './policy/config.js';
import type { AllowEntry, DriverConfig, DriverConfigInput } from './policy/config-schema.js';

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
    scope: { filesystem: 'workspace', paths: [], network: 'none', hosts: [], credentialPaths: [], uid: 'dedicated' },
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
    let raw: unknown;
    try {
      const text = readFileSync(source, 'utf8');
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
  const dataDir = resolve(dataDirOverride ?? parsed.dataDir ?? defaultDataDir());
  return { config: parsed, dataDir, source };
}
