/**
 * One drive, one driver (invariant 4): a lease per session with a fencing token that only grows,
 * held by a process named by its pid and start time. Acquisition is one IMMEDIATE transaction, so
 * of two hosts racing for a session exactly one wins; a holder that is dead is taken over, with a
 * lease_takeover incident written in the same transaction.
 *
 * The check before every keystroke reads the lease row only when the file may have changed since
 * the row was last seen: `PRAGMA data_version` (a few µs, no table read) changes whenever another
 * connection commits, and this connection writes lease rows only here (acquire, release), which
 * forget what was seen. So an unchanged version means the row is the one verified before.
 *
 * In front of that, the WAL-index header (wal-index-header.ts, one `pread(2)`): every commit by any
 * connection rewrites it, so when it equals the header read just BEFORE the last full check, nothing
 * has committed since that check's snapshot (which saw every commit before the read) and the
 * verdict stands without SQLite. Any doubt about the header (torn, unreadable) means a full check.
 */
import { LeaseError, type LeaseHolder } from './journal-error.js';
import { encodeTags } from './machine-values.js';
import { bootId, isHolderAlive } from './process-identity.js';
import type { Lease, LeaseInfo } from './records.js';
import type { Statements } from './statements.js';
import { sameHeader, type WalIndexHeader } from './wal-index-header.js';
import type { WriteBuffer } from './write-buffer.js';

type Acquired = { readonly token: number; readonly previous?: LeaseHolder } | { readonly refusedBy: LeaseHolder; readonly token: number };

export class Leases {
  /** Leases this journal instance holds: session id → token. */
  private readonly held = new Map<string, number>();
  /**
   * Tokens found current by `check`, with the file's data_version when the row was read and the
   * WAL-index header read before that (undefined: none could be trusted).
   */
  private readonly verified = new Map<string, { readonly token: number; readonly version: number; readonly header: Int32Array | undefined }>();
  /** Checks answered from the WAL-index header alone, and checks that asked SQLite. */
  private readonly counts = { viaWalIndex: 0, full: 0 };

  constructor(
    private readonly q: Statements,
    private readonly buffer: WriteBuffer,
    private readonly now: () => number,
    /** The header, or why it is not used (then every check asks SQLite). */
    private readonly walIndex: WalIndexHeader | string,
  ) {}

  /** How the checks went, for JournalStats. */
  checkStats(): { readonly viaWalIndex: number; readonly full: number; readonly walIndexOff: string | null; readonly walIndexReadBy: string | null } {
    const w = this.walIndex;
    return typeof w === 'string' ? { ...this.counts, walIndexOff: w, walIndexReadBy: null } : { ...this.counts, walIndexOff: null, walIndexReadBy: w.readBy };
  }

  get holdsAny(): boolean {
    return this.held.size > 0;
  }

  /** See Journal.acquireLease (arguments already checked). */
  acquire(sessionId: string, holder: LeaseHolder): Lease {
    const mine = this.held.get(sessionId);
    this.verified.delete(sessionId);
    const outcome = this.buffer.write(() => this.decide(sessionId, holder, mine, this.now(), bootId()));
    return this.settle(sessionId, outcome);
  }

  /**
   * See Journal.acquireLeases: every lease decided in ONE transaction (a takeover takes all its
   * drives at once: one commit instead of one per drive).
   */
  acquireAll(sessionIds: readonly string[], holder: LeaseHolder): Map<string, Lease | LeaseError> {
    const mine = new Map(sessionIds.map((id) => [id, this.held.get(id)]));
    for (const id of sessionIds) this.verified.delete(id);
    const outcomes = this.buffer.write(() => {
      const at = this.now();
      const boot = bootId();
      return sessionIds.map((id) => this.decide(id, holder, mine.get(id), at, boot));
    });
    const result = new Map<string, Lease | LeaseError>();
    sessionIds.forEach((id, i) => {
      try {
        result.set(id, this.settle(id, outcomes[i] as Acquired));
      } catch (err) {
        if (!(err instanceof LeaseError)) throw err;
        result.set(id, err);
      }
    });
    return result;
  }

  /** Inside a write: takes the session's lease unless a live process holds it. */
  private decide(sessionId: string, holder: LeaseHolder, mine: number | undefined, at: number, boot: string | null): Acquired {
    const row = this.q.lease.get(sessionId);
    if (!row) {
      this.q.insertLease.run(sessionId, holder.pid, holder.startTime, boot, at);
      return { token: 1 };
    }
    if (row.holder_pid === null || row.holder_start === null) {
      this.q.takeLease.run(row.token + 1, holder.pid, holder.startTime, boot, at, sessionId);
      return { token: row.token + 1 };
    }
    if (mine === row.token) return { token: mine };
    const previous = { pid: row.holder_pid, startTime: row.holder_start };
    const sameBoot = row.holder_boot === null || boot === null || row.holder_boot === boot;
    if (sameBoot && isHolderAlive(previous)) return { refusedBy: previous, token: row.token };
    const token = row.token + 1;
    this.q.takeLease.run(token, holder.pid, holder.startTime, boot, at, sessionId);
    const sid = this.q.seqOf.get(sessionId)?.sid ?? null;
    this.q.insertIncident.run(sid, 'lease_takeover', at, encodeTags({ prev_pid: previous.pid, prev_token: row.token, token }));
    this.buffer.countIncidentWritten();
    return { token, previous };
  }

  /** After the write committed: the lease held, or LEASE_HELD naming who holds it. */
  private settle(sessionId: string, outcome: Acquired): Lease {
    if ('refusedBy' in outcome) {
      const by = outcome.refusedBy;
      throw new LeaseError(
        'LEASE_HELD',
        `session "${sessionId}" is already driven by process ${by.pid} (started at tick ${by.startTime}, lease token ${outcome.token}); one drive has one driver: stop that process or use it`,
        sessionId,
        outcome.token,
        by,
      );
    }
    this.held.set(sessionId, outcome.token);
    return outcome.previous ? { token: outcome.token, takenOverFrom: outcome.previous } : { token: outcome.token };
  }

  /** Throws LEASE_LOST unless `token` is the session's current, held token. */
  check(sessionId: string, token: number): void {
    // Read BEFORE SQLite's snapshot: a commit after it changes the header, one before it is seen.
    const header = typeof this.walIndex === 'string' ? undefined : this.walIndex.read();
    const seen = this.verified.get(sessionId);
    if (seen?.token === token && header !== undefined && seen.header !== undefined && sameHeader(seen.header, header)) {
      this.counts.viaWalIndex += 1;
      return;
    }
    this.counts.full += 1;
    const kept = header?.slice();
    const version = this.q.dataVersion.get() ?? -1;
    if (seen !== undefined && seen.token === token && seen.version === version) {
      this.verified.set(sessionId, { token, version, header: kept });
      return;
    }
    this.verified.delete(sessionId);
    const row = this.q.lease.get(sessionId);
    if (row && row.holder_pid !== null && row.token === token) {
      this.verified.set(sessionId, { token, version, header: kept });
      return;
    }
    const current = row && row.holder_pid !== null ? row.token : null;
    throw new LeaseError(
      'LEASE_LOST',
      `the lease on session "${sessionId}" is no longer this driver's (token ${String(token)}, current ${current === null ? 'none' : String(current)}): send nothing more to it`,
      sessionId,
      current,
    );
  }

  /** Lets go of the lease if `token` is still current; returns whether it was. */
  release(sessionId: string, token: number): boolean {
    this.verified.delete(sessionId);
    const released = this.buffer.write(() => this.q.releaseLease.run(this.now(), sessionId, token).changes > 0);
    if (this.held.get(sessionId) === token) this.held.delete(sessionId);
    return released;
  }

  /** Inside a write (the journal's close): lets go of every lease this instance holds. */
  releaseAllHeld(at: number): void {
    this.verified.clear();
    for (const [sessionId, token] of this.held) this.q.releaseLease.run(at, sessionId, token);
  }

  forgetAll(): void {
    this.held.clear();
    this.verified.clear();
  }

  info(sessionId: string): LeaseInfo | undefined {
    const row = this.q.lease.get(sessionId);
    if (!row) return undefined;
    const holder = row.holder_pid !== null && row.holder_start !== null ? { pid: row.holder_pid, startTime: row.holder_start } : null;
    return { sessionId, token: row.token, holder, acquiredAt: row.acquired_at, releasedAt: row.released_at };
  }
}
