/**
 * The launch policy of plan-launch.ts applied on a remote host: the allow entry's binary must be an
 * executable file there (and match its pinned sha256), argv never goes through a shell (the pane
 * argv reaches tmux through the generated config, as locally), the environment is built from the
 * curated base (tmux runs under `env -i`), and the jail is the same bwrap argv when the remote has
 * bwrap; without it the create is refused unless the operator set unsafeDisableSandbox.
 *
 * What the policy needs to know of the remote comes through one port, RemoteLaunchHost (one probe:
 * a round trip), which the ssh transport implements (backends/ssh/ssh-launch-host.ts): the policy
 * decides, the host only reports.
 */
import { posix } from 'node:path';
import { PolicyError, UsageError } from '../common/errors.js';
import type { DriverConfig } from '../policy/config-schema.js';
import { buildChildEnv } from '../policy/child-env.js';
import { paneArgv, sandboxArgv } from '../policy/sandbox.js';
import { allowedArgs, findEntry, type CreateRequest, type LaunchPlan } from './launch-request.js';

/** What a remote host says about itself for one launch; every path absolute there, or absent. */
export interface RemoteLaunchFacts {
  /** `match.path` resolved (symlinks followed) when it is an executable regular file there. */
  readonly binary?: string;
  /** The binary's sha256, hex, when asked for and the binary was found. */
  readonly sha256?: string;
  /** The remote user's HOME ('' when unset). */
  readonly home: string;
  readonly bwrap?: string;
  readonly tmux?: string;
  /** `/usr/bin/env -u NAME -C DIR` works there (coreutils 8.28+): every pane argv starts so. */
  readonly envWrap: boolean;
  /** The remote data dir, canonical, once created 0700 with its `tmux/` and `workspace/`. */
  readonly dataDir?: string;
}

/** The port: a remote host that can be asked about one launch. */
export interface RemoteLaunchHost {
  /** The host's id in the config (for messages and error context). */
  readonly id: string;
  /** The data dir configured for the host there (for messages; the probe creates it). */
  readonly dataDir: string;
  /** One round trip: the facts for launching `binaryPath`, with its sha256 when `sha256`. */
  probeLaunch(binaryPath: string, opts: { readonly sha256: boolean }): Promise<RemoteLaunchFacts>;
}

export async function planRemoteLaunch(host: RemoteLaunchHost, config: DriverConfig, req: CreateRequest): Promise<LaunchPlan> {
  const entry = findEntry(config, req.allowId);
  if (req.project !== undefined || req.cwd !== undefined) {
    throw new UsageError('BAD_ARGUMENT', `allow entry "${entry.id}" runs on host "${host.id}": project and cwd are not supported for remote drives yet (the drive runs in the remote workspace)`);
  }
  const args = allowedArgs(entry, req);
  const facts = await host.probeLaunch(entry.match.path, { sha256: entry.match.hash !== undefined });
  const binary = facts.binary;
  if (!binary || !binary.startsWith('/')) {
    throw new PolicyError('BINARY_NOT_FOUND', `allow entry "${entry.id}" names ${entry.match.path}, which is not an executable file on host "${host.id}"`, { allowId: entry.id, host: host.id });
  }
  if (entry.match.hash && `sha256:${facts.sha256 ?? ''}` !== entry.match.hash) {
    throw new PolicyError('HASH_MISMATCH', `${binary} on host "${host.id}" does not match the sha256 pinned by allow entry "${entry.id}"`, { allowId: entry.id, binary });
  }
  if (!facts.tmux) throw new PolicyError('BINARY_NOT_FOUND', `tmux is not installed on host "${host.id}"`, { host: host.id });
  const dataDir = facts.dataDir;
  if (!dataDir || !dataDir.startsWith('/')) throw new PolicyError('NOT_ALLOWED', `cannot create the remote data dir ${host.dataDir} on host "${host.id}"`, { host: host.id });
  // The remote is a POSIX host whatever this one is: its paths are joined the POSIX way.
  const workspace = posix.join(dataDir, 'workspace');
  const userHome = facts.home;
  const wide = entry.scope.filesystem === 'home' || entry.scope.filesystem === 'full';
  const env = buildChildEnv({ home: wide && userHome ? userHome : workspace, entryEnv: entry.env, passEnv: entry.passEnv, callerEnv: req.env ?? {} });
  const program = [binary, ...args];
  if (!facts.envWrap) {
    throw new PolicyError('SANDBOX_UNAVAILABLE', `host "${host.id}": /usr/bin/env there cannot remove variables and change directory (env -u … -C, coreutils 8.28 or later), which every pane's argv starts with; nothing was launched`, { allowId: entry.id, host: host.id });
  }
  if (config.unsafeDisableSandbox) {
    return { entry, binary, argv: paneArgv(program, workspace), env, workspace, cwd: workspace, sandboxed: false };
  }
  const refuse = (why: string): never => {
    throw new PolicyError('SANDBOX_UNAVAILABLE', `host "${host.id}": ${why}; nothing was launched`, { allowId: entry.id, host: host.id });
  };
  const bwrap = facts.bwrap;
  if (!bwrap || !bwrap.startsWith('/')) return refuse('bubblewrap (bwrap) is not installed there, so the sandbox cannot be built (install it there, or set unsafeDisableSandbox)');
  const { scope } = entry;
  // Listed paths would have to be canonicalised and checked on the remote: not supported yet.
  if (scope.filesystem === 'listed-paths' || scope.credentialPaths.length > 0) refuse('scopes with listed paths or credentialPaths are not supported for remote drives yet');
  if (scope.network !== 'none' && scope.network !== 'full') refuse(`network "${scope.network}" is not supported`);
  if (scope.filesystem === 'home' && (userHome === '' || userHome === '/')) refuse('filesystem "home" needs a home directory there');
  const argv = paneArgv(sandboxArgv({ bwrapPath: bwrap, scope: { ...scope, paths: [], credentialPaths: [] }, dataDir, workspace, userHome: userHome === '/' ? '' : userHome, cwd: workspace, argv: program }));
  return { entry, binary, argv, env, workspace, cwd: workspace, sandboxed: true };
}
