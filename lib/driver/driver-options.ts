/**
 * What the Driver's verbs accept, and their checks: Driver.open's options (with the config, its
 * hosts and the profiles it names, all loaded and checked before anything is created on disk) and
 * create()'s options (a closed set, a drive name, a terminal size).
 */
import { randomBytes } from 'node:crypto';
import type { Clock } from '../common/clock.js';
import { ConfigError, UsageError } from '../common/errors.js';
import { checkTerminalSize } from '../common/terminal-size.js';
import type { DriverConfig, DriverConfigInput } from '../policy/config-schema.js';
import type { ProfileSet } from '../perceive/profile.js';
import type { CreateRequest } from '../launch/launch-request.js';
import { BackendFactory } from './backend-factory.js';
import { loadConfig, type LoadedConfig } from './load-config.js';
import { builtinProfilesDir, loadProfileFiles } from './profile-files.js';

export interface DriverOptions {
  /** Overrides the config's dataDir. */
  readonly dataDir?: string;
  /** A config object, or a path to an operator's YAML/JSON file. Absent: allow only `shell`. */
  readonly config?: DriverConfigInput | string;
  /** Who drives (for logs). */
  readonly owner?: string;
  readonly logger?: Logger;
  /** Deadline for each tmux call, in ms (default 5000). */
  readonly tmuxTimeoutMs?: number;
  /**
   * Which durable drives of the journal to re-attach on open: 'all' (default: a daemon), or the
   * names of the drives this host needs (a CLI invocation), leaving the others to other hosts.
   */
  readonly reattach?: 'all' | readonly string[];
  readonly clock?: Clock;
  /** Extra profile directories loaded after the built-in one (ids stay unique across them). */
  readonly profileDirs?: readonly string[];
  /**
   * Live tmux servers of the data dir that the journal does not know (it was emptied or deleted)
   * make open() fail with JOURNAL_ORPHANS naming them; true adopts them instead (a `detached` row
   * with allowId `adopted` and an `orphan_adopted` incident each), unless a live process drives them.
   */
  readonly adoptOrphans?: boolean;
}

export interface Logger {
  warn(message: string, fields?: Record<string, unknown>): void;
  info?(message: string, fields?: Record<string, unknown>): void;
}

export interface CreateOptions extends CreateRequest {
  /** Stable name; also the tmux session and socket name. Default: a random id. */
  readonly name?: string;
  readonly cols?: number;
  readonly rows?: number;
  /** A free-text objective (kept only as a hash in the journal). */
  readonly objective?: string;
}

/** A drive's name: also its tmux session name and socket stem (48: the longest a socket path holds). */
export const DRIVE_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
const CREATE_KEYS: ReadonlySet<string> = new Set(['allowId', 'args', 'project', 'cwd', 'env', 'name', 'cols', 'rows', 'objective']);
const DEFAULT_TMUX_TIMEOUT_MS = 5000;
/** A tmux call slower than 10 minutes is a wedged server; Node timers also overflow past 24.8 days. */
const MAX_TMUX_TIMEOUT_MS = 600_000;

const silentLogger: Logger = { warn: () => undefined };

/** Driver.open's options, checked, with the config and profiles loaded. */
export interface OpenSetup {
  /** The config and the data dir as given (not yet checked on disk nor created). */
  readonly loaded: LoadedConfig;
  readonly profiles: ProfileSet;
  readonly logger: Logger;
  readonly tmuxTimeoutMs: number;
  readonly reattach: 'all' | readonly string[];
  readonly adoptOrphans: boolean;
}

/** Checks Driver.open's options and loads what they name; creates nothing. */
export function checkOpenOptions(opts: DriverOptions): OpenSetup {
  const loaded = loadConfig(opts.config, opts.dataDir);
  const logger = opts.logger ?? silentLogger;
  const hostProblems = BackendFactory.configProblems(loaded.config);
  if (hostProblems.length > 0) {
    throw new ConfigError(`invalid config (${loaded.source}): ${hostProblems.join('; ')}`, hostProblems.map((p) => ({ path: p.slice(0, Math.max(0, p.indexOf(':'))) || 'hosts', message: p })));
  }
  const timeout = opts.tmuxTimeoutMs ?? DEFAULT_TMUX_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !Number.isFinite(timeout) || timeout <= 0 || timeout > MAX_TMUX_TIMEOUT_MS) {
    throw new UsageError('BAD_ARGUMENT', `tmuxTimeoutMs must be a positive number of ms, at most ${MAX_TMUX_TIMEOUT_MS}`);
  }
  const which = opts.reattach ?? 'all';
  if (which !== 'all' && (!Array.isArray(which) || which.some((n) => typeof n !== 'string'))) throw new UsageError('BAD_ARGUMENT', "reattach must be 'all' or a list of drive names");
  if (opts.adoptOrphans !== undefined && typeof opts.adoptOrphans !== 'boolean') throw new UsageError('BAD_ARGUMENT', 'adoptOrphans must be a boolean');
  const profiles = opts.profileDirs && opts.profileDirs.length > 0 ? loadProfileFiles([builtinProfilesDir(), ...opts.profileDirs]) : loadProfileFiles();
  checkProfileReferences(loaded, profiles);
  return { loaded, profiles, logger, tmuxTimeoutMs: timeout, reattach: which, adoptOrphans: opts.adoptOrphans === true };
}

/** Every profile an allow entry names must be loaded: a typo would perceive the program as generic. */
function checkProfileReferences(loaded: LoadedConfig, profiles: ProfileSet): void {
  const issues = loaded.config.allow.flatMap((e, i) =>
    e.profile !== undefined && profiles.get(e.profile) === undefined ? [{ path: `allow.${i}.profile`, message: `no profile "${e.profile}" (loaded: ${profiles.ids.join(', ')})` }] : [],
  );
  if (issues.length > 0) throw new ConfigError(`invalid config (${loaded.source}): ${issues.map((x) => `${x.path}: ${x.message}`).join('; ')}`, issues);
}

/** create()'s options, checked: the drive's name (a random one by default) and terminal size. */
export function checkCreateOptions(opts: CreateOptions, config: DriverConfig): { readonly name: string; readonly cols: number; readonly rows: number } {
  if (typeof opts !== 'object' || opts === null) throw new UsageError('BAD_ARGUMENT', 'create takes an options object with at least allowId');
  const unknown = Object.keys(opts).filter((k) => !CREATE_KEYS.has(k));
  if (unknown.length > 0) throw new UsageError('BAD_ARGUMENT', `unknown create option(s): ${unknown.join(', ')} (known: ${[...CREATE_KEYS].join(', ')})`);
  if (typeof opts.allowId !== 'string') throw new UsageError('BAD_ARGUMENT', 'create needs allowId, the id of an allow entry in the config');
  const cols = opts.cols ?? config.defaults.cols;
  const rows = opts.rows ?? config.defaults.rows;
  checkTerminalSize(cols, rows);
  const name = opts.name ?? `td-${randomBytes(5).toString('hex')}`;
  // A regex test would stringify a number or an object (with its own toString) and let it through.
  if (typeof name !== 'string') throw new UsageError('BAD_ARGUMENT', `name must be a string (got ${typeof name})`);
  if (!DRIVE_NAME.test(name)) throw new UsageError('BAD_ARGUMENT', `name "${name}" must be 1-48 letters, digits, "_" or "-", starting with a letter or digit`);
  if (opts.objective !== undefined && typeof opts.objective !== 'string') throw new UsageError('BAD_ARGUMENT', 'objective must be a string');
  return { name, cols, rows };
}
