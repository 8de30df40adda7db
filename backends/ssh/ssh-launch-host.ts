/**
 * The launch policy of lib/launch/plan-launch.ts applied on a remote host: the allow entry's binary must be an
 * executable file there (and match its pinned sha256), argv never goes through a shell (the pane
 * argv reaches tmux through the generated config, as locally), the environment is built from the
 * curated base (tmux runs under `env -i`), and the jail is the same bwrap argv when the remote has
 * bwrap; without it the create is refused unless the operator set unsafeDisableSandbox.
 */
import { join } from 'node:path';
import { PolicyError, UsageError } from '../../lib/common/errors.js';
import type { AllowEntry, DriverConfig } from '../../lib/policy/config-schema.js';
import { buildChildEnv } from '../../lib/policy/child-env.js';
import { paneArgv, sandboxArgv } from '../../lib/policy/sandbox.js';
import { findEntry, type CreateRequest, type LaunchPlan } from '../../lib/launch/plan-launch.js';
import { remoteDataDir, type SshHost } from './ssh-host.js';

/**
 * One fixed probe: canonical binary, executable?, optional sha256, HOME, bwrap, tmux, and the
 * remote data dir + workspace created 0700. Values come back one per line as key=value.
 */
const PROBE = [
  'b=$(readlink -f -- "$1") && [ -f "$b" ] && [ -x "$b" ] && printf "bin=%s\\n" "$b"',
  'printf "home=%s\\n" "$HOME"',
  'printf "bwrap=%s\\n" "$(command -v bwrap)"',
  'printf "tmux=%s\\n" "$(command -v tmux)"',
  'if [ "$2" = hash ] && [ -n "$b" ]; then printf "sha=%s\\n" "$(sha256sum -- "$b" | cut -d" " -f1)"; fi',
  // The pane argv starts with `env -u … [-C dir]` (coreutils 8.28+): check that env can.
  '/usr/bin/env -u TMUX -C / -- true 2>/dev/null && printf "envwrap=1\\n"',
  'mkdir -p -m 700 -- "$3" "$3/tmux" "$3/workspace" && cd "$3" && printf "data=%s\\n" "$(pwd -P)"',
  'true',
].join('\n');

export async function planRemoteLaunch(host: SshHost, config: DriverConfig, req: CreateRequest): Promise<LaunchPlan & { remoteDataDir: string }> {
  const entry: AllowEntry = findEntry(config, req.allowId);
  if (req.project !== undefined || req.cwd !== undefined) {
    throw new UsageError('BAD_ARGUMENT', `allow entry "${entry.id}" runs on host "${host.id}": project and cwd are not supported for remote drives yet (the drive runs in the remote workspace)`);
  }
  const prefix = entry.match.argsPrefix;
  if (req.args !== undefined && !Array.isArray(req.args)) throw new UsageError('BAD_ARGUMENT', 'args must be an array of strings without NUL bytes');
  const args = req.args ? [...req.args] : [...prefix];
  if (args.some((a) => typeof a !== 'string' || a.includes('\0'))) throw new UsageError('BAD_ARGUMENT', 'args must be an array of strings without NUL bytes');
  if (prefix.some((p, i) => args[i] !== p)) {
    throw new PolicyError('NOT_ALLOWED', `allow entry "${entry.id}" requires the arguments to start with ${JSON.stringify(prefix)}`, { allowId: entry.id });
  }
  const data = remoteDataDir(host.config);
  const out = (await host.script(PROBE, [entry.match.path, entry.match.hash ? 'hash' : 'nohash', data])).stdout;
  const values = new Map<string, string>();
  for (const line of out.split('\n')) {
    const eq = line.indexOf('=');
    if (eq > 0) values.set(line.slice(0, eq), line.slice(eq + 1));
  }
  const binary = values.get('bin');
  if (!binary || !binary.startsWith('/')) {
    throw new PolicyError('BINARY_NOT_FOUND', `allow entry "${entry.id}" names ${entry.match.path}, which is not an executable file on host "${host.id}"`, { allowId: entry.id, host: host.id });
  }
  if (entry.match.hash && `sha256:${values.get('sha') ?? ''}` !== entry.match.hash) {
    throw new PolicyError('HASH_MISMATCH', `${binary} on host "${host.id}" does not match the sha256 pinned by allow entry "${entry.id}"`, { allowId: entry.id, binary });
  }
  if (!values.get('tmux')) throw new PolicyError('BINARY_NOT_FOUND', `tmux is not installed on host "${host.id}"`, { host: host.id });
  const dataDir = values.get('data');
  if (!dataDir || !dataDir.startsWith('/')) throw new PolicyError('NOT_ALLOWED', `cannot create the remote data dir ${data} on host "${host.id}"`, { host: host.id });
  const workspace = join(dataDir, 'workspace');
  const userHome = values.get('home') ?? '';
  const wide = entry.scope.filesystem === 'home' || entry.scope.filesystem === 'full';
  const env = buildChildEnv({ home: wide && userHome ? userHome : workspace, entryEnv: entry.env, passEnv: entry.passEnv, callerEnv: req.env ?? {} });
  const program = [binary, ...args];
  if (values.get('envwrap') !== '1') {
    throw new PolicyError('SANDBOX_UNAVAILABLE', `host "${host.id}": /usr/bin/env there cannot remove variables and change directory (env -u … -C, coreutils 8.28 or later), which every pane's argv starts with; nothing was launched`, { allowId: entry.id, host: host.id });
  }
  if (config.unsafeDisableSandbox) {
    return { entry, binary, argv: paneArgv(program, workspace), env, workspace, cwd: workspace, sandboxed: false, remoteDataDir: data };
  }
  const bwrap = values.get('bwrap');
  const refuse = (why: string): never => {
    throw new PolicyError('SANDBOX_UNAVAILABLE', `host "${host.id}": ${why}; nothing was launched`, { allowId: entry.id, host: host.id });
  };
  if (!bwrap || !bwrap.startsWith('/')) refuse('bubblewrap (bwrap) is not installed there, so the sandbox cannot be built (install it there, or set unsafeDisableSandbox)');
  const { scope } = entry;
  // Listed paths would have to be canonicalised and checked on the remote: not supported yet.
  if (scope.filesystem === 'listed-paths' || scope.credentialPaths.length > 0) refuse('scopes with listed paths or credentialPaths are not supported for remote drives yet');
  if (scope.network !== 'none' && scope.network !== 'full') refuse(`network "${scope.network}" is not supported`);
  if (scope.filesystem === 'home' && (userHome === '' || userHome === '/')) refuse('filesystem "home" needs a home directory there');
  const argv = paneArgv(sandboxArgv({ bwrapPath: bwrap!, scope: { ...scope, paths: [], credentialPaths: [] }, dataDir, workspace, userHome: userHome === '/' ? '' : userHome, cwd: workspace, argv: program }));
  return { entry, binary, argv, env, workspace, cwd: workspace, sandboxed: true, remoteDataDir: data };
}
