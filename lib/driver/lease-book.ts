/**
 * The drives this process holds, by fencing token (invariant 4: one drive, one driver). The journal
 * keeps the lease; this book keeps the tokens, so that taking, checking and letting go of a lease
 * is one call each wherever the driver does it (create, reconcile, the journal binding).
 */
import { SessionError } from '../common/errors.js';
import { LeaseError, currentHolder, type Journal } from '../../journal/journal.js';

export class LeaseBook {
  private readonly tokens = new Map<string, number>();

  constructor(private readonly journal: Journal) {}

  /** Takes the drive's lease for this process; throws LeaseError LEASE_HELD when a live process holds it. */
  acquire(id: string): void {
    this.tokens.set(id, this.journal.acquireLease(id, currentHolder()).token);
  }

  /**
   * Takes the leases of `ids` in one journal transaction (a takeover's drives); returns the ids a
   * live process holds (not taken).
   */
  acquireAll(ids: readonly string[]): Set<string> {
    const heldElsewhere = new Set<string>();
    for (const [id, lease] of this.journal.acquireLeases(ids, currentHolder())) {
      if (lease instanceof LeaseError) heldElsewhere.add(id);
      else this.tokens.set(id, lease.token);
    }
    return heldElsewhere;
  }

  /** Lets the drive go, so that another host may take it; nothing when this process does not hold it. */
  release(id: string): void {
    const token = this.tokens.get(id);
    if (token === undefined) return;
    this.journal.releaseLease(id, token);
    this.tokens.delete(id);
  }

  /** Throws unless this process still holds the drive (its token is checked against the journal's). */
  check(id: string): void {
    const token = this.tokens.get(id);
    if (token === undefined) throw new SessionError('SESSION_CLOSED', `this process does not hold drive ${id}`, { id });
    this.journal.checkLease(id, token);
  }
}
