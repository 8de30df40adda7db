/**
 * Re-attaching at open: every non-terminal drive of the journal that no live process holds. A live
 * server is attached (stale control clients ended, mirror rebuilt from a snapshot, a gap marked),
 * through a hot standby's observer when there is one (standby.ts: no control client to start;
 * its mirror is rebuilt from the visible rows first and gets the pane's history a second later);
 * a gone one is reported `failed` with its journal kept; a remote host that cannot be reached
 * leaves its rows for a later open. Nothing is ever relaunched.
 */
import { TmuxDriveError } from '../common/errors.js';
import type { Session } from '../session/session.js';
import { HISTORY_RESYNC, type BackendListener, type DriveBackend } from '../session/backend.js';
import { NON_TERMINAL_STATES, type Journal, type JournalEvent, type SessionRecord } from '../../journal/journal.js';
import type { BackendFactory } from './backend-factory.js';
import type { LeaseBook } from './lease-book.js';
import type { SessionFactory } from './session-factory.js';
import { takeoverMark } from './takeover-marks.js';

/** Drives re-attached cold at once (2 cores here; each attach starts a `tmux -C` and mostly waits on it). */
const RECONCILE_CONCURRENCY = 8;
/**
 * A standby's takeover: each drive's first verdict (a /proc walk, a classification, a state event)
 * waits this long after its re-attach, past the first keys and echoes its reconnected clients send
 * (≈ 0.2–0.5 s after the lock on a quiet host), instead of landing among them.
 */
const TAKEOVER_FIRST_VERDICT_MS = 1000;

export interface ReconcileContext {
  readonly journal: Journal;
  readonly leases: LeaseBook;
  readonly backends: BackendFactory;
  readonly sessions: SessionFactory;
  /** The size a re-attached mirror starts at (the snapshot brings the pane's own). */
  readonly defaults: { readonly cols: number; readonly rows: number };
  /** Hands a re-attached (or failed) drive to the driver. */
  register(session: Session): void;
  /**
   * A hot standby's observers by drive name (standby.ts): adopted once the drive's lease is taken;
   * `pending` is a drive's attach still under way (the standby's start does not wait for them).
   */
  readonly observers?: {
    get(name: string): { readonly isClosed: boolean; adopt(listener: BackendListener, opts: { readonly withoutHistory: boolean }): Promise<DriveBackend> } | undefined;
    pending(name: string): Promise<void> | undefined;
  };
  /** What a hot standby already read of each drive's journal while it waited (only later events are read). */
  readonly earlier?: ReadonlyMap<string, EarlierOutcome>;
}

/** A drive's journal read up to `throughSeq`: the outcome event an earlier host wrote, if any. */
export interface EarlierOutcome {
  readonly throughSeq: number;
  readonly outcome?: JournalEvent;
}

/**
 * The drive's outcome event after `from` (given exactly once per drive, across hosts), searched in
 * the journal (no other event read: a standby that waited long takes over a drive with many events
 * since it looked).
 */
export function findOutcome(journal: Journal, id: string, from: EarlierOutcome = { throughSeq: 0 }): EarlierOutcome {
  if (from.outcome) return from;
  const { throughSeq, event } = journal.firstEventOfKind(id, 'outcome', from.throughSeq);
  return event ? { throughSeq, outcome: event } : { throughSeq };
}

/** The journal's drives to reconcile: all its live ones, or those of these names. */
export function reconcileTargets(journal: Journal, which: 'all' | readonly string[]): SessionRecord[] {
  return journal.listSessions({ states: NON_TERMINAL_STATES }).filter((r) => which === 'all' || which.includes(r.id));
}

/**
 * Reconciles `records` (reconcileTargets), a few at a time; `settled(id)` is told as each drive
 * is re-attached or failed (a takeover serves while it re-attaches: a call for a drive waits for
 * that drive alone).
 */
export async function reconcile(ctx: ReconcileContext, records: readonly SessionRecord[], settled?: (id: string) => void): Promise<void> {
  // Every lease in one journal transaction, before any drive is re-attached; a drive another
  // live host holds is left to it.
  const heldElsewhere = records.length > 0 ? ctx.leases.acquireAll(records.map((r) => r.id)) : new Set<string>();
  takeoverMark('leases');
  for (const id of heldElsewhere) settled?.(id);
  const ours = records.filter((r) => !heldElsewhere.has(r.id));
  const observed = (r: SessionRecord): boolean => ctx.observers?.get(r.id)?.isClosed === false;
  const one = async (rec: SessionRecord): Promise<void> => {
    try {
      await reconcileOne(ctx, rec);
    } finally {
      takeoverMark(`reattached:${rec.id}`);
      settled?.(rec.id);
    }
  };
  // An observed drive is adopted through the client already attached (a few commands to its
  // server, then its capture rebuilt into its mirror): all of them at once, so their servers answer
  // on the other core while this one rebuilds what came back (8 at a time, the last of 20 was
  // re-attached three batches after the first). A drive re-attached cold starts a control client
  // (a process): a few at a time, after the observed ones have asked.
  const queue = ours.filter((r) => !observed(r));
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let rec = queue[next++]; rec; rec = queue[next++]) await one(rec);
  };
  await Promise.all([...ours.filter(observed).map(one), ...Array.from({ length: Math.min(RECONCILE_CONCURRENCY, queue.length) }, worker)]);
}

async function reconcileOne(ctx: ReconcileContext, rec: SessionRecord): Promise<void> {
  const { journal, backends } = ctx;
  // Its lease is taken (reconcile).
  const { session } = ctx.sessions.make({
    id: rec.id,
    allowId: rec.allowId,
    cols: ctx.defaults.cols,
    rows: ctx.defaults.rows,
    createdAt: rec.createdAt,
    firstSeq: journal.lastSeq(rec.id) + 1,
    interactions: rec.interactions,
    // What list() says of a drive that never gets a backend here (failed at open).
    recorded: { backend: rec.backend, durable: rec.durable },
  });
  ctx.register(session);
  const earlier = findOutcome(journal, rec.id, ctx.earlier?.get(rec.id)).outcome;
  if (earlier) {
    // An earlier host already gave this drive its verdict: exactly once per drive, across hosts.
    const t = earlier.tags;
    const outcome = t.outcome === 'done' || t.outcome === 'needs-you' || t.outcome === 'failed' ? t.outcome : 'failed';
    session.restoreOutcome({ outcome, reason: String(t.reason ?? 'unknown'), elapsedMs: Number(t.elapsed_ms ?? 0), interactions: Number(t.interactions ?? 0) });
  }
  const remoteId = rec.backend === 'tmux' ? backends.remoteHostOf(rec.socketPath) : undefined;
  if (remoteId !== undefined) return reconcileRemote(ctx, rec, remoteId, session);
  // An attach under way (a standby whose holder died while it started) is waited for, for this
  // drive alone: a second control client beside it would only be ended again.
  if (rec.backend === 'tmux') await ctx.observers?.pending(rec.id);
  const observer = rec.backend === 'tmux' ? ctx.observers?.get(rec.id) : undefined;
  if (observer && !observer.isClosed) {
    // The observer's client is attached, so the server answers: adopted under the lease just
    // taken. If that fails (the server ended meanwhile, or the client did) the drive goes the
    // cold way below, which tells a gone server from a live one.
    try {
      // The first rebuild without the pane's history: a capture of the whole history (up to the
      // scrollback limit, 1000 lines by default) made each takeover's re-attach cost grow with
      // what the drives had printed. The history follows once the takeover's first rounds are past.
      const backend = await observer.adopt(session.listener, { withoutHistory: true });
      await attachRecorded(ctx, rec, session, () => Promise.resolve(backend), { observed: true });
      if (session.lifecycle === 'live') historyLater(backend);
      return;
    } catch {
      /* re-attached cold */
    }
  }
  const alive = rec.backend === 'tmux' && (await backends.localServerAnswers(rec.socketPath));
  if (!alive) {
    // A host killed inside create() can leave a tmux still starting (its socket not yet bound):
    // that launch never completed, so it is ended, never adopted and never relaunched.
    const interrupted = rec.backend === 'tmux' && backends.endUnfinishedLaunch(rec.socketPath, rec.id);
    const reason = rec.backend !== 'tmux' ? 'host_restarted' : interrupted ? 'launch_interrupted' : 'server_gone';
    journal.markFailed(rec.id, reason);
    journal.recordIncident(rec.id, 'server_gone', { backend: rec.backend });
    return failUnbound(session, reason);
  }
  await attachRecorded(ctx, rec, session, () => backends.attachLocal(rec.id, session.listener));
}

/**
 * Asks for the pane's history a takeover's first rebuild left out, after its first rounds (the
 * same moment as its first verdict). One timer per drive, armed by the takeover; a drive closed
 * meanwhile refuses the resync, which changes nothing.
 */
function historyLater(backend: DriveBackend): void {
  setTimeout(() => void backend.resync(HISTORY_RESYNC).catch(() => undefined), TAKEOVER_FIRST_VERDICT_MS).unref();
}

/** Attaches a journaled drive whose server answers: live again, a gap marked; or failed, with why. */
async function attachRecorded(ctx: ReconcileContext, rec: SessionRecord, session: Session, attach: () => Promise<DriveBackend>, tags: { readonly observed?: boolean } = {}): Promise<void> {
  try {
    session.bind(await attach(), ctx.observers ? { firstVerdictAfterMs: TAKEOVER_FIRST_VERDICT_MS } : {});
    session.markGap('reattach');
    // The program may have ended while no host was attached (its exit is journaled already).
    // A row that says live already (a host killed while it drove) is not written again.
    if (session.lifecycle === 'live' && rec.state !== 'live') ctx.journal.updateSession(rec.id, { state: 'live' });
    // `observed`: a hot standby's observer was adopted (no control client started).
    ctx.journal.appendEvent(rec.id, 'reattach', tags);
  } catch (err) {
    ctx.journal.markFailed(rec.id, 'reattach_failed');
    ctx.journal.recordIncident(rec.id, 'control_lost', { code: err instanceof TmuxDriveError ? err.code.toLowerCase() : 'unknown' });
    failUnbound(session, 'reattach_failed');
  }
}

/**
 * A drive found failed at re-attach: its mirror was made but never rebuilt from the pane, so it
 * goes with the session's timers (a read then fails SESSION_CLOSED saying why, never a blank
 * screen). A session already bound keeps its mirror (it shows what the pane showed).
 */
function failUnbound(session: Session, reason: string): void {
  session.markFailed(reason);
  session.dispose();
}

/**
 * A remote drive: its server answers over the host's ssh channel → attach (stale control clients
 * ended there); gone → failed; the host unreachable → the row stays as it was, for a later open.
 */
async function reconcileRemote(ctx: ReconcileContext, rec: SessionRecord, hostId: string, session: Session): Promise<void> {
  const { journal, backends } = ctx;
  if (!backends.knowsHost(hostId)) {
    journal.markFailed(rec.id, 'host_unknown');
    return failUnbound(session, 'host_unknown');
  }
  const probe = await backends.remoteServer(hostId, rec.id);
  if (probe !== 'alive') {
    if (probe === 'gone') {
      journal.markFailed(rec.id, 'server_gone');
      journal.recordIncident(rec.id, 'server_gone', { backend: rec.backend });
    }
    failUnbound(session, probe === 'gone' ? 'server_gone' : 'host_unreachable');
    if (probe !== 'gone') ctx.leases.release(rec.id); // not ours to fail: a later open retries
    return;
  }
  await attachRecorded(ctx, rec, session, () => backends.attachRemote(hostId, rec.id, session.listener));
}
