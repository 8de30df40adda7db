/**
 * The data dir (journal, audit log, sockets, workspaces) checked before anything is created in it,
 * then created. A path that cannot hold a data dir is refused with DATA_DIR_INVALID naming the path
 * and the reason, never an untyped ENOTDIR, and never a recursive mkdir left to spin: Node's
 * `mkdirSync(…, { recursive: true })` loops at 100% CPU under /proc.
 */
import { accessSync, constants, lstatSync, mkdirSync, realpathSync, statfsSync, statSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { TmuxDriveError } from '../common/errors.js';

export class DataDirError extends TmuxDriveError {
  constructor(path: string, reason: string, options?: { cause?: unknown }) {
    super('DATA_DIR_INVALID', `data dir ${JSON.stringify(path)}: ${reason}`, { path, reason }, options);
  }
}

/** sun_path holds 108 bytes with its NUL: a longer socket path cannot be bound. */
export const MAX_SOCKET_PATH_BYTES = 107;
/** The longest drive name create() accepts: every valid name must get a socket. */
export const LONGEST_DRIVE_NAME = 48;
/** PATH_MAX is 4096 bytes with its NUL. */
const MAX_PATH_BYTES = 4095;

/**
 * Kernel filesystems (linux/magic.h) whose files are not files: a data dir there cannot hold a
 * journal, and some of them (procfs) make a recursive mkdir spin.
 */
const PSEUDO_FILESYSTEMS: ReadonlyMap<number, string> = new Map([
  [0x9fa0, 'proc'],
  [0x62656572, 'sysfs'],
  [0x1cd1, 'devpts'],
  [0x27e0eb, 'cgroup'],
  [0x63677270, 'cgroup2'],
  [0x64626720, 'debugfs'],
  [0x74726163, 'tracefs'],
  [0x73636673, 'securityfs'],
  [0x6165676c, 'pstore'],
  [0xcafe4a11, 'bpf'],
  [0x62656570, 'configfs'],
  [0x65735543, 'fusectl'],
  [0xf97cff8c, 'selinuxfs'],
  [0x43415d53, 'smackfs'],
  [0xde5e81e4, 'efivarfs'],
  [0x42494e4d, 'binfmt_misc'],
  [0x6e736673, 'nsfs'],
  [0x19800202, 'mqueue'],
  [0x958458f6, 'hugetlbfs'],
]);

/**
 * Trees of kernel objects, refused by path as well: /dev is a devtmpfs, which reports tmpfs's magic,
 * and a container may mount /proc or /sys with another type.
 */
const PSEUDO_TREES = ['/proc', '/sys', '/dev'] as const;

export interface DataDirPlan {
  /** Absolute, as given (a relative API/CLI path resolved against the current directory). */
  readonly path: string;
  /** Where it will be once created: the nearest existing ancestor's realpath, then the rest. */
  readonly canonical: string;
  /** The components below the nearest existing ancestor that do not exist yet, outermost first. */
  readonly missing: readonly string[];
}

/**
 * A data dir path from Driver.open's `dataDir` option or `--data-dir`: a string without NUL; a
 * relative one is resolved against the current directory (it is the caller's own explicit choice,
 * as any path on a command line; the config file's `dataDir` must be absolute).
 */
export function resolveDataDir(raw: unknown): string {
  if (typeof raw !== 'string' || raw.length === 0) throw new DataDirError(String(raw), 'not a path (expected a non-empty string)');
  if (raw.includes('\0')) throw new DataDirError(raw, 'contains a NUL byte');
  return resolve(raw);
}

function errnoOf(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? 'error';
}

function within(path: string, tree: string): boolean {
  return path === tree || path.startsWith(`${tree}/`);
}

/**
 * Checks that `raw` can be a data dir and says what creating it means, creating nothing: the
 * nearest existing ancestor must be a writable directory on a real filesystem, outside /proc, /sys
 * and /dev; and the socket of the longest drive name must fit in sun_path.
 */
export function checkDataDir(raw: unknown): DataDirPlan {
  const path = resolveDataDir(raw);
  if (Buffer.byteLength(path) > MAX_PATH_BYTES) throw new DataDirError(path, `longer than ${MAX_PATH_BYTES} bytes`);
  const missing: string[] = [];
  let existing = path;
  for (;;) {
    try {
      statSync(existing);
      break;
    } catch (err) {
      const code = errnoOf(err);
      // ENOTDIR: an ancestor is a file; walking up finds it and reports it by name.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new DataDirError(path, `cannot look at ${existing} (${code})`, { cause: err });
      if (existing === '/') throw new DataDirError(path, 'the root directory does not exist');
      missing.unshift(basename(existing));
      existing = dirname(existing);
    }
  }
  let real: string;
  try {
    real = realpathSync(existing);
  } catch (err) {
    throw new DataDirError(path, `cannot resolve ${existing} (${errnoOf(err)})`, { cause: err });
  }
  const canonical = missing.length === 0 ? real : join(real, ...missing);
  for (const tree of PSEUDO_TREES) {
    if (within(real, tree) || within(canonical, tree)) throw new DataDirError(path, `lies under ${tree}, a tree of kernel objects, not files`);
  }
  let fsType: number;
  try {
    fsType = statfsSync(real).type;
  } catch (err) {
    throw new DataDirError(path, `cannot tell which filesystem ${real} is on (${errnoOf(err)})`, { cause: err });
  }
  const pseudo = PSEUDO_FILESYSTEMS.get(fsType);
  if (pseudo !== undefined) throw new DataDirError(path, `${real} is on ${pseudo}, a kernel pseudo filesystem, not on files`);
  if (!statSync(real).isDirectory()) {
    throw new DataDirError(path, missing.length === 0 ? 'is not a directory' : `${existing} is not a directory (a path through a file)`);
  }
  if (missing.length === 0) checkOwnDirectory(path, real);
  try {
    // Creating below it needs write and search; an existing data dir needs both too.
    accessSync(real, constants.W_OK | constants.X_OK);
  } catch (err) {
    throw new DataDirError(path, `${real} is not writable by this user (${errnoOf(err)})`, { cause: err });
  }
  const socket = join(canonical, 'tmux', `${'x'.repeat(LONGEST_DRIVE_NAME)}.sock`);
  const socketBytes = Buffer.byteLength(socket);
  if (socketBytes > MAX_SOCKET_PATH_BYTES) {
    const room = MAX_SOCKET_PATH_BYTES - (socketBytes - Buffer.byteLength(canonical));
    throw new DataDirError(path, `a drive socket there would take ${socketBytes} bytes, beyond the ${MAX_SOCKET_PATH_BYTES} a unix socket path can hold: use a data dir of at most ${room} bytes (canonical: ${canonical})`);
  }
  return { path, canonical, missing };
}

/**
 * A directory of the data dir that exists already must be this user's and writable by nobody
 * else: whoever else can write there can plant a socket that a later open would attach to (or
 * adopt), a journal, or a link (ssh's StrictModes, for the same reason).
 */
function checkOwnDirectory(path: string, dir: string): void {
  const st = lstatSync(dir);
  if (!st.isDirectory()) throw new DataDirError(path, `${dir} exists and is not a directory`);
  const uid = process.geteuid?.();
  if (uid !== undefined && st.uid !== uid) throw new DataDirError(path, `${dir} belongs to uid ${st.uid}, not to this user (uid ${uid})`);
  if ((st.mode & 0o022) !== 0) throw new DataDirError(path, `${dir} is writable by ${st.mode & 0o020 ? 'its group' : 'others'} (mode ${(st.mode & 0o777).toString(8)}): chmod 700 it`);
}

/** One directory, 0700, created unless it exists as this user's real directory (a symlink is refused). */
function makeDirectory(plan: DataDirPlan, dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o700 });
    return;
  } catch (err) {
    if (errnoOf(err) !== 'EEXIST') throw new DataDirError(plan.path, `cannot create ${dir} (${errnoOf(err)})`, { cause: err });
  }
  checkOwnDirectory(plan.path, dir);
}

/**
 * Creates what checkDataDir found missing, one component at a time (no recursive mkdir), then
 * `tmux/`; returns the data dir's realpath.
 */
export function makeDataDir(plan: DataDirPlan): string {
  let dir = plan.missing.reduce((d) => dirname(d), plan.canonical);
  for (const part of plan.missing) {
    dir = join(dir, part);
    makeDirectory(plan, dir);
  }
  let real: string;
  try {
    real = realpathSync(plan.path);
  } catch (err) {
    throw new DataDirError(plan.path, `cannot resolve it after creating it (${errnoOf(err)})`, { cause: err });
  }
  // Changed under us between the check and the creation (a link swapped in): checked again.
  if (real !== plan.canonical) checkDataDir(real);
  makeDirectory(plan, join(real, 'tmux'));
  return real;
}
