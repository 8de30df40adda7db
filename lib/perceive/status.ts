/**
 * The session's state from its screen and its signals. This is the first, structural cut:
 * exited ⇐ pane dead; working ⇐ output in flight; awaiting-input ⇐ settled with the cursor parked
 * at the end of the content. Profiles, dialogs and busy-vs-hung refine it.
 */
import type { ExitInfo } from '../backend.js';

export type SessionState = 'working' | 'awaiting-input' | 'exited' | 'stuck';

export interface StatusSnapshot {
  readonly lines: readonly string[];
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean };
  readonly alternate: boolean;
}

export interface StatusSignals {
  readonly snapshot: StatusSnapshot;
  readonly now: number;
  readonly lastOutputAt: number;
  readonly lastChangeAt: number;
  readonly exit: ExitInfo | undefined;
  readonly lost: string | undefined;
  readonly interactions: number;
}

export interface SessionStatus {
  readonly state: SessionState;
  readonly confidence: 'high' | 'medium';
  /** A stable machine reason: pane_dead, server_gone, output_flowing, cursor_parked, … */
  readonly reason: string;
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean };
  readonly interactions: number;
  readonly exit?: ExitInfo;
}

/** Output newer than this means the program is still producing. */
const FLOWING_MS = 100;

export function classify(s: StatusSignals): SessionStatus {
  const base = { cursor: s.snapshot.cursor, interactions: s.interactions };
  if (s.exit) return { ...base, state: 'exited', confidence: 'high', reason: 'pane_dead', exit: s.exit };
  if (s.lost) return { ...base, state: 'exited', confidence: 'medium', reason: s.lost === 'server_gone' ? 'server_gone' : 'channel_lost' };
  if (s.now - Math.max(s.lastOutputAt, s.lastChangeAt) < FLOWING_MS) return { ...base, state: 'working', confidence: 'high', reason: 'output_flowing' };
  const lines = s.snapshot.lines;
  let lastContent = lines.length - 1;
  while (lastContent > 0 && (lines[lastContent] ?? '').trim() === '') lastContent--;
  const parked = s.snapshot.cursor.y >= lastContent;
  if (parked || s.snapshot.alternate) return { ...base, state: 'awaiting-input', confidence: parked && !s.snapshot.alternate ? 'high' : 'medium', reason: parked ? 'cursor_parked' : 'screen_settled' };
  return { ...base, state: 'working', confidence: 'medium', reason: 'cursor_not_parked' };
}
