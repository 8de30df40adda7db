/**
 * The launch policy applied to one create() request: the allow entry, the canonical binary, the
 * arguments, the environment, the workspace and the jail. Everything that widens what a drive can
 * reach comes from the entry (the operator), never from the caller.
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { PolicyError, UsageError } from './errors.js';
import type { AllowEntry, DriverConfig } from './policy/config-schema.js';
import { buildChildEnv } from './policy/child-env.js';
import { sandboxArgv } from './policy/sandbox.js';

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
  /** The pane's argv: bwrap wrapping the program, or `env --` in front of it (always ≥ 2 words). */
  readonly argv: string[];
  readonly env: Record<string, string>;
  readonly workspace: string;
  readonly cwd: string;
  readonly sandboxed: boolean;
}

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Looks a program up on PATH the way execvp would; undefined when absent. */
export function findExecutable(name: string, path = process.env.PATH ?? '/usr/bin:/bin'): string | undefined {
  for (const dir of path.split(':')) {
    if (!dir) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

export interface PlanContext {
  readonly config: DriverConfig;
  readonly dataDir: string;
  /** Resolved bwrap, or undefined when it is not installed. */
  readonly bwrapPath: string | undefined;
}

export function findEntry(config: DriverConfig, allowId: string): AllowEntry {
  const entry = config.allow.find((e) => e.id === allowId);
  if (!entry) {
    const known = config.allow.map((e) => e.id);
    throw new PolicyError('NOT_ALLOWED', `"${allowId}" is not on the allowlist${known.length ? ` (allowed: ${known.join(', ')})` : ' (the allowlist is empty: nothing can launch)'}; an operator adds entries under "allow" in the config`, { allowId });
  }
  return entry;
}

export function planLaunch(ctx: PlanContext, req: CreateRequest): LaunchPlan {
  const entry = findEntry(ctx.config, req.allowId);
  let binary: string;
  try {
    binary = realpathSync(entry.match.path);
    accessSync(binary, constants.X_OK);
  } catch {
    throw new PolicyError('BINARY_NOT_FOUND', `allow entry "${entry.id}" names ${entry.match.path}, which is not an executable file here`, { allowId: entry.id });
  }
  if (entry.match.hash) {
    const actual = `sha256:${createHash('sha256').update(readFileSync(binary)).digest('hex')}`;
    if (actual !== entry.match.hash) {
      throw new PolicyError('HASH_MISMATCH', `${binary} does not match the sha256 pinned by allow entry "${entry.id}": the binary changed; an operator must re-pin it`, { allowId: entry.id, binary });
    }
  }
  const prefix = entry.match.argsPrefix;
  const args = req.args ? [...req.args] : [...prefix];
  if (!Array.isArray(args) || args.some((a) => typeof a !== 'string' || a.includes('\0'))) {
    throw new UsageError('BAD_ARGUMENT', 'args must be an array of strings without NUL bytes');
  }
  if (prefix.some((p, i) => args[i] !== p)) {
    throw new PolicyError('NOT_ALLOWED', `allow entry "${entry.id}" requires the arguments to start with ${JSON.stringify(prefix)}`, { allowId: entry.id });
  }
  const workspaceRoot = join(ctx.dataDir, 'workspace');
  let workspace = workspaceRoot;
  if (req.project !== undefined) {
    if (!PROJECT_NAME.test(req.project)) throw new UsageError('BAD_ARGUMENT', `project "${req.project}" is not a valid name (letters, digits, ".", "_", "-"; at most 64)`);
    workspace = join(workspaceRoot, 'projects', req.project);
  }
  mkdirSync(workspace, { recursive: true, mode: 0o700 });
  workspace = realpathSync(workspace);
  let cwd = workspace;
  if (req.cwd !== undefined) {
    const wanted = resolve(workspace, req.cwd);
    const rel = relative(workspace, wanted);
    // A cwd outside the workspace is clamped to it, never honoured.
    if (!rel.startsWith('..') && !isAbsolute(rel)) {
      mkdirSync(wanted, { recursive: true, mode: 0o700 });
      cwd = wanted;
    }
  }
  const wide = entry.scope.filesystem === 'home' || entry.scope.filesystem === 'full';
  const env = buildChildEnv({ home: wide ? homedir() : workspace, entryEnv: entry.env, passEnv: entry.passEnv, callerEnv: req.env ?? {} });
  const program = [binary, ...args];
  if (ctx.config.unsafeDisableSandbox) {
    return { entry, binary, argv: ['/usr/bin/env', '--', ...program], env, workspace, cwd, sandboxed: false };
  }
  if (!ctx.bwrapPath) {
    throw new PolicyError('SANDBOX_UNAVAILABLE', 'bubblewrap (bwrap) is not installed, so the sandbox cannot be built and nothing launches; install it (apt-get install bubblewrap)', { allowId: entry.id });
  }
  const argv = sandboxArgv({ bwrapPath: ctx.bwrapPath, scope: entry.scope, dataDir: realpathSync(ctx.dataDir), workspace, userHome: homedir(), cwd, argv: program });
  return { entry, binary, argv, env, workspace, cwd, sandboxed: true };
}
