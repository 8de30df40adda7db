/**
 * The structural classifier (pure): a screen, the session's timing and process facts, and a
 * profile in; a state with a confidence and a stable machine reason out. Rules run in a fixed
 * order, first verdict wins:
 *
 *   exited        pane dead (pane_dead) or the drive's server gone (server_gone, channel_lost)
 *   working       output in the last `flowingMs` (output_flowing)
 *   working       a profile's queued-input or working marker in its region (input_queued, working_marker)
 *   working       a prompt-line dialog on the main screen nothing reads (no_reader)
 *   awaiting      a structural dialog (dialog_detected)
 *   awaiting      a TUI composer (composer_ready) or the cursor parked after a prompt (cursor_parked)
 *                 — a prompt line (or a y/n choice on it) on the main screen while the process
 *                 tree is busy and nobody reads the terminal is working (busy_cpu, busy_io)
 *   working       a blank alternate screen, or a composer program showing no composer (loading)
 *   working       CPU or I/O progress in the pane's process tree (busy_cpu, busy_io)
 *   awaiting      a foreground process blocked reading the terminal (tty_read)
 *   awaiting      a settled alternate screen: a TUI waiting for keys (screen_settled)
 *   stuck         quiet for `stuckMs` and no CPU or I/O progress over that time (no_progress)
 *   working       otherwise: output paused, no prompt yet (cursor_not_parked)
 *
 * Text patterns (markers, known dialogs, risk words) only name or reinforce what the structure
 * shows: a "(y/n)" printed in flowing output or away from the cursor is not a dialog.
 */
import type { ExitInfo } from '../common/exit-info.js';
import type { Busy, ProcessActivity, ProcessActivitySample } from './activity.js';
import { detectDialog, type Dialog } from './dialog.js';
import { findInputLine, type InputLine, type Suggestion } from './input-line.js';
import { GENERIC_PROFILE, type Marker, type Profile } from './profile.js';
import { boundedTest } from './regex-safety.js';
import { ScreenGrid, type ClassifierSnapshot, type ScreenCursor } from './screen.js';

export type SessionState = 'working' | 'awaiting-input' | 'exited' | 'stuck';
export type Confidence = 'high' | 'medium';

/** Every reason the classifier gives, as a table: the reason is a stable machine value. */
export const CLASSIFIER_REASONS = {
  pane_dead: 'exited',
  server_gone: 'exited',
  channel_lost: 'exited',
  output_flowing: 'working',
  input_queued: 'working',
  working_marker: 'working',
  busy_cpu: 'working',
  busy_io: 'working',
  cursor_not_parked: 'working',
  no_reader: 'working',
  loading: 'working',
  dialog_detected: 'awaiting-input',
  composer_ready: 'awaiting-input',
  cursor_parked: 'awaiting-input',
  tty_read: 'awaiting-input',
  screen_settled: 'awaiting-input',
  no_progress: 'stuck',
} as const satisfies Record<string, SessionState>;
export type ClassifierReason = keyof typeof CLASSIFIER_REASONS;
/** The reasons a state may carry (the compiler keeps verdicts and the table in step). */
type ReasonOf<S extends SessionState> = { [R in ClassifierReason]: (typeof CLASSIFIER_REASONS)[R] extends S ? R : never }[ClassifierReason];

export interface ScreenSignals {
  /** The clock's now(), ms. */
  readonly now: number;
  /** When pane output last arrived. */
  readonly lastOutputAt: number;
  /** When the screen last changed (a resync changes it without output); defaults to lastOutputAt. */
  readonly lastChangeAt?: number;
  /** Set once the pane is dead. */
  readonly exit?: ExitInfo | undefined;
  /** Set once the channel to the drive is gone: 'server_gone' or another reason. */
  readonly lost?: string | undefined;
  readonly interactions?: number;
  /**
   * `compareActivity(sampleWhenOutputStopped, sampleLater)`. Counts only when its window lies in
   * the current quiet period (`since` ≥ the last output), so a stale verdict is ignored.
   */
  readonly activity?: ProcessActivity | undefined;
  /**
   * The latest single sample (e.g. the one taken when output stopped): its `readingTerminal` is a
   * fact of the moment, usable before a second sample exists. Ignored when older than the last output.
   */
  readonly sample?: ProcessActivitySample | undefined;
  /** No output and no progress for this long ⇒ stuck (config `worker.stuckMs`). Default 30 s. */
  readonly stuckMs?: number;
  /** Output newer than this means still producing. Default 100 ms. */
  readonly flowingMs?: number;
}

export interface ScreenVerdict {
  readonly state: SessionState;
  readonly confidence: Confidence;
  readonly reason: ClassifierReason;
  readonly cursor: ScreenCursor;
  readonly interactions: number;
  readonly exit?: ExitInfo;
  /** From the activity signal, when it covers the current quiet period. */
  readonly busy?: Busy;
  readonly dialog?: Dialog;
  /** Ghost text on the input line: shown to callers, never typed input. */
  readonly suggestion?: Suggestion;
  /** A queued-input marker is showing: what was sent waits for the current turn. */
  readonly queued?: boolean;
  /** The id of the marker that decided a working verdict (evidence, no screen text). */
  readonly marker?: string;
  /** The profile the verdict was made with. */
  readonly profile: string;
}

export const DEFAULT_STUCK_MS = 30_000;
/** Output newer than this means the program is still producing (a spinner redraws every ~100 ms). */
export const DEFAULT_FLOWING_MS = 100;
/** An activity window may start this long before the last output and still count (clock jitter). */
const ACTIVITY_SLACK_MS = 50;
/**
 * The activity window must end at least this share of stuckMs after the output stopped: the
 * session's second sample fires at stuckMs, a timer that may run a little early or late.
 */
const STUCK_WINDOW_SHARE = 0.9;

export function classifyScreen(snapshot: ClassifierSnapshot, signals: ScreenSignals, profile: Profile = GENERIC_PROFILE): ScreenVerdict {
  const grid = new ScreenGrid(snapshot);
  const base = { cursor: snapshot.cursor, interactions: signals.interactions ?? 0, profile: profile.id };
  const verdict = <S extends SessionState>(state: S, confidence: Confidence, reason: ReasonOf<S>, extra: Partial<ScreenVerdict> = {}): ScreenVerdict => ({ ...base, state, confidence, reason, ...extra });

  if (signals.exit) return verdict('exited', 'high', 'pane_dead', { exit: signals.exit });
  if (signals.lost !== undefined) return verdict('exited', 'medium', signals.lost === 'server_gone' ? 'server_gone' : 'channel_lost');

  const quietSince = Math.max(signals.lastOutputAt, signals.lastChangeAt ?? signals.lastOutputAt);
  const quietFor = signals.now - quietSince;
  const activity = signals.activity && signals.activity.since >= quietSince - ACTIVITY_SLACK_MS ? signals.activity : undefined;
  const sample = signals.sample && signals.sample.at >= quietSince - ACTIVITY_SLACK_MS ? signals.sample : undefined;
  const readingTerminal = activity?.readingTerminal === true || sample?.readingTerminal === true;
  const input = findInputLine(grid, profile);
  const facts: Partial<ScreenVerdict> = {
    ...(activity ? { busy: activity.busy } : {}),
    ...(input?.suggestion ? { suggestion: input.suggestion } : {}),
  };

  if (quietFor < (signals.flowingMs ?? DEFAULT_FLOWING_MS)) return verdict('working', 'high', 'output_flowing', facts);

  const queued = firstMarker(grid, profile.queued, input);
  if (queued) return verdict('working', 'high', 'input_queued', { ...facts, queued: true, marker: queued.id });
  const working = firstMarker(grid, profile.working, input);
  if (working) return verdict('working', 'high', 'working_marker', { ...facts, marker: working.id });

  // A prompt line on the main screen while the tree burns CPU or moves bytes and nobody reads
  // the terminal: printed text that looks like a prompt, not a program waiting.
  const busyNotReading = activity !== undefined && activity.busy !== 'idle' && !readingTerminal;
  const busyReason = activity?.busy === 'io' ? 'busy_io' : 'busy_cpu';
  const dialog = detectDialog(grid, profile, input);
  const onPromptLine = (d: Dialog): boolean => d.structure.includes('choice') || d.structure.includes('prompt');
  if (dialog && busyNotReading && !grid.alternate && onPromptLine(dialog)) return verdict('working', 'medium', busyReason, facts);
  // A "(y/n)" printed by a program that then reads nothing (it sleeps, or waits on a child): the
  // sample of this quiet period shows no process reading the terminal, so nothing waits for an
  // answer. Left to the stuck check, not reported as a question.
  // readsNothing false: a foreground process waits where a read may come from (a node prompt in
  // epoll): the question stands. Absent (an older recorded sample): not reading and not runnable.
  const nobodyReads = sample !== undefined && !readingTerminal && sample.runnable !== true && sample.readsNothing !== false;
  if (dialog && nobodyReads && !grid.alternate && onPromptLine(dialog)) return verdict('working', 'medium', 'no_reader', facts);
  if (dialog) {
    const strong = dialog.structure.some((s) => s === 'box' || s === 'selector' || s === 'buttons' || s === 'field' || s === 'choice');
    return verdict('awaiting-input', strong ? 'high' : 'medium', 'dialog_detected', { ...facts, dialog });
  }

  if (input) {
    if (input.via === 'prompt' && !grid.alternate && busyNotReading) return verdict('working', 'medium', busyReason, facts);
    if (input.via === 'composer') return verdict('awaiting-input', 'high', 'composer_ready', facts);
    return verdict('awaiting-input', grid.alternate ? 'medium' : 'high', 'cursor_parked', facts);
  }

  // A TUI that has drawn nothing yet (a blank alternate screen), or a program whose profile has a
  // composer showing neither it nor a dialog: it is still starting (or between screens), and
  // nothing on it takes keys yet.
  if ((grid.alternate && grid.lastContentRow() < 0) || (profile.composer !== undefined && !grid.alternate && !readingTerminal)) return verdict('working', 'medium', 'loading', facts);
  if (activity?.busy === 'cpu') return verdict('working', 'high', 'busy_cpu', facts);
  if (activity?.busy === 'io') return verdict('working', 'high', 'busy_io', facts);
  if (readingTerminal) return verdict('awaiting-input', 'medium', 'tty_read', facts);
  if (grid.alternate) return verdict('awaiting-input', 'medium', 'screen_settled', facts);
  const stuckMs = signals.stuckMs ?? DEFAULT_STUCK_MS;
  // No progress must be measured over (nearly) the whole quiet time, not a short early window.
  if (activity && quietFor >= stuckMs && activity.until - quietSince >= stuckMs * STUCK_WINDOW_SHARE) return verdict('stuck', 'high', 'no_progress', facts);
  return verdict('working', 'medium', 'cursor_not_parked', facts);
}

/**
 * Reasons that show, on the screen itself, that the program is busy and takes no keys yet: a
 * working or queued marker, a TUI still loading. A quiet screen with one of these is not settled
 * (`wait({ forIdleMs })` keeps waiting); any other quiet screen is, whatever its state.
 */
export const SCREEN_SHOWS_WORK: ReadonlySet<ClassifierReason> = new Set(['input_queued', 'working_marker', 'loading']);

/**
 * The first marker found in its region, skipping the input line (typed or ghost text is not a
 * marker). The region is `bottomRows` up from the last content row, as the composer's is, and as
 * many up from the input line: a menu drawn under the composer (a slash menu) pushes the last
 * content row down past the spinner line above the composer.
 */
function firstMarker(grid: ScreenGrid, markers: readonly Marker[], input: InputLine | undefined): Marker | undefined {
  const bottom = grid.lastContentRow();
  const anchors = input && input.y < bottom ? [bottom, input.y] : [bottom];
  for (const marker of markers) {
    for (const anchor of anchors) {
      const top = marker.bottomRows === undefined ? 0 : Math.max(0, anchor - marker.bottomRows + 1);
      for (let y = anchor; y >= top; y--) {
        if (y === input?.y) continue;
        if (boundedTest(marker.re, grid.text(y))) return marker;
      }
    }
  }
  return undefined;
}
