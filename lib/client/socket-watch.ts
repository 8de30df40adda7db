/**
 * Waits for a host's socket to (re)appear, woken by the kernel (inotify, through fs.watch on its
 * directory: the host renames its socket into place once it is ready), never by polling. For a
 * socket that is not a host's own file (an ssh forward: its file never changes), there is no
 * event to wait for; a bounded back-off stands in, armed only by the loss of a connection.
 */
import { watch, type FSWatcher } from 'node:fs';
import { basename, dirname } from 'node:path';

/** Back-off between attempts on a forwarded socket: short at first (a takeover is quick). */
const FORWARD_RETRY_MS = [50, 100, 200, 400, 800, 1000] as const;

export class SocketWatch {
  private watcher: FSWatcher | undefined;
  private events = 0;
  private wake: (() => void) | undefined;
  private attempt = 0;

  /** `fileEvents`: the socket is a host's own file in its serve dir (watchable). */
  constructor(
    path: string,
    private readonly fileEvents: boolean,
  ) {
    if (!fileEvents) return;
    try {
      const name = basename(path);
      this.watcher = watch(dirname(path), { persistent: true }, (_type, file) => {
        if (file !== null && file.toString() !== name) return;
        this.events += 1;
        this.wake?.();
      });
      this.watcher.on('error', () => this.close());
    } catch {
      this.watcher = undefined; // the directory is gone: only the deadline remains
    }
  }

  /** The number of events seen so far (to tell whether one came during an attempt). */
  get seen(): number {
    return this.events;
  }

  /** Resolves at the next event after `since` events (or the next back-off step), or at `deadline` with false. */
  next(since: number, deadline: number): Promise<boolean> {
    if (this.events > since) return Promise.resolve(true);
    const left = deadline - Date.now();
    if (left <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const delay = this.fileEvents ? left : Math.min(left, FORWARD_RETRY_MS[Math.min(this.attempt++, FORWARD_RETRY_MS.length - 1)] as number);
      const timer = setTimeout(() => {
        this.wake = undefined;
        resolve(this.fileEvents ? false : Date.now() < deadline);
      }, delay);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = undefined;
        resolve(true);
      };
    });
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.wake?.();
  }
}
