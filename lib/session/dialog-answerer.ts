/**
 * Auto-answer: a dialog on the settled screen is answered when the allow entry's policy allows it
 * and it was never answered before (the journal remembers, across hosts); escalated otherwise.
 * The answer is sent only after the dialog is re-verified on a settled screen, through the same
 * input gate as a caller's keys (lease and audit), and confirmed by the screen changing. Its
 * confirming wait is the session's own: it spends none of the caller's requests. While a person
 * holds the drive (an operator hold), the dialog is theirs: nothing is sent, it is escalated.
 */
import { decideAutoAnswer, type AutoAnswerPolicy } from '../perceive/auto-answer.js';
import type { SessionStatus } from '../perceive/status.js';
import type { DriveContext } from './drive-signals.js';
import { QUIET_MS } from './drive-watch.js';
import type { InputGate } from './input-gate.js';
import type { Outcomes } from './outcomes.js';
import type { WaitEngine } from './wait.js';

/** Answered-prompt memory (the journal): how often a dialog digest was answered; record one. */
export interface AnswerMemory {
  count(digest: string): number;
  record(digest: string, key: string): void;
}

/** How long an answered dialog's program gets to react before the answer counts as unconfirmed. */
const ANSWER_CONFIRM_TIMEOUT_MS = 5000;

export class DialogAnswerer {
  /** One answer at a time: a redraw while answering is not a second dialog. */
  private answering = false;
  /** A dialog was published while answering: once the answer is done, what shows then is decided. */
  private publishedWhileAnswering = false;

  constructor(
    private readonly ctx: DriveContext,
    private readonly options: { readonly policy: AutoAnswerPolicy; readonly answers: AnswerMemory },
    private readonly rooms: { readonly gate: InputGate; readonly waits: WaitEngine; readonly outcomes: Outcomes; readonly status: () => SessionStatus },
  ) {}

  async answer(status: SessionStatus): Promise<void> {
    const dialog = status.dialog;
    if (!dialog) return;
    if (this.answering) {
      this.publishedWhileAnswering = true;
      return;
    }
    const { gate, waits, outcomes } = this.rooms;
    const { answers } = this.options;
    const decision = decideAutoAnswer(dialog, this.options.policy, (d) => answers.count(d));
    if (decision.action !== 'answer') {
      outcomes.attention({ kind: 'input_needed', confidence: status.confidence, reason: decision.action === 'escalate' ? `dialog_${decision.reason}` : 'dialog_detected', dialog: dialog.kind });
      return;
    }
    const { mirror, signals, transcript, events } = this.ctx;
    const heldByPerson = (): boolean => {
      if (signals.operatorHold === undefined) return false;
      outcomes.attention({ kind: 'input_needed', confidence: status.confidence, reason: 'dialog_operator_hold', dialog: dialog.kind });
      return true;
    };
    if (heldByPerson()) return;
    this.answering = true;
    try {
      await mirror.whenParsed();
      // A dialog can settle while the drive is still being launched (the attach handshake takes
      // round trips, slow on a loaded host): it is answered once the backend is bound, instead of
      // failing for want of one (nothing publishes it again while it stays on the screen).
      if (signals.backend === undefined) await this.boundOrClosed();
      const again = this.rooms.status().dialog;
      if (!again || again.digest !== dialog.digest || signals.phase !== 'live') return; // it went away
      if (heldByPerson()) return; // a person took the drive over meanwhile
      const before = mirror.digest();
      const keys = decision.keys.join(' ');
      const backend = gate.admit('sendKeys', keys, { auto: true });
      answers.record(dialog.digest, keys);
      transcript.append('keys', undefined, { keys, auto: true });
      await backend.sendKeys(decision.keys);
      const reacted = await waits.wait({ forIdleMs: QUIET_MS, timeoutMs: ANSWER_CONFIRM_TIMEOUT_MS }, false, true);
      if (mirror.digest() === before && reacted.outcome !== 'exit') {
        outcomes.attention({ kind: 'input_needed', confidence: 'medium', reason: 'answer_unconfirmed', dialog: dialog.kind });
      } else events.emit('answered', dialog.digest, decision.keys);
    } catch {
      outcomes.attention({ kind: 'input_needed', confidence: 'medium', reason: 'answer_failed', dialog: dialog.kind });
    } finally {
      this.answering = false;
      this.afterAnswer(dialog.digest);
    }
  }

  /** Resolves when the session is bound to its backend, or closed (its launch failed). */
  private boundOrClosed(): Promise<void> {
    const { events } = this.ctx;
    return new Promise((resolve) => {
      const done = (): void => {
        events.off('bound', done);
        events.off('closed', done);
        resolve();
      };
      events.on('bound', done);
      events.on('closed', done);
    });
  }

  /**
   * A program may show its next dialog while the last answer is being confirmed (Claude Code asks
   * about an API key ~300 ms after its trust gate). Its publish found the answerer busy, and no
   * later change will publish it again: decide it now, so every dialog is answered or escalated.
   */
  private afterAnswer(answered: string): void {
    if (!this.publishedWhileAnswering) return;
    this.publishedWhileAnswering = false;
    const now = this.rooms.status();
    if (now.state === 'awaiting-input' && now.dialog && now.dialog.digest !== answered && this.ctx.signals.phase === 'live') void this.answer(now);
  }
}
