/**
 * The drive's outcome and who hears of it: `attention` when a person or an end is needed (an
 * escalation — a dangerous dialog, the loop guard, a stuck program, the cost limit — makes the
 * outcome needs-you), the outcome itself exactly once per drive (the first terminal verdict wins,
 * recorded with its reason), and the notifications the `notify` policy lets through.
 */
import { isMachineToken } from '../common/machine-token.js';
import type { DriveContext } from './drive-signals.js';
import type { Attention, DriveOutcome, NotifyPolicy } from './session-events.js';

/** Escalation reasons of the auto-answer policy that make a drive `needs-you`. */
const NEEDS_YOU_DIALOG: ReadonlySet<string> = new Set(['destructive', 'approval', 'auth', 'loop_guard']);

export class Outcomes {
  private value: DriveOutcome | undefined;

  constructor(
    private readonly ctx: DriveContext,
    private readonly notify: NotifyPolicy,
    /** The clock's now() when the session object was made: outcomes count their elapsed time from it. */
    private readonly startedAt: number,
  ) {}

  /** The drive's verdict once there is one; it never changes after. */
  get current(): DriveOutcome | undefined {
    return this.value;
  }

  /** The verdict an earlier host already recorded for this drive (re-attach): never emitted again. */
  restore(o: DriveOutcome): void {
    this.value ??= o;
  }

  /** Emits `attention`; an escalation (dialog, stuck, cost limit) makes the outcome needs-you. */
  attention(a: Attention): void {
    const { events } = this.ctx;
    events.emit('attention', a);
    const escalation = isEscalation(a);
    if (escalation || a.dialog !== undefined) this.ctx.signals.awaitingPerson = a.reason;
    const hadOutcome = this.value !== undefined;
    if (escalation) this.settle('needs-you', a.kind === 'stuck' ? 'stuck' : a.reason, a.dialog ? { dialog: a.dialog } : {});
    // all: every attention; otherwise only an escalation that did not just become the outcome.
    if (this.notify === 'all' || (escalation && hadOutcome)) events.emit('notification', { kind: 'attention', escalation, attention: a });
  }

  /** Records the drive's verdict: the first one wins, later ones are ignored (exactly once per drive). */
  settle(outcome: DriveOutcome['outcome'], reason: string, extra: { readonly dialog?: string } = {}): void {
    if (this.value) return;
    const { signals, clock, events } = this.ctx;
    const o: DriveOutcome = {
      outcome,
      reason: isMachineToken(reason) ? reason : 'unknown',
      elapsedMs: Math.round(clock.now() - this.startedAt),
      interactions: signals.interactions,
      ...(signals.exit ? { exit: signals.exit } : {}),
      ...(extra.dialog ? { dialog: extra.dialog } : {}),
      ...(signals.costUsd !== undefined ? { costUsd: signals.costUsd } : {}),
    };
    this.value = o;
    signals.noteState({ outcome, reason: o.reason });
    events.emit('outcome', o);
    // An escalation always reaches a person; done/failed unless the policy is none.
    if (outcome === 'needs-you' || this.notify !== 'none') events.emit('notification', { kind: 'outcome', ...o });
  }
}

/** Attention that needs a person whatever the policy: a dangerous dialog, the loop guard, a stuck program, the cost limit. */
function isEscalation(a: Attention): boolean {
  if (a.kind === 'stuck' || a.reason === 'cost_limit') return true;
  return a.kind === 'input_needed' && a.reason.startsWith('dialog_') && NEEDS_YOU_DIALOG.has(a.reason.slice('dialog_'.length));
}
