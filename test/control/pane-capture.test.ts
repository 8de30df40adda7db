/**
 * The tmux side of the snapshot contract: a resync batch's replies read into the PaneCapture the
 * emulator rebuilds from. Replies are built by hand here (their framing on the wire is
 * framing.test.ts's; the real thing end to end is test/integration and test/emulator/tmux-fidelity).
 */
import { describe, expect, it } from 'vitest';
import type { Reply } from '../../lib/control/command-queue.js';
import { readPaneCapture } from '../../lib/control/pane-capture.js';
import { paneSnapshot } from '../../lib/control/pane-snapshot.js';
import { PANE_STATE_FORMAT } from '../../lib/control/pane-state.js';
import { FRESH_SHELL } from './pane-state-fixture.js';

const enc = new TextEncoder();

function reply(...lines: string[]): Reply {
  return { ok: true, lines: lines.map((l) => enc.encode(l)), text: () => lines.join('\n') };
}

/** FRESH_SHELL with alternate_on (field 6 of the format) set. */
const ALTERNATE = FRESH_SHELL.split('\t').map((v, i) => (i === 5 ? '1' : v)).join('\t');

/** Replies in batch order: state, deletes, captures into buffers, sizes, the printed captures, pending, deletes. */
function replies(state: string, main: string[], alternate: string[], pending: string[]): Reply[] {
  const batch = paneSnapshot('%0', PANE_STATE_FORMAT, { withContinue: false });
  const out = batch.commands.map(() => reply());
  out[0] = reply(state);
  out[6] = reply(...main);
  out[7] = reply(...alternate);
  out[8] = reply(...pending);
  return out;
}

describe('readPaneCapture', () => {
  const batch = paneSnapshot('%0', PANE_STATE_FORMAT, { withContinue: false });

  it('takes the size from the state, joins the rows and decodes the pending bytes', () => {
    const capture = readPaneCapture(batch, replies(FRESH_SHELL, ['h1', '$ '], ['saved'], ['\\033[3']));
    expect(capture).toMatchObject({ cols: 20, rows: 5, alternateSaved: undefined });
    expect(new TextDecoder().decode(capture.main)).toBe('h1\n$ ');
    expect([...capture.pending]).toEqual([0x1b, 0x5b, 0x33]);
    expect(capture.state.tabs).toEqual([8, 16]);
    expect(capture.continuous).toBeUndefined();
  });

  it('keeps the saved primary screen only while the alternate screen is on and the capture has rows', () => {
    const on = readPaneCapture(batch, replies(ALTERNATE, ['alt'], ['p1', 'p2'], []));
    expect(new TextDecoder().decode(on.alternateSaved)).toBe('p1\np2');
    expect(readPaneCapture(batch, replies(ALTERNATE, ['alt'], [], [])).alternateSaved).toBeUndefined();
  });

  it('fails typed on a batch with replies missing or a state of another shape', () => {
    expect(() => readPaneCapture(batch, replies(FRESH_SHELL, [], [], []).slice(0, 7))).toThrow(expect.objectContaining({ code: 'TMUX_COMMAND_FAILED', message: 'incomplete capture batch' }));
    expect(() => readPaneCapture(batch, replies('80\t24', [], [], []))).toThrow(expect.objectContaining({ code: 'TMUX_COMMAND_FAILED' }));
  });
});
