/**
 * The native shared view (native/shm_view.c, built by `npm install` through node-gyp, as
 * better-sqlite3 is): a file's first bytes mapped read-only and shared, so a read of them is a
 * memory read, not a system call. Used for SQLite's WAL-index header (wal-index-header.ts). When
 * the module was not built or cannot load, the reason is given and the caller reads with pread(2).
 */
import { createRequire } from 'node:module';

interface NativeShmView {
  mapShared(fd: number, length: number): ArrayBuffer;
}

/** From the sources (journal/) and from the build (dist/journal/): both find the package's build/. */
const CANDIDATES = ['../build/Release/shm_view.node', '../../build/Release/shm_view.node'];

function load(): NativeShmView | string {
  const require = createRequire(import.meta.url);
  let problem = 'build/Release/shm_view.node was not built (npm install builds it with node-gyp)';
  for (const candidate of CANDIDATES) {
    try {
      const loaded = require(candidate) as Partial<NativeShmView> | undefined;
      if (typeof loaded?.mapShared === 'function') return loaded as NativeShmView;
      problem = `${candidate} has no mapShared`;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'MODULE_NOT_FOUND') problem = `${candidate} cannot be loaded (${code ?? (error as Error).message})`;
    }
  }
  return problem;
}

let native: NativeShmView | string | undefined;

/** true when the native module loads (doctor's check), or why it does not. */
export function nativeShmView(): true | string {
  native ??= load();
  return typeof native === 'string' ? native : true;
}

/**
 * The first `length` bytes of the open regular file `fd`, mapped read-only and shared (they change
 * as other processes write the file), or why not. The mapping lives as long as the returned array;
 * the file must stay at least `length` bytes long while it is read (a read past a truncated end
 * faults the process: see wal-index-header.ts for why SQLite's shm file does).
 */
export function mapShared(fd: number, length: number): Uint8Array | string {
  native ??= load();
  if (typeof native === 'string') return native;
  try {
    return new Uint8Array(native.mapShared(fd, length));
  } catch (error) {
    return `the shm file cannot be mapped (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
}
