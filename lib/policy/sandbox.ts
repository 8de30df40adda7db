/**
 * The bwrap command line that materializes an allow entry's scope. The tmux server stays outside
 * the jail and the pane's argv *is* this command line, so the jail's lifetime is tied to the tmux
 * server (`--die-with-parent` names the server, never the host) and killing the pane ends the
 * program's whole tree through the pid namespace. The data dir is masked in every jail.
 */
import type { Scope } from './config-schema.js';

export interface SandboxInput {
  readonly bwrapPath: string;
  readonly scope: Scope;
  /** Absolute, canonical. Everything below it is hidden from the program (journal, sockets, config). */
  readonly dataDir: string;
  /** The session's writable working directory (inside dataDir/workspace). */
  readonly workspace: string;
  /** HOME for scope `home`. */
  readonly userHome: string;
  readonly cwd: string;
  /** The canonical binary and its arguments. */
  readonly argv: readonly string[];
}

export function sandboxArgv(input: SandboxInput): string[] {
  const { scope } = input;
  const a: string[] = [input.bwrapPath];
  if (scope.filesystem === 'full') a.push('--bind', '/', '/');
  else a.push('--ro-bind', '/', '/');
  a.push('--dev', '/dev', '--proc', '/proc');
  if (scope.filesystem !== 'full') a.push('--tmpfs', '/tmp');
  if (scope.filesystem === 'home') a.push('--bind', input.userHome, input.userHome);
  // Mask the data dir, then re-expose only this session's workspace.
  a.push('--tmpfs', input.dataDir, '--bind', input.workspace, input.workspace);
  if (scope.filesystem === 'listed-paths') for (const p of scope.paths) a.push('--bind', p, p);
  for (const p of scope.credentialPaths) a.push('--ro-bind', p, p);
  a.push('--unshare-all');
  if (scope.network === 'full') a.push('--share-net');
  // --die-with-parent: the parent is the tmux server (the pane's spawner), not the host, so a
  // durable drive outlives the host but never the server. No --new-session: it would take the
  // controlling tty from the program and break job control in shells.
  a.push('--die-with-parent', '--chdir', input.cwd, '--', ...input.argv);
  return a;
}
