/**
 * A takeover looks for each drive's outcome among every event stored since its standby looked
 * (lib/driver/reconcile.ts findOutcome → Journal.firstEventOfKind, searched in SQL): a real journal
 * on disk, written through a second connection as the serving host writes while a standby waits.
 * The outcome is found however many events came before it, never past the point searched, and one
 * stored after a search is found by the next one from where it stopped.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Journal } from '../../journal/journal.js';
import { findOutcome } from '../../lib/driver/reconcile.js';
import { sessionInput, tempDataDir, type TempDir } from '../journal/journal-fixtures.js';

let tmp: TempDir;
let holder: Journal;
let standby: Journal;
beforeEach(() => {
  tmp = tempDataDir();
  holder = Journal.open(tmp.dir);
  holder.upsertSession(sessionInput(tmp.dir, 'a'));
  holder.upsertSession(sessionInput(tmp.dir, 'b'));
  standby = Journal.open(tmp.dir);
});
afterEach(() => {
  standby.close();
  holder.close();
  tmp.dispose();
});

/** `n` events of the kinds a driven drive stores, written and committed by the holder. */
function drive(id: string, n: number): void {
  const kinds = ['input', 'state', 'output', 'settled'];
  for (let i = 0; i < n; i++) holder.appendEvent(id, kinds[i % kinds.length] as string, { n: i });
  holder.flush();
}

describe("a takeover's search for an earlier outcome", () => {
  it('finds the outcome behind thousands of other events (more than a page), and only that drive’s', () => {
    drive('a', 2500);
    const outcomeSeq = holder.appendEvent('a', 'outcome', { outcome: 'done', reason: 'exited_zero' });
    drive('a', 300);
    drive('b', 40);
    const found = findOutcome(standby, 'a');
    expect(found.throughSeq).toBe(outcomeSeq);
    expect(found.outcome).toMatchObject({ sessionId: 'a', seq: outcomeSeq, kind: 'outcome', tags: { outcome: 'done', reason: 'exited_zero' } });
    // Found once, kept: a later search from it does not look again.
    expect(findOutcome(standby, 'a', found)).toBe(found);
    expect(findOutcome(standby, 'b')).toEqual({ throughSeq: 40 });
  });

  it('without an outcome it says how far it looked; an outcome stored after is found from there, one before it never looked at again', () => {
    drive('a', 120);
    const waiting = findOutcome(standby, 'a');
    expect(waiting).toEqual({ throughSeq: 120 });
    drive('a', 30);
    const outcomeSeq = holder.appendEvent('a', 'outcome', { outcome: 'failed', reason: 'server_gone' });
    holder.flush();
    const atTakeover = findOutcome(standby, 'a', waiting);
    expect(atTakeover.outcome?.seq).toBe(outcomeSeq);
    expect(atTakeover.throughSeq).toBe(151);
    // Nothing stored past the point looked at: the same point, no outcome.
    expect(findOutcome(standby, 'b', { throughSeq: 0 })).toEqual({ throughSeq: 0 });
  });
});
