/**
 * The launch policy applied to one create() request on this host: the allow entry, the canonical
 * binary, the arguments, the environment, the workspace and the jail. Everything that widens what
 * a drive can reach comes from the entry (the operator), never from the caller. A remote host's
 * plan is remote-launch.ts.
 */
import { createHash } from 'node:crypto';
import { accessSync, constants, lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { PolicyError, UsageError } from '../common/errors.js';
import type { AllowEntry, DriverConfig, Scope } from '../policy/config-schema.js';
import { buildChildEnv } from '../policy/child-env.js';
import { isWithin, paneArgv, sandboxArgv } from '../policy/sandbox.js';
import { allowedArgs, findEntry, type CreateRequest, type LaunchPlan } from './launch-request.js';

export type { CreateRequest, LaunchPlan } from './launch-request.js';

const PROJECT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/**
 * Looks a program up on PATH the way execvp would, except that empty and relative entries (`.`,
 * `bin`) are skipped: they name the host's current directory, where anyone may have planted a
 * `tmux` or a `bwrap`. Undefined when absent.
 */
export function findExecutable(name: string, path = process.env.PATH ?? '/usr/bin:/bin'): string | undefined {
  for (const dir of path.split(':')) {
    if (!isAbsolute(dir)) continue;
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

export function planLaunch(ctx: PlanContext, req: CreateRequest): LaunchPlan {
  const entry = findEntry(ctx.config, req.allowId);
  let binary: string;
  // The schema refuses a relative match.path; a config built around it must not resolve one
  // against the host's current directory either.
  if (!isAbsolute(entry.match.path)) throw new PolicyError('BINARY_NOT_FOUND', `allow entry "${entry.id}" names ${JSON.stringify(entry.match.path)}, which is not an absolute path`, { allowId: entry.id });
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
  const args = allowedArgs(entry, req);
  if (req.project !== undefined && (typeof req.project !== 'string' || !PROJECT_NAME.test(req.project))) {
    throw new UsageError('BAD_ARGUMENT', `project "${String(req.project)}" is not a valid name (letters, digits, ".", "_", "-"; at most 64)`);
  }
  // Everything is checked before anything is created on disk.
  const dataDir = realpathSync(ctx.dataDir);
  const workspaceRoot = join(dataDir, 'workspace');
  const projectsDir = join(workspaceRoot, 'projects');
  const workspacePath = req.project === undefined ? workspaceRoot : join(projectsDir, req.project);
  const wide = entry.scope.filesystem === 'home' || entry.scope.filesystem === 'full';
  const env = buildChildEnv({ home: wide ? homedir() : workspacePath, entryEnv: entry.env, passEnv: entry.passEnv, callerEnv: req.env ?? {} });
  const userHome = canonicalHome();
  const sandboxed = !ctx.config.unsafeDisableSandbox;
  if (sandboxed && !ctx.bwrapPath) {
    throw new PolicyError('SANDBOX_UNAVAILABLE', 'bubblewrap (bwrap) is not installed, so the sandbox cannot be built and nothing launches; install it (apt-get install bubblewrap)', { allowId: entry.id });
  }
  const scope = sandboxed ? materializableScope(entry, dataDir, userHome) : entry.scope;

  // Drives write inside the workspace, so anything below it may be a symlink a drive planted
  // (projects/x -> /etc): it is walked without following links, never realpath'd into a bind.
  if (directoryWithin(dataDir, ['workspace']) === undefined) {
    throw new PolicyError('NOT_ALLOWED', `${workspaceRoot} is a symlink or not a directory; remove it`, { allowId: entry.id });
  }
  const projects = directoryWithin(workspaceRoot, ['projects']);
  let workspace = workspaceRoot;
  if (req.project !== undefined) {
    const dir = projects === undefined ? undefined : directoryWithin(workspaceRoot, ['projects', req.project]);
    if (dir === undefined) {
      throw new PolicyError('NOT_ALLOWED', `project "${req.project}": its directory under ${workspaceRoot} is a symlink or not a directory (a drive may have planted it); remove it`, { allowId: entry.id, project: req.project });
    }
    workspace = dir;
  }
  let cwd = workspace;
  if (req.cwd !== undefined) {
    if (typeof req.cwd !== 'string') throw new UsageError('BAD_ARGUMENT', 'cwd must be a string');
    const rel = relative(workspace, resolve(workspace, req.cwd));
    // A cwd outside the workspace, or reached through a symlink, is clamped to it, never honoured.
    if (!rel.startsWith('..') && !isAbsolute(rel)) cwd = directoryWithin(workspace, rel === '' ? [] : rel.split(sep)) ?? workspace;
  }
  const program = [binary, ...args];
  if (!sandboxed || !ctx.bwrapPath) {
    return { entry, binary, argv: paneArgv(program, cwd), env, workspace, cwd, sandboxed: false };
  }
  // A session on the shared workspace sees the projects but cannot change them (nor plant links there).
  const readOnly = workspace === workspaceRoot && projects !== undefined ? [projects] : [];
  const argv = paneArgv(sandboxArgv({ bwrapPath: ctx.bwrapPath, scope, dataDir, workspace, userHome, cwd, argv: program, readOnly }));
  return { entry, binary, argv, env, workspace, cwd, sandboxed: true };
}

/**
 * `root/parts…` as a directory, creating what is missing (0700), without following a symlink at
 * any step; undefined when a step is a symlink or not a directory.
 */
function directoryWithin(root: string, parts: readonly string[]): string | undefined {
  let dir = root;
  for (const part of parts) {
    if (part === '' || part === '.' || part === '..') return undefined;
    dir = join(dir, part);
    let st;
    try {
      st = lstatSync(dir);
    } catch {
      try {
        mkdirSync(dir, { mode: 0o700 });
      } catch {
        return undefined;
      }
      st = lstatSync(dir);
    }
    if (st.isSymbolicLink() || !st.isDirectory()) return undefined;
  }
  return dir;
}

/** The host user's home, canonical; '' when it does not exist as a directory. */
function canonicalHome(): string {
  const home = homedir();
  if (!isAbsolute(home)) return '';
  try {
    const real = realpathSync(home);
    return statSync(real).isDirectory() ? real : '';
  } catch {
    return '';
  }
}

/**
 * The entry's scope with every path checked and canonical, or a typed error: a scope that cannot
 * be materialized exactly is refused, never approximated by a wider one.
 */
function materializableScope(entry: AllowEntry, dataDir: string, userHome: string): Scope {
  const refuse = (why: string, path?: string): never => {
    throw new PolicyError('SANDBOX_UNAVAILABLE', `allow entry "${entry.id}": scope cannot be materialized: ${why}; nothing was launched`, { allowId: entry.id, ...(path === undefined ? {} : { path }) });
  };
  const { scope } = entry;
  if (scope.network !== 'none' && scope.network !== 'full') refuse(`network "${scope.network}" is not supported`);
  if (scope.filesystem === 'home' && (userHome === '' || userHome === '/')) {
    refuse(`filesystem "home" needs the user's home directory, and ${userHome === '/' ? 'it is / (that would be the whole filesystem)' : 'there is none here'}`);
  }
  const canonical = (p: string, field: string): string => {
    if (!isAbsolute(p)) refuse(`${field} entry "${p}" is not an absolute path`, p);
    let real = '';
    try {
      real = realpathSync(p);
    } catch {
      refuse(`${field} entry ${p} does not exist`, p);
    }
    // Inside the data dir a path would either be masked or bring the journal and sockets back.
    if (isWithin(real, dataDir)) refuse(`${field} entry ${p} is inside the data dir ${dataDir}, which every jail hides`, p);
    return real;
  };
  return {
    ...scope,
    paths: scope.filesystem === 'listed-paths' ? scope.paths.map((p) => canonical(p, 'paths')) : [],
    credentialPaths: scope.credentialPaths.map((p) => canonical(p, 'credentialPaths')),
  };
}
