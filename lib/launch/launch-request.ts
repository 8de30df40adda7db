/**
 * A create() request as the launch policy sees it, the plan it turns into, and the checks every
 * placement (this host, a remote host) applies alike: the allow entry named, the arguments under
 * its pinned prefix.
 */
import { PolicyError, UsageError } from '../common/errors.js';
import type { AllowEntry, DriverConfig } from '../policy/config-schema.js';

export interface CreateRequest {
  readonly allowId: string;
  readonly args?: readonly string[];
  readonly project?: string;
  readonly cwd?: string;
  readonly env?: Readonly<Record<string, string>>;
}

export interface LaunchPlan {
  readonly entry: AllowEntry;
  readonly binary: string;
  /** The pane's argv: `env` (tmux's variables removed), then bwrap wrapping the program or, unsandboxed, the program in `cwd` (always ≥ 2 words). */
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly workspace: string;
  readonly cwd: string;
  readonly sandboxed: boolean;
}

export function findEntry(config: DriverConfig, allowId: string): AllowEntry {
  const entry = config.allow.find((e) => e.id === allowId);
  if (!entry) {
    const known = config.allow.map((e) => e.id);
    throw new PolicyError('NOT_ALLOWED', `"${allowId}" is not on the allowlist${known.length ? ` (allowed: ${known.join(', ')})` : ' (the allowlist is empty: nothing can launch)'}; an operator adds entries under "allow" in the config`, { allowId });
  }
  return entry;
}

/**
 * The program's arguments: the caller's, else the entry's pinned prefix. Argv words only (strings
 * without NUL: exec cannot carry one), and they must start with the prefix the operator pinned.
 */
export function allowedArgs(entry: AllowEntry, req: CreateRequest): string[] {
  const prefix = entry.match.argsPrefix;
  if (req.args !== undefined && !Array.isArray(req.args)) throw new UsageError('BAD_ARGUMENT', 'args must be an array of strings without NUL bytes');
  const args = req.args ? [...req.args] : [...prefix];
  if (args.some((a) => typeof a !== 'string' || a.includes('\0'))) {
    throw new UsageError('BAD_ARGUMENT', 'args must be an array of strings without NUL bytes');
  }
  if (prefix.some((p, i) => args[i] !== p)) {
    throw new PolicyError('NOT_ALLOWED', `allow entry "${entry.id}" requires the arguments to start with ${JSON.stringify(prefix)}`, { allowId: entry.id });
  }
  return args;
}
