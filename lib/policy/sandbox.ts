/**
 * The bwrap command line that materializes an allow entry's scope. The tmux server stays outside
 * the jail and the pane's argv *is* this command line, so the jail's lifetime is tied to the tmux
 * server (`--die-with-parent` names the server, never the host) and killing the pane ends the
 * program's whole tree through the pid namespace. The data dir is masked in every jail.
 *
 * Mount order matters (bwrap applies them in order, later ones on top): the root, then what each
 * scope hides, then what it exposes, then the data-dir mask, which must come after every exposed
 * path so that no listed path can bring the journal or the drive sockets back, and last the
 * workspace, the one part of the data dir a drive sees.
 *
 * docs/security.md has the table of scopes and arguments.
 */
import { PolicyError } from '../common/errors.js';
import { Fnv1a64 } from '../common/fnv1a64.js';
import type { Scope } from './config-schema.js';

export interface SandboxInput {
  readonly bwrapPath: string;
  /** Its `paths` and `credentialPaths` absolute and canonical (launch.ts checks them). */
  readonly scope: Scope;
  /** Absolute, canonical. Everything below it is hidden from the program (journal, sockets, config). */
  readonly dataDir: string;
  /** The session's writable working directory (inside dataDir/workspace). */
  readonly workspace: string;
  /**
   * The host user's home, canonical: bound writable for scope `home`, hidden for `workspace` and
   * `listed-paths`. Empty when there is none to hide (launch.ts rejects scope `home` then).
   */
  readonly userHome: string;
  readonly cwd: string;
  /** The canonical binary and its arguments. */
  readonly argv: readonly string[];
  /** Directories inside the workspace the program may read but not change (other sessions' projects). */
  readonly readOnly?: readonly string[];
  /** scope.uid dedicated: the program runs as this host uid (and gid), switched by setpriv inside the jail. */
  readonly runAs?: DedicatedUser;
}

/** A host uid no account has, for the drives of one allow entry (`uid: dedicated`). */
export interface DedicatedUser {
  readonly uid: number;
  /** util-linux setpriv: switches uid, gid and groups and empties every capability set before the program runs. */
  readonly setprivPath: string;
}

/**
 * Dedicated uids lie in [base, base + span): above any account a distribution allocates (system
 * and user ranges end well below 2^31) and below 2^31 - 1, which some tools treat as signed.
 */
export const DEDICATED_UID_BASE = 1_900_000_000;
export const DEDICATED_UID_SPAN = 1_000_000;

/** The dedicated uid of allow entry `allowId`: stable, so a project reopened by the entry keeps its owner. */
export function dedicatedUid(allowId: string): number {
  const hash = new Fnv1a64();
  hash.str(allowId);
  return DEDICATED_UID_BASE + Number(BigInt(`0x${hash.hex()}`) % BigInt(DEDICATED_UID_SPAN));
}

/** Variables tmux sets in every pane; they name the drive's socket, which the jail hides anyway. */
const PANE_VARIABLES = ['TMUX', 'TMUX_PANE'] as const;
/** coreutils env: `-u` and `-C` (8.28+) are what the pane argv needs. */
export const ENV_PATH = '/usr/bin/env';

/**
 * The pane's argv around `command` (bwrap's command line, or the program unsandboxed): `env`
 * removes tmux's TMUX and TMUX_PANE before anything of the drive runs, so no process of the jail,
 * bwrap's own (pid 1 inside) included, holds them, and, unsandboxed, enters `chdir` and says so in
 * PWD (bwrap does both itself with --chdir). tmux is never given the working directory: it
 * format-expands `new-session -c`, where a caller's `#(…)` would run on the host.
 */
export function paneArgv(command: readonly string[], chdir?: string): string[] {
  const [file] = command;
  // env reads a leading NAME=VALUE word as a variable, not as the program.
  if (file === undefined || file.includes('=')) throw new PolicyError('NOT_ALLOWED', `the program path ${JSON.stringify(file ?? '')} cannot be run by env (it is empty or holds "=")`, {});
  const unset = PANE_VARIABLES.flatMap((name) => ['-u', name]);
  return chdir === undefined ? [ENV_PATH, ...unset, '--', ...command] : [ENV_PATH, ...unset, '-C', chdir, '--', `PWD=${chdir}`, ...command];
}

/** True when `path` is `dir` or below it (both absolute and canonical). */
export function isWithin(path: string, dir: string): boolean {
  return path === dir || path.startsWith(dir.endsWith('/') ? dir : `${dir}/`);
}

export function sandboxArgv(input: SandboxInput): string[] {
  const { scope } = input;
  const [binary] = input.argv;
  const a: string[] = [input.bwrapPath];
  const hidden: string[] = [];
  const hide = (dir: string): void => {
    a.push('--tmpfs', dir);
    hidden.push(dir);
  };
  if (scope.filesystem === 'full') a.push('--bind', '/', '/');
  else a.push('--ro-bind', '/', '/');
  a.push('--dev', '/dev', '--proc', '/proc');
  // A dedicated uid does not own the jail's tmpfs: /tmp is sticky and world-writable as on a host.
  if (scope.filesystem !== 'full') {
    if (input.runAs) a.push('--perms', '01777');
    hide('/tmp');
  }
  // With no network, host services' unix sockets (/run/docker.sock, the D-Bus system bus, …) are
  // hidden too: a network namespace does not cover filesystem sockets, and connect(2) works
  // through a read-only mount.
  if (scope.network === 'none') hide('/run');
  const home = input.userHome;
  if (scope.filesystem === 'home') a.push('--bind', home, home);
  // The user's files (keys, tokens, shell history) are not part of a workspace scope.
  else if (scope.filesystem !== 'full' && home !== '' && home !== '/') hide(home);
  // The program itself stays visible (read-only) when it is installed in a hidden place (~/.local/bin/…).
  if (binary !== undefined && hidden.some((dir) => isWithin(binary, dir))) a.push('--ro-bind', binary, binary);
  if (scope.filesystem === 'listed-paths') for (const p of scope.paths) a.push('--bind', p, p);
  for (const p of scope.credentialPaths) a.push('--ro-bind', p, p);
  // Mask the data dir, then re-expose only this session's workspace.
  a.push('--tmpfs', input.dataDir, '--bind', input.workspace, input.workspace);
  for (const p of input.readOnly ?? []) a.push('--ro-bind', p, p);
  // --cap-drop ALL: bwrap run by root keeps every capability inside its user namespace (where uid
  // 0 maps to host root), enough to unmount the data-dir mask or remount / writable. Dropped, the
  // program cannot change its mounts at all; a nested user namespace it may create cannot unlock
  // the mounts it inherited.
  const { runAs } = input;
  if (runAs === undefined) {
    a.push('--unshare-all', '--cap-drop', 'ALL');
    if (scope.network === 'full') a.push('--share-net');
  } else {
    // A dedicated uid is a host uid, so no user namespace (in one created by root, only uid 0
    // maps, and it is host root): bwrap runs privileged, keeps only what setpriv needs to switch
    // to the uid (which empties every capability set), and the program runs as that uid.
    a.push('--unshare-ipc', '--unshare-pid', '--unshare-uts', '--unshare-cgroup-try');
    if (scope.network !== 'full') a.push('--unshare-net');
    a.push('--cap-drop', 'ALL', '--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP');
  }
  // --die-with-parent: the parent is the tmux server (the pane's spawner), not the host, so a
  // durable drive outlives the host but never the server. No --new-session: it would take the
  // controlling tty from the program and break job control in shells.
  a.push('--die-with-parent', '--chdir', input.cwd, '--');
  if (runAs !== undefined) {
    const id = String(runAs.uid);
    a.push(runAs.setprivPath, '--reuid', id, '--regid', id, '--clear-groups', '--inh-caps=-all', '--bounding-set=-all', '--');
  }
  a.push(...input.argv);
  return a;
}
