/**
 * What a session writes to the journal: one handler per session event, each turning the event into
 * content-free rows (states, machine reasons, counts), plus the answered-prompt memory the
 * session's auto-answer reads and writes. Free-form reasons become journal tokens through
 * toMachineToken, never anywhere else.
 */
import type { Disposable } from '../common/disposable.js';
import type { ExitInfo } from '../common/exit-info.js';
import { toMachineToken } from '../common/machine-token.js';
import type { SessionStatus } from '../perceive/status.js';
import type { Attention, DriveOutcome, Session, SessionInit } from '../session/session.js';
import { hashOf, type IncidentKind, type Journal } from '../../journal/journal.js';
import type { LeaseBook } from './lease-book.js';

/** Backend incident codes as journal incident kinds (the journal stores machine tokens only). */
const INCIDENT_OF: Readonly<Record<string, IncidentKind>> = {
  evidence_overflow: 'evidence_overflow',
  pty_read_error: 'malformed_stream',
  pty_tail_incomplete: 'malformed_stream',
  pty_tail_unguarded: 'malformed_stream',
  stray_line: 'malformed_stream',
  unknown_notification: 'malformed_stream',
  resync_failed: 'resync_failed',
  pane_in_mode_at_attach: 'pane_in_mode',
  stale_control_clients: 'control_lost',
  // A reply that did not end where its size said (the control client is replaced), and pane text
  // holding a reply's exact guard: a program trying to forge the framing.
  'control_framing-mismatch': 'malformed_stream',
  'control_guard-in-content': 'malformed_stream',
  control_replaced: 'control_lost',
  // The server of a cleanly exited drive could not be verified gone.
  cleanup_failed: 'cleanup_failure',
};

/** The seqs and counts of an evidence_overflow incident, as journal tags (numbers only). */
function overflowTags(detail: Record<string, unknown>): Record<string, number> {
  const tags: Record<string, number> = {};
  for (const [key, tag] of [['fromSeq', 'from_seq'], ['toSeq', 'to_seq'], ['entries', 'entries'], ['bytes', 'bytes']] as const) {
    const value = detail[key];
    if (typeof value === 'number' && Number.isSafeInteger(value)) tags[tag] = value;
  }
  return tags;
}

/** A dialog digest as the journal stores it (hex, with a kind prefix). */
function dialogDigest(digest: string): string {
  return /^[0-9a-f]{16,128}$/.test(digest) ? `dialog:${digest}` : `dialog:${hashOf(digest).slice(0, 32)}`;
}

/** The answered-prompt memory of drive `id`: a dialog is never answered twice, also across hosts. */
export function journalAnswers(journal: Journal, id: string): NonNullable<SessionInit['answers']> {
  return {
    count: (digest) => journal.answerCount(id, dialogDigest(digest)),
    // A key name is stored as the journal's key shape: anything else becomes `+`.
    record: (digest, key) => void journal.recordAnswer(id, dialogDigest(digest), key.replace(/[^A-Za-z0-9_+-]/g, '+').slice(0, 32) || 'key'),
  };
}

/** Records a session's transitions in the journal until disposed; lets go of its lease when it ends. */
export class JournalBinding implements Disposable {
  private readonly id: string;
  private readonly subscriptions: readonly Disposable[];
  /** The row reached a terminal state (exited, failed): letting go of the session keeps it there. */
  private terminal = false;

  constructor(
    private readonly session: Session,
    private readonly journal: Journal,
    private readonly leases: LeaseBook,
  ) {
    this.id = session.id;
    this.subscriptions = [
      session.on('state', (status) => this.onState(status)),
      session.on('attention', (attention) => this.onAttention(attention)),
      session.on('exit', (exit) => this.onExit(exit)),
      session.on('outcome', (outcome) => this.onOutcome(outcome)),
      session.on('lost', (reason) => this.onLost(reason)),
      session.on('incident', (code, detail) => this.onIncident(code, detail)),
      session.on('closed', (how) => this.onClosed(how)),
    ];
  }

  /** Stops recording (a session discarded before it was ever handed out). Idempotent. */
  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }

  private onState(status: SessionStatus): void {
    if (status.state === 'exited') return; // recorded by 'exit'
    // Counts survive the host (caps such as maxInteractions hold across CLI invocations); they
    // are written when the screen settles and on detach, not on the keystroke path; at the end of
    // the turn, in one transaction with the state event (and every other drive's of that turn).
    this.journal.updateSessionSoon(this.id, { classification: { state: status.state, reason: status.reason }, interactions: this.session.interactionCount });
    this.journal.appendEvent(this.id, 'state', { state: status.state, reason: status.reason });
  }

  private onAttention(attention: Attention): void {
    this.journal.appendEvent(this.id, 'attention', { kind: attention.kind, reason: toMachineToken(attention.reason), confidence: attention.confidence });
  }

  private onExit(exit: ExitInfo): void {
    this.terminal = true;
    this.journal.updateSession(this.id, { state: 'exited', exit, interactions: this.session.interactionCount });
    this.journal.appendEvent(this.id, 'exit', { code: exit.code ?? -1, signal: exit.signal ?? 0 });
    if (exit.code !== null && exit.code !== 0) this.journal.recordIncident(this.id, 'nonzero_exit', { code: exit.code });
  }

  private onOutcome(o: DriveOutcome): void {
    // Machine tags only: the verdict, its reason token, counts.
    this.journal.appendEvent(this.id, 'outcome', {
      outcome: o.outcome,
      reason: toMachineToken(o.reason),
      elapsed_ms: o.elapsedMs,
      interactions: o.interactions,
      ...(o.exit ? { code: o.exit.code ?? -1, signal: o.exit.signal ?? 0 } : {}),
    });
  }

  private onLost(reason: string): void {
    // Not ours to end: a remote drive whose ssh channel ended, or whose host could not be reached
    // at open, keeps running there.
    if (reason.startsWith('channel_lost') || reason === 'host_unreachable') {
      // A remote drive whose ssh channel ended: it keeps running there. The row stays detached
      // and the lease is let go, so the next Driver.open re-attaches it (no second copy).
      this.journal.updateSession(this.id, { state: 'detached' });
      this.journal.recordIncident(this.id, 'control_lost', {});
      this.leases.release(this.id);
      return;
    }
    this.terminal = true;
    // A reason already journaled at open (launch_interrupted, reattach_failed, …) is kept as it is.
    if (this.journal.getSession(this.id)?.state === 'failed') return;
    const token = reason === 'server_gone' ? 'server_gone' : 'control_lost';
    this.journal.markFailed(this.id, token);
    this.journal.recordIncident(this.id, token, {});
  }

  private onIncident(code: string, detail: Record<string, unknown>): void {
    const kind = INCIDENT_OF[code];
    if (!kind) return;
    // An overflow names what it is about to evict: seqs and counts, never the evidence itself.
    const range = kind === 'evidence_overflow' ? overflowTags(detail) : {};
    this.journal.recordIncident(this.id, kind, { code, ...range });
  }

  private onClosed(how: 'killed' | 'detached'): void {
    if (how === 'killed' && this.session.lifecycle === 'failed') {
      this.journal.markFailed(this.id, toMachineToken(this.session.lostBecause ?? 'evicted', 'evicted'));
      this.journal.appendEvent(this.id, 'evicted', {});
    } else if (how === 'killed') {
      this.journal.updateSession(this.id, { state: this.terminal && this.journal.getSession(this.id)?.state === 'failed' ? 'failed' : 'exited', interactions: this.session.interactionCount });
      this.journal.appendEvent(this.id, 'killed', {});
    } else if (this.terminal) {
      // An exited or failed drive stays so: a `detached` row would be re-attached (and listed
      // live) by the next host.
      this.journal.updateSession(this.id, { interactions: this.session.interactionCount });
    } else {
      this.journal.updateSession(this.id, { state: 'detached', interactions: this.session.interactionCount });
    }
    if (how === 'killed') this.leases.release(this.id);
  }
}
