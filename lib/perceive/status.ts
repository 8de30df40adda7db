/**
 * The session's state, as `Session.status()` asks for it: a thin adapter over `classifyScreen`
 * that keeps the session-facing signal shape (a snapshot plus timing) and fills in what a text
 * snapshot lacks (its size). Pass `cells`, `profile` and `activity` for the full rules.
 */
import type { ExitInfo } from '../common/exit-info.js';
import type { Busy, ProcessActivity } from './activity.js';
import { classifyScreen, type SessionState } from './classify-screen.js';
import type { Dialog } from './dialog.js';
import type { Suggestion } from './input-line.js';
import type { Profile } from './profile.js';
import type { ScreenCell } from './screen.js';

export type { SessionState };

export interface StatusSnapshot {
  readonly lines: readonly string[];
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean };
  readonly alternate: boolean;
  /** Default: the number of lines. */
  readonly rows?: number;
  /** Default: the widest line (or the cursor column). */
  readonly cols?: number;
  /** `Mirror.cells().cells`: enables ghost text and highlighted-option rules. */
  readonly cells?: readonly (readonly ScreenCell[])[];
}

export interface StatusSignals {
  readonly snapshot: StatusSnapshot;
  readonly now: number;
  readonly lastOutputAt: number;
  readonly lastChangeAt: number;
  readonly exit: ExitInfo | undefined;
  readonly lost: string | undefined;
  readonly interactions: number;
  readonly profile?: Profile;
  readonly activity?: ProcessActivity;
  readonly stuckMs?: number;
}

export interface SessionStatus {
  readonly state: SessionState;
  readonly confidence: 'high' | 'medium';
  /** A stable machine reason: pane_dead, server_gone, output_flowing, cursor_parked, … (CLASSIFIER_REASONS). */
  readonly reason: string;
  readonly cursor: { readonly x: number; readonly y: number; readonly visible: boolean };
  readonly interactions: number;
  readonly exit?: ExitInfo;
  readonly busy?: Busy;
  readonly dialog?: Dialog;
  readonly suggestion?: Suggestion;
  readonly queued?: boolean;
}

export function classify(s: StatusSignals): SessionStatus {
  const snap = s.snapshot;
  const rows = snap.rows ?? snap.lines.length;
  const cols = snap.cols ?? Math.max(snap.cursor.x + 1, ...snap.lines.map((l) => [...l].length), 1);
  const v = classifyScreen(
    { lines: snap.lines, cursor: snap.cursor, alternate: snap.alternate, rows, cols, ...(snap.cells ? { cells: snap.cells } : {}) },
    {
      now: s.now,
      lastOutputAt: s.lastOutputAt,
      lastChangeAt: s.lastChangeAt,
      exit: s.exit,
      lost: s.lost,
      interactions: s.interactions,
      ...(s.activity ? { activity: s.activity } : {}),
      ...(s.stuckMs !== undefined ? { stuckMs: s.stuckMs } : {}),
    },
    s.profile,
  );
  const { profile: _profile, marker: _marker, ...status } = v;
  return status;
}
