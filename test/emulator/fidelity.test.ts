import { afterEach, describe, expect, it } from 'vitest';
import { compareWithCapture } from '../../lib/emulator/fidelity.js';
import { Mirror } from '../../lib/emulator/mirror.js';

const enc = new TextEncoder();
const mirrors: Mirror[] = [];
function mirrorOf(stream: string): Mirror {
  const m = new Mirror({ cols: 12, rows: 3, scrollback: 0 });
  mirrors.push(m);
  m.write(enc.encode(stream));
  return m;
}
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

describe('compareWithCapture', () => {
  it('accepts a capture of the same grid, wide chars and colours included', () => {
    const m = mirrorOf('\x1b[1;31mred\x1b[0m 中😀\r\n\x1b[44m  \x1b[0m x');
    const capture = enc.encode('\x1b[1m\x1b[31mred\x1b[0m 中😀\n\x1b[44m  \x1b[49m x\n');
    expect(compareWithCapture(m, capture, { x: 4, y: 1 })).toEqual({ equal: true, mismatches: [], mismatchCount: 0, cursorMatches: true });
  });

  it('reports differing cells with both sides described, and the cursor', () => {
    const m = mirrorOf('\x1b[2mghost\x1b[0m');
    const report = compareWithCapture(m, enc.encode('ghosT\n\n'), { x: 0, y: 1 });
    expect(report.equal).toBe(false);
    expect(report.cursorMatches).toBe(false);
    expect(report.mismatchCount).toBe(5);
    expect(report.mismatches[4]).toEqual({ row: 0, col: 4, expected: '"T"', actual: '"t" dim' });
  });

  it('checks cells past the captured end of a row only for being blank (their background is not captured)', () => {
    const m = mirrorOf('ab\x1b[44m\x1b[K\x1b[0m\r\n\x1b[1m   x');
    // tmux 3.3a: capture-pane prints "ab" for a row whose tail was cleared in blue.
    expect(compareWithCapture(m, enc.encode('ab\n\x1b[1m   x\n'), { x: 4, y: 1 }).equal).toBe(true);
    expect(compareWithCapture(m, enc.encode('ab\n\x1b[1m   \n'), { x: 4, y: 1 }).mismatches).toEqual([{ row: 1, col: 3, expected: '" "', actual: '"x" bold' }]);
  });
});
