import { describe, expect, it } from 'vitest';
import { backgroundAfterSgr, captureReplay, splitCaptureRows } from '../../lib/emulator/capture-replay.js';
import { Mirror } from '../../lib/emulator/mirror.js';

const enc = new TextEncoder();

describe('capture replay', () => {
  it('splits rows on \\n, keeping empty rows', () => {
    expect(splitCaptureRows(enc.encode('a\n\nb')).map((r) => new TextDecoder().decode(r))).toEqual(['a', '', 'b']);
    expect(splitCaptureRows(new Uint8Array(0))).toHaveLength(1);
  });

  it('tracks the background through SGR parameters, not mistaking colour arguments for codes', () => {
    expect(backgroundAfterSgr('44', null)).toBe('44');
    expect(backgroundAfterSgr('1;44;38;5;42', null)).toBe('44');
    expect(backgroundAfterSgr('38;5;44', null)).toBeNull();
    expect(backgroundAfterSgr('38;2;40;41;42', '45')).toBe('45');
    expect(backgroundAfterSgr('48;5;17', null)).toBe('48;5;17');
    expect(backgroundAfterSgr('48;2;1;2;3;1', null)).toBe('48;2;1;2;3');
    expect(backgroundAfterSgr('48:2::1:2:3', null)).toBe('48:2::1:2:3');
    expect(backgroundAfterSgr('0', '44')).toBeNull();
    expect(backgroundAfterSgr('', '44')).toBeNull();
    expect(backgroundAfterSgr('49', '44')).toBeNull();
    expect(backgroundAfterSgr('1', '104')).toBe('104');
  });

  it('breaks lines without painting the scrolled-in row with the carried background (no BCE)', () => {
    // tmux's -e carries SGR across rows: row 2 is blue because row 1 left the pen blue.
    const rows = ['first', '\x1b[44mblue bar ', 'still blue', '\x1b[49mplain'].map((r) => enc.encode(r));
    const m = new Mirror({ cols: 12, rows: 2, scrollback: 10 });
    m.write(captureReplay(rows).build());
    const [blueRow, plainRow] = m.cells().cells;
    expect(blueRow?.slice(0, 10).every((c) => c.bgMode === 'palette' && c.bg === 4)).toBe(true);
    expect(blueRow?.[11]).toMatchObject({ ch: ' ', bgMode: 'default' });
    expect(plainRow?.every((c) => c.bgMode === 'default')).toBe(true);
    m.dispose();
  });
});
