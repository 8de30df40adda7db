/**
 * Where the serving host keeps its files: `<dataDir>/serve/`, a 0700 directory of this user inside
 * the (already 0700) data dir. Its socket is the OS's gate: only this user can connect to it.
 */
import { lstatSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HostError } from '../wire/host-error.js';

export interface ServePaths {
  readonly dataDir: string;
  readonly dir: string;
  /** flock(2)ed for the serving host's whole life (exclusive) or an in-process command's (shared). */
  readonly lock: string;
  /** The host's Unix socket (0600). */
  readonly socket: string;
  /** Who serves: pid, start time, since when (JSON; for messages, never trusted for liveness alone). */
  readonly hostRecord: string;
  /** Minted tokens: their sha256 and scope, never a token. */
  readonly tokens: string;
  /** The owner's token (0600): what the CLI presents by default. */
  readonly ownerToken: string;
}

/** A standby's socket while it waits (bound, serving nobody), renamed over `socket` at its takeover. */
export function standbySocketPath(paths: ServePaths, pid: number): string {
  return join(paths.dir, `.standby-${pid}.sock`);
}

/** The private names a process binds its socket under before it serves (standby, or staging): the pid in [1]. */
export const PRIVATE_SOCKET = /^\.(?:standby|host)-(\d+)\.sock$/;

export function servePaths(dataDir: string): ServePaths {
  const dir = join(dataDir, 'serve');
  return {
    dataDir,
    dir,
    lock: join(dir, 'lock'),
    socket: join(dir, 'host.sock'),
    hostRecord: join(dir, 'host.json'),
    tokens: join(dir, 'tokens.json'),
    ownerToken: join(dir, 'owner.token'),
  };
}

/** Creates `<dataDir>/serve` (0700) unless it exists as this user's private directory; refuses anything else. */
export function ensureServeDir(dataDir: string): ServePaths {
  const paths = servePaths(dataDir);
  try {
    mkdirSync(paths.dir, { mode: 0o700 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new HostError('NOT_SERVING', `cannot create ${paths.dir} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path: paths.dir });
  }
  const st = lstatSync(paths.dir);
  const uid = process.geteuid?.();
  // Whoever else could write here could plant a socket that clients would present their token to.
  if (!st.isDirectory()) throw new HostError('NOT_SERVING', `${paths.dir} is not a directory`, { path: paths.dir });
  if (uid !== undefined && st.uid !== uid) throw new HostError('NOT_SERVING', `${paths.dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`, { path: paths.dir });
  if ((st.mode & 0o077) !== 0) throw new HostError('NOT_SERVING', `${paths.dir} is open to others (mode ${(st.mode & 0o777).toString(8)}): chmod 700 it`, { path: paths.dir });
  return paths;
}
