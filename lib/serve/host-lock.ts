/**
 * One host per data dir, and a standby woken by the kernel when it dies: a flock(2) on
 * `<dataDir>/serve/lock`. Node has no flock, so the lock is taken by flock(1) (util-linux) on an
 * open file description this process shares with it: the lock file is opened here, passed to
 * `flock -x 3` as fd 3, flock(1) locks the shared description and exits, and the lock stays with
 * the description, that is with this process's descriptor. It goes when this process closes the
 * descriptor or dies, SIGKILL included: the kernel closes it, and a standby blocked in
 * `flock -x 3` on its own description is granted the lock and exits, which is the event that
 * wakes it. No process lives beside the host for the lock's sake, and nothing polls.
 *
 * Modes: the serving host holds it exclusive for its life; a command that hosts in-process (no
 * host serves) holds it shared for its run, so a host cannot start under it and reconcile
 * without the drives that command holds.
 */
import { spawn } from 'node:child_process';
import { accessSync, closeSync, constants, openSync, readdirSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { TmuxDriveError } from '../common/errors.js';

export type LockMode = 'exclusive' | 'shared';

/** flock(1) exits at once with -n; a slower answer is a stopped machine, not a busy lock. */
const TRY_DEADLINE_MS = 5000;
/** flock(1)'s exit status when -n finds the lock taken. */
const FLOCK_BUSY = 1;

/** Where util-linux installs it: a fixed list, not the caller's PATH (the lock is the host's safety). */
const FLOCK_PATHS = ['/usr/bin/flock', '/bin/flock', '/usr/local/bin/flock'];

function flockBinary(): string {
  const found = FLOCK_PATHS.find((p) => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
  if (!found) throw new TmuxDriveError('BINARY_NOT_FOUND', 'flock(1) is not installed (util-linux): the serving host needs it for its lock (apt-get install util-linux)');
  return found;
}

function openLockFile(path: string): number {
  try {
    return openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o600);
  } catch (err) {
    throw new TmuxDriveError('DATA_DIR_INVALID', `cannot open the host lock ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`, { path });
  }
}

/** Runs flock(1) on `fd`; resolves with its exit status (0 locked, 1 busy with -n). */
function runFlock(fd: number, args: readonly string[], signal: AbortSignal | undefined, deadlineMs: number | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(flockBinary(), [...args, '3'], { stdio: ['ignore', 'ignore', 'pipe', fd] });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 1024) stderr += d.toString();
    });
    const stop = (): void => void child.kill('SIGKILL');
    const timer = deadlineMs === undefined ? undefined : setTimeout(stop, deadlineMs);
    signal?.addEventListener('abort', stop, { once: true });
    child.once('error', (err) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      reject(new TmuxDriveError('BINARY_NOT_FOUND', `flock(1) did not start: ${err.message}`));
    });
    child.once('exit', (code, sig) => {
      if (timer) clearTimeout(timer);
      signal?.removeEventListener('abort', stop);
      if (signal?.aborted) return reject(new TmuxDriveError('ABORTED', 'stopped waiting for the host lock'));
      if (sig !== null) return reject(new TmuxDriveError('TMUX_TIMEOUT', `flock(1) did not answer within ${deadlineMs ?? 0} ms`, { timeoutMs: deadlineMs }));
      if (code === 0 || code === FLOCK_BUSY) return resolve(code);
      reject(new TmuxDriveError('DATA_DIR_INVALID', `flock(1) failed (exit ${code}): ${stderr.trim().slice(0, 200)}`));
    });
  });
}

export class HostLock {
  private fd: number | undefined;

  private constructor(
    fd: number,
    readonly path: string,
    readonly mode: LockMode,
  ) {
    this.fd = fd;
  }

  /** The lock now, or undefined when another process holds it in a conflicting mode. */
  static async tryAcquire(path: string, mode: LockMode): Promise<HostLock | undefined> {
    const fd = openLockFile(path);
    try {
      const status = await runFlock(fd, [mode === 'exclusive' ? '-x' : '-s', '-n'], undefined, TRY_DEADLINE_MS);
      if (status === 0) return new HostLock(fd, path, mode);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    closeSync(fd);
    return undefined;
  }

  /**
   * Waits, blocked in the kernel, until the lock is granted (its holder released it or died).
   * Aborting ends the wait with ABORTED.
   */
  static async acquire(path: string, mode: LockMode, signal?: AbortSignal): Promise<HostLock> {
    const fd = openLockFile(path);
    try {
      await runFlock(fd, [mode === 'exclusive' ? '-x' : '-s'], signal, undefined);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return new HostLock(fd, path, mode);
  }

  get held(): boolean {
    return this.fd !== undefined;
  }

  /** Idempotent: closing the only descriptor of the description lets the lock go. */
  release(): void {
    const fd = this.fd;
    this.fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }
}

/**
 * Pids of the processes holding a flock on `path` (each has it open with a `lock:` line in its
 * fdinfo). For messages naming who holds a data dir; never a liveness check (the lock is that).
 */
export function lockHolders(path: string): number[] {
  let target: string;
  try {
    target = realpathSync(path);
  } catch {
    return [];
  }
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid <= 0) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== target) continue;
        if (/^lock:/m.test(readFileSync(`/proc/${pid}/fdinfo/${fd}`, 'latin1'))) {
          out.push(pid);
          break;
        }
      } catch {
        /* gone meanwhile */
      }
    }
  }
  return out;
}
