/**
 * Pruning finished drives: every exited or failed drive this driver holds, and every exited or
 * failed row of the journal, is ended for good — a tmux server still up (a dead pane kept for an
 * operator after a nonzero exit) is killed and verified gone with its socket — and forgotten: its
 * session leaves the driver and its journal row goes with its events, answered prompts and
 * incidents. A live drive is never touched; a drive another live process holds, or whose server
 * could not be verified gone, is kept and says why.
 */
import { TmuxDriveError } from '../common/errors.js';
import type { ExitInfo } from '../common/exit-info.js';
import type { Session } from '../session/session.js';
import type { BackendListener, DriveBackend } from '../session/backend.js';
import { LeaseError, isRetiredSessionId, type Journal, type SessionRecord } from '../../journal/journal.js';
import type { BackendFactory } from './backend-factory.js';
import type { LeaseBook } from './lease-book.js';

/** One finished drive and what prune did with it. */
export interface PrunedDrive {
  readonly id: string;
  readonly state: 'exited' | 'failed';
  readonly reason?: string;
  readonly exit?: ExitInfo;
  /** Forgotten (true), or kept: `kept` says why (a machine token). */
  readonly pruned: boolean;
  readonly kept?: 'lease_held' | 'kill_unverified' | 'host_unreachable';
}

export interface PruneContext {
  readonly journal: Journal;
  readonly leases: LeaseBook;
  readonly backends: BackendFactory;
  /** This driver's sessions by id; pruned ones are removed from it. */
  readonly sessions: Map<string, Session>;
}

/** A listener for a backend attached only to be ended: nothing it reports matters any more. */
const IGNORE: BackendListener = {
  output: () => undefined,
  resync: () => undefined,
  exit: () => undefined,
  lost: () => undefined,
  incident: () => undefined,
  resized: () => undefined,
  operators: () => undefined,
};

export async function pruneDrives(ctx: PruneContext, ids: readonly string[] | undefined): Promise<PrunedDrive[]> {
  const wanted = (id: string): boolean => ids === undefined || ids.includes(id);
  const out: PrunedDrive[] = [];
  for (const [id, s] of [...ctx.sessions]) {
    if (!wanted(id) || s.lifecycle === 'live') continue;
    const state = s.lifecycle;
    const about = { id, state, ...(s.lostBecause ? { reason: s.lostBecause } : {}), ...(s.exit ? { exit: s.exit } : {}) };
    try {
      await s.kill(); // verified; a no-op for one already killed
    } catch (err) {
      out.push({ ...about, pruned: false, kept: keptBecause(err) });
      continue;
    }
    ctx.sessions.delete(id);
    forget(ctx.journal, id);
    out.push({ ...about, pruned: true });
  }
  for (const rec of ctx.journal.listSessions({ states: ['exited', 'failed'] })) {
    if (!wanted(rec.id) || ctx.sessions.has(rec.id)) continue;
    out.push(await pruneRecord(ctx, rec));
  }
  return out;
}

/** A finished drive of the journal that no session of this driver stands for. */
async function pruneRecord(ctx: PruneContext, rec: SessionRecord): Promise<PrunedDrive> {
  const about = { id: rec.id, state: rec.state as 'exited' | 'failed', ...(rec.failureReason ? { reason: rec.failureReason } : {}), ...(rec.exit ? { exit: rec.exit } : {}) };
  // A retired row's socket is its old name's, which a new drive may use now: never touched.
  if (!isRetiredSessionId(rec.id) && rec.backend === 'tmux') {
    try {
      ctx.leases.acquire(rec.id);
    } catch (err) {
      if (err instanceof LeaseError && err.code === 'LEASE_HELD') return { ...about, pruned: false, kept: 'lease_held' };
      throw err;
    }
    try {
      const backend = await serverOf(ctx, rec);
      if (backend === 'unreachable') return { ...about, pruned: false, kept: 'host_unreachable' };
      await backend?.kill();
    } catch (err) {
      return { ...about, pruned: false, kept: keptBecause(err) };
    } finally {
      ctx.leases.release(rec.id);
    }
  }
  forget(ctx.journal, rec.id);
  return { ...about, pruned: true };
}

/** The drive's server attached (to be killed), undefined when none answers, or 'unreachable'. */
async function serverOf(ctx: PruneContext, rec: SessionRecord): Promise<DriveBackend | undefined | 'unreachable'> {
  const { backends } = ctx;
  const hostId = backends.remoteHostOf(rec.socketPath);
  if (hostId === undefined) return (await backends.localServerAnswers(rec.socketPath)) ? backends.attachLocal(rec.id, IGNORE) : undefined;
  if (!backends.knowsHost(hostId)) return undefined;
  const probe = await backends.remoteServer(hostId, rec.id);
  if (probe === 'unreachable') return 'unreachable';
  return probe === 'alive' ? backends.attachRemote(hostId, rec.id, IGNORE) : undefined;
}

function keptBecause(err: unknown): PrunedDrive['kept'] {
  if (err instanceof LeaseError || (err instanceof TmuxDriveError && err.code === 'LEASE_HELD')) return 'lease_held';
  return 'kill_unverified';
}

function forget(journal: Journal, id: string): void {
  if (journal.getSession(id)) journal.forgetSession(id);
}
