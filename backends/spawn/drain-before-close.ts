/**
 * Keeps the last bytes a program writes before it exits, which node-pty 1.1.0 drops (measured
 * here, Linux 6.18, Node 20.20: a program writing 200 KB then exiting lost 1.4–7.8 KB in 12 of 20
 * runs; docs/backends.md). Two paths close the pty master with bytes still unread:
 *
 * - libuv (`uv__stream_io`, unix/stream.c) takes POLLHUP after a short read as end-of-file and
 *   stops reading, which holds for sockets but not for a pty master: it hands the slave's output
 *   out a piece at a time (a short read every time), so when the slave closes the kernel may still
 *   hold several KB. Node then ends and destroys the socket, closing the fd with them inside.
 * - node-pty destroys the socket itself 200 ms after it reaped the child (DESTROY_SOCKET_TIMEOUT_MS
 *   in unixTerminal.js) if it has not closed by then, dropping what a paused socket has buffered
 *   and what the kernel still holds.
 *
 * Both go through `socket.destroy()`. Just before it runs, the socket's own buffer is read out
 * (`read()` emits each chunk as 'data', so it reaches the usual listener in order) and then the
 * master is read synchronously (it is non-blocking) until EIO, which the kernel returns only once
 * the buffer is empty and no slave is open, or EAGAIN, when a process outside the program's tree
 * still holds the slave: what it writes later is not the program's tail.
 *
 * The members used are node-pty 1.1.0's (`fd` and `_socket` of UnixTerminal), not its typings:
 * `drainBeforeClose` returns false when they are missing, and the caller reports that.
 */
import { readSync } from 'node:fs';
import type { IPty } from 'node-pty';

/**
 * A program that has exited leaves at most one pty buffer behind (≤ 12 KB seen here, 64 KB of
 * flip buffers in the kernel at most); more can only come from a writer still alive outside the
 * program's tree, so the synchronous read stops there rather than hold the event loop.
 */
export const MAX_TAIL_BYTES = 1024 * 1024;
/** Read size: the kernel hands out ≤ 4 KB per read of a pty master; larger costs nothing. */
const READ_BYTES = 64 * 1024;

interface DestroyableStream {
  read(): unknown;
  destroy(error?: Error): unknown;
}

/** The parts of node-pty 1.1.0's UnixTerminal that its typings do not declare. */
interface UnixTerminalInternals {
  readonly fd: number;
  readonly _socket: DestroyableStream;
}

function internalsOf(pty: IPty): UnixTerminalInternals | undefined {
  const t = pty as unknown as Partial<UnixTerminalInternals>;
  const socket = t._socket;
  if (typeof t.fd !== 'number' || typeof socket !== 'object' || socket === null) return undefined;
  if (typeof socket.read !== 'function' || typeof socket.destroy !== 'function') return undefined;
  return { fd: t.fd, _socket: socket };
}

export interface TailReport {
  /** Bytes read from the master after the socket had stopped. */
  readonly bytes: number;
  /** Why reading stopped: 'EIO' (drained), 'EAGAIN' (a slave is still open), 'eof', 'limit', or another errno code. */
  readonly stop: string;
}

/**
 * Makes every close of `pty`'s master read what is left first. `emit` gets the bytes read from
 * the kernel (fresh buffers, in order, after everything the socket already delivered through
 * onData); `done` reports the drain once. Returns false when this node-pty build lacks the
 * members used (nothing is changed then).
 */
export function drainBeforeClose(pty: IPty, emit: (bytes: Uint8Array) => void, done: (report: TailReport) => void): boolean {
  const internals = internalsOf(pty);
  if (!internals) return false;
  const { fd, _socket: socket } = internals;
  const destroy = socket.destroy;
  let drained = false;
  socket.destroy = function destroyAfterDrain(this: DestroyableStream, error?: Error) {
    if (!drained) {
      drained = true;
      // Chunks a paused socket still holds: read() emits each one as 'data'.
      while (socket.read() !== null);
      done(readRest(fd, emit));
    }
    return destroy.call(this, error);
  };
  return true;
}

function readRest(fd: number, emit: (bytes: Uint8Array) => void): TailReport {
  let total = 0;
  const buf = Buffer.allocUnsafe(READ_BYTES);
  for (;;) {
    if (total >= MAX_TAIL_BYTES) return { bytes: total, stop: 'limit' };
    let n: number;
    try {
      n = readSync(fd, buf, 0, buf.length, null);
    } catch (err) {
      return { bytes: total, stop: (err as NodeJS.ErrnoException).code ?? 'error' };
    }
    if (n === 0) return { bytes: total, stop: 'eof' };
    total += n;
    // A copy of just the bytes read: the mirror keeps queued chunks by reference.
    emit(Buffer.from(buf.subarray(0, n)));
  }
}
