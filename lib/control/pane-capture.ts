/**
 * The tmux side of the snapshot contract: the replies of a resync batch (pane-snapshot.ts) read
 * into a `PaneCapture`, the one shape the emulator rebuilds a mirror from (lib/emulator/rebuild.ts).
 * The emulator sees parsed values only; which formats and capture flags produced them is tmux's
 * protocol and stays here.
 */
import { TmuxDriveError } from '../common/errors.js';
import type { Reply } from './command-queue.js';
import type { PaneSnapshotParts, SnapshotBatch } from './pane-snapshot.js';
import { parsePaneState, type PaneState } from './pane-state.js';

export interface PaneCapture {
  readonly cols: number;
  readonly rows: number;
  /** `capture-pane -p -e -J -N -S - -E -`: history + visible rows of the current grid, \n-separated, no trailing \n. */
  readonly main: Uint8Array;
  /** `capture-pane -p -e -J -N -a -q`: the saved primary screen while alternate_on. */
  readonly alternateSaved?: Uint8Array | undefined;
  /** `capture-pane -p -P -C`, octal-decoded: the start of an unfinished escape sequence. */
  readonly pending: Uint8Array;
  readonly state: PaneState;
  /**
   * True when every pane byte before the capture has been written to the mirror, without a gap
   * (a resize or a requested resync; not an attach or a resync after %pause). The mirror's parser
   * then knows what tmux 3.3a cannot report, above all the SGR pen, and the rebuild keeps it.
   */
  readonly continuous?: boolean | undefined;
}

/**
 * The capture a resync batch's replies hold (all of them, in order). Throws TMUX_COMMAND_FAILED
 * when replies are missing or the state reply has an unexpected shape.
 */
export function readPaneCapture(batch: SnapshotBatch<PaneSnapshotParts>, replies: readonly Reply[]): PaneCapture {
  let parts: PaneSnapshotParts;
  try {
    parts = batch.read(replies);
  } catch (err) {
    throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'incomplete capture batch', {}, { cause: err });
  }
  const state = parsePaneState(parts.state);
  const alt = parts.alternateSaved;
  return {
    cols: state.paneWidth,
    rows: state.paneHeight,
    main: parts.main,
    alternateSaved: state.alternateOn && alt.length > 0 ? alt : undefined,
    pending: parts.pending,
    state,
  };
}
