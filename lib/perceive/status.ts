/**
 * The session's state, as `Session.status()` asks for it: a thin adapter over `classifyScreen`.
 * Its types are derived from the classifier's, never restated: every signal the classifier reads
 * (the process `sample` included) reaches it, and the status is the verdict minus the two fields
 * that are the classifier's own evidence (`profile`, `marker`). A restated copy is how the process
 * sample once got dropped, leaving a program blocked on its terminal `working` until stuckMs.
 */
import { classifyScreen, type ScreenSignals, type ScreenVerdict, type SessionState } from './classify-screen.js';
import type { Profile } from './profile.js';
import type { ClassifierSnapshot } from './screen.js';

export type { SessionState };

/** A classifier snapshot whose size may be left out (a plain text snapshot has none). */
export type StatusSnapshot = Omit<ClassifierSnapshot, 'rows' | 'cols'> & {
  /** Default: the number of lines. */
  readonly rows?: number;
  /** Default: the widest line (or the cursor column). */
  readonly cols?: number;
};

/** Everything `classifyScreen` reads, with the screen and the profile beside it. */
export type StatusSignals = ScreenSignals & {
  readonly snapshot: StatusSnapshot;
  readonly profile?: Profile;
};

/** The classifier's verdict as callers see it: the evidence fields stay inside perception. */
export type SessionStatus = Omit<ScreenVerdict, 'profile' | 'marker'>;

export function classify(s: StatusSignals): SessionStatus {
  const { snapshot: snap, profile, ...signals } = s;
  const rows = snap.rows ?? snap.lines.length;
  const cols = snap.cols ?? Math.max(snap.cursor.x + 1, ...snap.lines.map((l) => [...l].length), 1);
  const v = classifyScreen({ lines: snap.lines, cursor: snap.cursor, alternate: snap.alternate, rows, cols, ...(snap.cells ? { cells: snap.cells } : {}) }, signals, profile);
  const { profile: _profile, marker: _marker, ...status } = v;
  return status;
}
