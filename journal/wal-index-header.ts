/**
 * The journal's WAL-index header, read from `journal.sqlite3-shm` without SQLite: the lease check
 * before each keystroke (leases.ts) asks SQLite only when this header differs from the one read
 * just before its last full check. One `pread(2)` instead of the two `fcntl(2)` SQLite's read lock
 * costs around `PRAGMA data_version`.
 *
 * What it relies on (https://www.sqlite.org/walformat.html §2.1): the shm file starts with two
 * copies of a 48-byte header, in native byte order, that every commit rewrites (its change counter,
 * last frame, salts and checksums), second copy first; `iVersion` is 3007000 and `isInit` 1 once
 * initialised. Every SQLite since 3.7.0 shares this layout through the same file, so it is stable.
 * A header that is torn (the copies differ), not initialised, of another version, short or
 * unreadable is never trusted: the caller runs the full check.
 *
 * The trap: POSIX record locks belong to the process and the file, not the descriptor, so closing
 * ANY descriptor of the shm file drops every lock SQLite's connections in this process hold on it
 * (the shared DMS lock and the read marks that keep a peer from resetting the file under them).
 * Descriptors are therefore shared per file in this process and closed only once SQLite has
 * unlinked that file (it does so at its last close, holding the database's exclusive lock: no
 * connection anywhere uses it then); until then a closed journal's descriptor is parked for reuse.
 *
 * The read itself: the file's first page is mapped read-only and shared (shm-view.ts, a small
 * native module), so a key's check copies 96 bytes from memory with no system call; a `pread(2)`
 * cost 20–45 µs of a ~0.7 ms keystroke on this VM, each key's caches cold (docs/journal.md). Where
 * the module is not built or the runtime refuses it, the header is read with `pread(2)` as before.
 * A shared mapping faults (SIGBUS) when read past the file's end; SQLite maps the same file in
 * this process and truncates it only when a connection opens it first, holding the DMS lock
 * exclusively, which no one gets while this journal's connection holds its shared DMS lock. The
 * page is read only while the header is not released (the connection open), so this mapping is
 * exposed to nothing SQLite's own is not.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { endianness } from 'node:os';
import { mapShared } from './shm-view.js';

/** Two copies of the 48-byte header; the checkpoint info after them does not change on a commit. */
const HEADER_PAIR_BYTES = 96;
const COPY_WORDS = 12;
const PAIR_WORDS = 24;
const WAL_INDEX_VERSION = 3007000;
const IS_INIT_OFFSET = 12;
const PAGE_SIZE_OFFSET = 14;
/** SQLite maps the shm in 32 KiB regions: an initialised file is at least that long. */
const SHM_REGION_BYTES = 32768;
/** What is mapped: the first page (the headers are its first 96 bytes). */
const MAPPED_BYTES = 4096;
const LITTLE = endianness() === 'LE';

interface SharedDescriptor {
  readonly fd: number;
  readonly ino: number;
  readonly dev: number;
  users: number;
}
/** Open shm descriptors of this process by path (see the trap above). */
const descriptors = new Map<string, SharedDescriptor>();

function isSameFile(path: string, d: SharedDescriptor): boolean {
  try {
    const now = statSync(path);
    return now.ino === d.ino && now.dev === d.dev;
  } catch {
    return false;
  }
}

/** Closes parked descriptors whose file SQLite has since unlinked or replaced. */
function closeUnlinked(): void {
  for (const [path, d] of descriptors) {
    if (d.users > 0 || isSameFile(path, d)) continue;
    descriptors.delete(path);
    closeSync(d.fd);
  }
}

function shareDescriptor(path: string): SharedDescriptor {
  const known = descriptors.get(path);
  if (known && isSameFile(path, known)) {
    known.users += 1;
    return known;
  }
  const fd = openSync(path, 'r');
  const st = fstatSync(fd);
  // A stale entry (a file since replaced) keeps its own descriptor until it is swept.
  if (known) descriptors.set(`${path}\0${known.dev}:${known.ino}`, known);
  const shared = { fd, ino: st.ino, dev: st.dev, users: 1 };
  descriptors.set(path, shared);
  return shared;
}

function readU16(b: Buffer, at: number): number {
  return LITTLE ? b.readUInt16LE(at) : b.readUInt16BE(at);
}

/**
 * Whether the pair (as native-order words: SQLite writes the header in the host's byte order) is
 * two equal, initialised copies of a version-3007000 header. Word loops, no Buffer call: this runs
 * before every key, with caches cold, where each call into Node's C++ costs microseconds.
 */
function isSettledHeader(bytes: Buffer, words: Int32Array): boolean {
  if (bytes[IS_INIT_OFFSET] !== 1 || words[0] !== WAL_INDEX_VERSION) return false;
  for (let i = 0; i < COPY_WORDS; i++) if (words[i] !== words[i + COPY_WORDS]) return false;
  return true;
}

/** Whether two header pairs read by `read` are the same bytes. */
export function sameHeader(a: Int32Array, b: Int32Array): boolean {
  for (let i = 0; i < PAIR_WORDS; i++) if (a[i] !== b[i]) return false;
  return true;
}

export interface WalIndexOptions {
  /** false: read the header with pread(2) even where it could be mapped (tests compare the two). */
  readonly map?: boolean;
}

/** What SQLite says about the connection, for the checks at open. */
export interface WalIndexFacts {
  readonly journalMode: string;
  readonly lockingMode: string;
  readonly pageSize: number;
}

export class WalIndexHeader {
  // Its own ArrayBuffer (alloc never pools), so the word view is aligned.
  private readonly scratch = Buffer.alloc(HEADER_PAIR_BYTES);
  private readonly words = new Int32Array(this.scratch.buffer, this.scratch.byteOffset, PAIR_WORDS);
  private released = false;
  /** The header pair in the shared mapping; undefined: read with pread(2). */
  private view: Uint8Array | undefined;
  /** How the header is read: `mapped`, or `pread (<why not mapped>)`. */
  private how = 'pread (not mapped)';

  private constructor(
    private readonly path: string,
    private readonly shared: SharedDescriptor,
  ) {}

  /**
   * The header of `<databaseFile>-shm`, checked against what SQLite says of the connection, or the
   * reason it cannot be used (then the caller asks SQLite every time, for good).
   */
  static open(databaseFile: string, facts: WalIndexFacts, opts: WalIndexOptions = {}): WalIndexHeader | string {
    if (facts.journalMode !== 'wal') return `journal_mode is ${facts.journalMode}, not wal`;
    // Exclusive locking keeps the wal-index in heap memory: the file would not change.
    if (facts.lockingMode !== 'normal') return `locking_mode is ${facts.lockingMode}`;
    const path = `${databaseFile}-shm`;
    let shared: SharedDescriptor;
    try {
      shared = shareDescriptor(path);
    } catch (error) {
      return `the shm file cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`;
    }
    const header = new WalIndexHeader(path, shared);
    const problem = header.layoutProblem(facts.pageSize);
    if (problem !== undefined) {
      header.release();
      return problem;
    }
    if (opts.map === false) {
      header.how = 'pread (not asked to map)';
      return header;
    }
    const mapped = mapShared(shared.fd, MAPPED_BYTES);
    if (typeof mapped === 'string') header.how = `pread (${mapped})`;
    else {
      header.view = mapped.subarray(0, HEADER_PAIR_BYTES);
      header.how = 'mapped';
    }
    return header;
  }

  /** `mapped` (a memory read per check), or `pread (<why not mapped>)` (a system call per check). */
  get readBy(): string {
    return this.how;
  }

  private layoutProblem(pageSize: number): string | undefined {
    try {
      if (fstatSync(this.shared.fd).size < SHM_REGION_BYTES) return 'the shm file is shorter than one region';
    } catch {
      return 'the shm file cannot be read';
    }
    if (this.read() === undefined) return 'the shm header is not a settled version-3007000 wal-index header';
    const b = this.scratch;
    // The page size as SQLite stores it (65536 as 1): a header of another layout would not match.
    const stored = readU16(b, PAGE_SIZE_OFFSET);
    if ((stored === 1 ? 65536 : stored) !== pageSize) return `the shm header's page size ${stored} is not the database's ${pageSize}`;
    return undefined;
  }

  /**
   * The two header copies as they are now, as words in a view reused by the next read (`slice` it
   * to keep it; compare with `sameHeader`); undefined when the read is short or fails, or the
   * header is torn, not initialised, or of another version: anything but a header SQLite settled.
   */
  read(): Int32Array | undefined {
    if (this.released) return undefined;
    const view = this.view;
    if (view !== undefined) this.scratch.set(view);
    else {
      try {
        if (readSync(this.shared.fd, this.scratch, 0, HEADER_PAIR_BYTES, 0) !== HEADER_PAIR_BYTES) return undefined;
      } catch {
        return undefined;
      }
    }
    return isSettledHeader(this.scratch, this.words) ? this.words : undefined;
  }

  /** After the database connection closed: lets go of the descriptor (closed once SQLite unlinked the file). */
  release(): void {
    if (this.released) return;
    this.released = true;
    // Never read again: the mapping goes with the array, once collected.
    this.view = undefined;
    this.shared.users -= 1;
    if (this.shared.users === 0 && !isSameFile(this.path, this.shared) && descriptors.get(this.path) === this.shared) {
      descriptors.delete(this.path);
      closeSync(this.shared.fd);
    }
    closeUnlinked();
  }
}
