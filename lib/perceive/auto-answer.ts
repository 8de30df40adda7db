/**
 * Whether to answer a detected dialog by itself (pure). Destructive, approval and auth/login
 * dialogs always go to a human, whatever the policy; a dialog already answered (by digest, from
 * the journal, so also across restarts) is not answered again: a program that keeps asking is
 * looping, and a human should look.
 */
import type { Dialog } from './dialog.js';
import { ESCALATING_KINDS } from './profile.js';

export type AutoAnswerPolicy = 'none' | 'safe-only' | 'all';

export type EscalationReason = 'destructive' | 'approval' | 'auth' | 'loop_guard' | 'no_known_answer' | 'not_safe';

export type AutoAnswerDecision =
  | { readonly action: 'answer'; readonly keys: readonly string[] }
  | { readonly action: 'escalate'; readonly reason: EscalationReason }
  | { readonly action: 'none' };

export interface AutoAnswerOptions {
  /** Answers per digest before the loop guard escalates. Default 1: never the same dialog twice. */
  readonly maxAnswers?: number;
}

/**
 * `alreadyAnswered(digest)` says whether (true) or how many times (a number) this dialog was
 * answered before. Order: dangerous kinds escalate; `none` answers nothing; the loop guard;
 * then the policy.
 */
export function decideAutoAnswer(
  dialog: Pick<Dialog, 'kind' | 'safe' | 'answer' | 'digest'>,
  policy: AutoAnswerPolicy,
  alreadyAnswered: (digest: string) => boolean | number,
  options: AutoAnswerOptions = {},
): AutoAnswerDecision {
  if (ESCALATING_KINDS.has(dialog.kind)) return { action: 'escalate', reason: dialog.kind as 'destructive' | 'approval' | 'auth' };
  if (policy === 'none') return { action: 'none' };
  const previous = alreadyAnswered(dialog.digest);
  const count = typeof previous === 'number' ? previous : previous ? 1 : 0;
  if (count >= Math.max(1, options.maxAnswers ?? 1)) return { action: 'escalate', reason: 'loop_guard' };
  if (!dialog.answer || dialog.answer.length === 0) return { action: 'escalate', reason: 'no_known_answer' };
  if (policy === 'safe-only' && !dialog.safe) return { action: 'escalate', reason: 'not_safe' };
  return { action: 'answer', keys: dialog.answer };
}
