import { describe, expect, it } from 'vitest';
import { decideAutoAnswer, type AutoAnswerPolicy } from '../../lib/perceive/auto-answer.js';
import { classifyScreen } from '../../lib/perceive/classify-screen.js';
import { loadProfiles } from '../../lib/perceive/profile.js';
import type { Dialog } from '../../lib/perceive/dialog.js';
import { ALT, HIDE, quiet, screen } from './screens.js';

const never = (): boolean => false;
const POLICIES: AutoAnswerPolicy[] = ['none', 'safe-only', 'all'];

function dialog(extra: Partial<Dialog>): Pick<Dialog, 'kind' | 'safe' | 'answer' | 'digest'> {
  return { kind: 'menu', safe: true, answer: ['Enter'], digest: 'd1', ...extra };
}

describe('decideAutoAnswer', () => {
  it.each(['destructive', 'approval', 'auth'] as const)('a %s dialog always escalates, under every policy, even with an answer', (kind) => {
    for (const policy of POLICIES) {
      expect(decideAutoAnswer(dialog({ kind, safe: true, answer: ['y', 'Enter'] }), policy, never)).toEqual({ action: 'escalate', reason: kind });
    }
  });

  it('a safe known dialog is answered under safe-only and all, not under none', () => {
    expect(decideAutoAnswer(dialog({}), 'safe-only', never)).toEqual({ action: 'answer', keys: ['Enter'] });
    expect(decideAutoAnswer(dialog({}), 'all', never)).toEqual({ action: 'answer', keys: ['Enter'] });
    expect(decideAutoAnswer(dialog({}), 'none', never)).toEqual({ action: 'none' });
  });

  it('an answerable but unsafe dialog (a trust prompt) is answered only under all', () => {
    const trust = dialog({ kind: 'trust', safe: false });
    expect(decideAutoAnswer(trust, 'safe-only', never)).toEqual({ action: 'escalate', reason: 'not_safe' });
    expect(decideAutoAnswer(trust, 'all', never)).toEqual({ action: 'answer', keys: ['Enter'] });
  });

  it('a dialog with no known answer escalates', () => {
    expect(decideAutoAnswer(dialog({ answer: undefined, safe: false }), 'all', never)).toEqual({ action: 'escalate', reason: 'no_known_answer' });
  });

  it('the loop guard: a digest already answered escalates instead of answering again', () => {
    const answered = new Map<string, number>();
    const seen = (digest: string): number => answered.get(digest) ?? 0;
    const first = decideAutoAnswer(dialog({}), 'all', seen);
    expect(first.action).toBe('answer');
    answered.set('d1', 1);
    expect(decideAutoAnswer(dialog({}), 'all', seen)).toEqual({ action: 'escalate', reason: 'loop_guard' });
    expect(decideAutoAnswer(dialog({ digest: 'd2' }), 'all', seen).action).toBe('answer');
    // A boolean answer counts once; a higher limit allows a few repeats.
    expect(decideAutoAnswer(dialog({}), 'all', () => true)).toEqual({ action: 'escalate', reason: 'loop_guard' });
    expect(decideAutoAnswer(dialog({}), 'all', () => 2, { maxAnswers: 3 }).action).toBe('answer');
    expect(decideAutoAnswer(dialog({}), 'all', () => 3, { maxAnswers: 3 })).toEqual({ action: 'escalate', reason: 'loop_guard' });
  });

  it('end to end: a destructive whiptail-style dialog is never answered, even when a profile offers an answer', () => {
    const p = loadProfiles([{ name: 'p.json', data: { id: 'p', dialogs: [{ id: 'wipe', pattern: 'Wipe', kind: 'confirm', answer: ['Enter'], safe: true }] } }]).get('p');
    const s = screen(`${ALT}${HIDE}┌────────────────────────────┐\n│ Wipe the disk and delete   │\n│ all files?                 │\n│    <Yes>        <No>       │\n└────────────────────────────┘`);
    const v = classifyScreen(s, quiet(), p);
    expect(v.dialog).toMatchObject({ id: 'wipe', kind: 'destructive', safe: false });
    for (const policy of POLICIES) expect(decideAutoAnswer(v.dialog as Dialog, policy, never)).toEqual({ action: 'escalate', reason: 'destructive' });
  });
});
