/**
 * The snapshot batches (reference §5) with every capture framed by its size, so that no pane text
 * can end, open or inject into a reply (docs/decisions.md, "Captures are framed by their size").
 *
 * A capture reply carries pane text raw, and its guard (`%end <second> <counter> 1`) is guessable.
 * So each capture runs twice in the same batch (tmux runs a batch with no pane read in between,
 * so both see the same grid): first into a paste buffer, whose exact size `list-buffers` reports
 * as tmux's own text, then with `-p` as the reply. The printed capture is the buffer's bytes (a
 * final LF added when they lack one: cmd-capture-pane.c, control_write), so the parser knows where
 * it ends before reading it and takes the guard only there. The buffers are deleted before the
 * captures (a stale one would announce a wrong size) and after them.
 */
import type { EarlierReply, Reply, ReplyFraming } from './command-queue.js';
import type { PaneId } from './ids.js';
import { decodeOctal } from './octal.js';
import type { BlockFraming } from './parser.js';
import {
  bufferSizes,
  capturePaneToBuffer,
  capturePanePrinted,
  capturePending,
  deleteBuffer,
  displayMessage,
  refreshClientContinue,
  type CaptureRegion,
  type TmuxCommand,
} from './tmux-commands.js';
import { decodeUtf8 } from './utf8.js';

/** The paste buffers the snapshots use; one tmux server per drive, captures one at a time. */
export const SNAPSHOT_BUFFERS = { main: 'td-snap-main', alternate: 'td-snap-alt', screen: 'td-snap-screen', history: 'td-snap-hist' } as const;

/** The size of buffer `name` from a bufferSizes() reply; 0 when it does not exist (an empty capture makes no buffer). */
export function bufferSizeIn(reply: EarlierReply | undefined, name: string): number {
  if (!reply?.ok) return 0;
  for (const line of reply.lines) {
    const [found, size] = decodeUtf8(line).split(' ');
    if (found === name && size !== undefined && /^\d{1,15}$/.test(size)) return Number(size);
  }
  return 0;
}

function framedBy(sizesAt: number, name: string): ReplyFraming {
  return (earlier): BlockFraming => ({ kind: 'text', bytes: bufferSizeIn(earlier[sizesAt], name) });
}

function joinLines(lines: readonly Uint8Array[]): Uint8Array {
  let size = Math.max(0, lines.length - 1);
  for (const l of lines) size += l.length;
  const out = new Uint8Array(size);
  let at = 0;
  lines.forEach((l, i) => {
    if (i > 0) out[at++] = 0x0a;
    out.set(l, at);
    at += l.length;
  });
  return out;
}

/** A batch of commands and where in it the pane's grid is captured. */
export interface SnapshotBatch<T> {
  readonly commands: readonly TmuxCommand[];
  /** 1-based position of the printed grid capture: pane output before its reply is inside it. */
  readonly captureAt: number;
  /** The parts, from the batch's replies (all of them, in order). */
  read(replies: readonly Reply[]): T;
}

export interface PaneSnapshotParts {
  /** The reply to `stateFormat`. */
  readonly state: string;
  /** History (unless the batch was made `withoutHistory`) and screen of the current grid, wrapped rows joined, no final LF. */
  readonly main: Uint8Array;
  /** The primary screen saved while the alternate one is on; empty otherwise. */
  readonly alternateSaved: Uint8Array;
  /** The start of an unfinished escape sequence, decoded. */
  readonly pending: Uint8Array;
}

/**
 * The resync batch: `prefix` (commands that change the pane, e.g. a resize, run first in the same
 * batch), the state, the framed captures of the grid and of the saved primary screen, the pending
 * bytes, and `refresh-client -A continue` after a %pause.
 */
export function paneSnapshot(target: PaneId, stateFormat: string, opts: { readonly prefix?: readonly TmuxCommand[]; readonly withContinue: boolean; readonly withoutHistory?: boolean }): SnapshotBatch<PaneSnapshotParts> {
  const { main, alternate } = SNAPSHOT_BUFFERS;
  const p = opts.prefix?.length ?? 0;
  const sizesAt = p + 5;
  const captures: [CaptureRegion, string][] = [
    [opts.withoutHistory ? 'screen-joined' : 'history-and-screen', main],
    ['alternate-saved', alternate],
  ];
  const commands: TmuxCommand[] = [
    ...(opts.prefix ?? []),
    displayMessage(target, stateFormat),
    deleteBuffer(main),
    deleteBuffer(alternate),
    ...captures.map(([region, name]) => capturePaneToBuffer(target, region, name)),
    bufferSizes([main, alternate]),
    ...captures.map(([region, name]) => capturePanePrinted(target, region, framedBy(sizesAt, name))),
    capturePending(target),
    deleteBuffer(main),
    deleteBuffer(alternate),
    // In pause mode the continue shares the batch, so the capture and the restart offset match.
    ...(opts.withContinue ? [refreshClientContinue(target)] : []),
  ];
  return {
    commands,
    captureAt: sizesAt + 2,
    read(replies) {
      const at = (i: number): Reply => {
        const reply = replies[i];
        if (!reply) throw new Error(`snapshot reply ${i} is missing`);
        return reply;
      };
      return {
        state: at(p).text(),
        main: joinLines(at(sizesAt + 1).lines),
        alternateSaved: joinLines(at(sizesAt + 2).lines),
        pending: decodeOctal(joinLines(at(sizesAt + 3).lines)),
      };
    },
  };
}

export interface VisibleScreenParts {
  /** The visible rows, one line each, trailing spaces kept. */
  readonly capture: Uint8Array;
  /** The reply to `cursorFormat`. */
  readonly cursor: string;
}

/** The fidelity check's batch: the visible screen, framed, and the cursor at the same moment. */
export function visibleScreen(target: PaneId, cursorFormat: string): SnapshotBatch<VisibleScreenParts> {
  const name = SNAPSHOT_BUFFERS.screen;
  const commands: TmuxCommand[] = [
    deleteBuffer(name),
    capturePaneToBuffer(target, 'screen', name),
    bufferSizes([name]),
    capturePanePrinted(target, 'screen', framedBy(2, name)),
    displayMessage(target, cursorFormat),
    deleteBuffer(name),
  ];
  return {
    commands,
    captureAt: 4,
    read(replies) {
      const capture = replies[3];
      const cursor = replies[4];
      if (!capture || !cursor) throw new Error('visible screen replies are missing');
      return { capture: joinLines(capture.lines), cursor: cursor.text() };
    },
  };
}

export interface ScreenAndHistoryParts extends VisibleScreenParts {
  /** The history rows, one line each, trailing spaces kept. */
  readonly history: Uint8Array;
}

/**
 * The differential fuzzer's batch (tools/tmux-lab.ts): the state (`stateFormat`), the visible screen
 * and the history row by row, both framed: the pane's text there is whatever the fuzzer printed.
 */
export function screenAndHistory(target: PaneId, stateFormat: string): SnapshotBatch<ScreenAndHistoryParts> {
  const { screen, history } = SNAPSHOT_BUFFERS;
  const commands: TmuxCommand[] = [
    displayMessage(target, stateFormat),
    deleteBuffer(screen),
    deleteBuffer(history),
    capturePaneToBuffer(target, 'screen', screen),
    capturePaneToBuffer(target, 'history', history),
    bufferSizes([screen, history]),
    capturePanePrinted(target, 'screen', framedBy(5, screen)),
    capturePanePrinted(target, 'history', framedBy(5, history)),
    deleteBuffer(screen),
    deleteBuffer(history),
  ];
  return {
    commands,
    captureAt: 7,
    read(replies) {
      const [state, capture, hist] = [replies[0], replies[6], replies[7]];
      if (!state || !capture || !hist) throw new Error('screen and history replies are missing');
      return { cursor: state.text(), capture: joinLines(capture.lines), history: joinLines(hist.lines) };
    },
  };
}
