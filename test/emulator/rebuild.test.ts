import { afterEach, describe, expect, it } from 'vitest';
import { Mirror } from '../../lib/emulator/mirror.js';
import type { PaneCapture } from '../../lib/control/pane-capture.js';
import { parsePaneState, type PaneState } from '../../lib/control/pane-state.js';
import { FRESH_SHELL } from '../control/pane-state-fixture.js';

const enc = new TextEncoder();
const bytes = (s: string): Uint8Array => enc.encode(s);


function state(overrides: Partial<PaneState> = {}): PaneState {
  return { ...parsePaneState(FRESH_SHELL), ...overrides };
}

const mirrors: Mirror[] = [];
function rebuilt(capture: Partial<PaneCapture> & { main: string }, st: PaneState = state()): Mirror {
  const m = new Mirror({ cols: st.paneWidth, rows: st.paneHeight, scrollback: 100 });
  mirrors.push(m);
  m.rebuild({ cols: st.paneWidth, rows: st.paneHeight, pending: new Uint8Array(0), ...capture, main: bytes(capture.main), state: st });
  return m;
}
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

describe('rebuild from a snapshot', () => {
  it('a fresh mirror rebuilt in place (its first terminal kept) equals one whose terminal is replaced', () => {
    const st = state({ historySize: 1, cursorX: 5, cursorY: 1 });
    const capture = { cols: st.paneWidth, rows: st.paneHeight, pending: bytes('\x1b[3'), main: bytes('h\n\x1b[1;31m$ red\x1b[0m\n\n\n\n'), state: st };
    const fresh = new Mirror({ cols: st.paneWidth, rows: st.paneHeight, scrollback: 100 });
    const used = new Mirror({ cols: st.paneWidth, rows: st.paneHeight, scrollback: 100 });
    const marked = new Mirror({ cols: st.paneWidth, rows: st.paneHeight, scrollback: 100 });
    mirrors.push(fresh, used, marked);
    used.write(bytes('\x1b[?1049h\x1b[7mjunk\x1b[5;3r\x1b[?25l'));
    const mark = marked.markCursorRow();
    for (const m of [fresh, used, marked]) m.rebuild(capture);
    // A mark taken before a rebuild is lost (the grid it marked is gone), on a mirror never written too.
    expect(mark.visibleRow()).toBeUndefined();
    for (const other of [used, marked]) {
      expect(fresh.snapshot({ format: 'ansi', scrollback: 'all' })).toEqual(other.snapshot({ format: 'ansi', scrollback: 'all' }));
      expect(fresh.digest()).toBe(other.digest());
    }
    for (const m of [fresh, used]) m.write(bytes('1mX'));
    expect(fresh.cells()).toEqual(used.cells());
  });

  it('writes history and screen without a final line break, so nothing scrolls', () => {
    const m = rebuilt({ main: 'h1\nh2\n$ one\n$ two\n\n\n$ ' }, state({ historySize: 2, cursorY: 4 }));
    expect(m.snapshot({ format: 'text', scrollback: 'all' })).toMatchObject({ scrollbackLines: 2, lines: ['$ one', '$ two', '', '', '$'] });
    expect(m.cursor).toEqual({ x: 2, y: 4, visible: true });
  });

  it('restores the modes tmux reports (seen through the ansi snapshot) and a hidden cursor', () => {
    const m = rebuilt({ main: 'x\n\n\n\n' }, state({ keypadCursor: true, insert: true, wrap: false, mouseButton: true, cursorVisible: false, cursorX: 0 }));
    const ansi = m.snapshot({ format: 'ansi' }).content;
    for (const mode of ['\x1b[?1h', '\x1b[4h', '\x1b[?7l', '\x1b[?1002h']) expect(ansi).toContain(mode);
    expect(m.cursorVisible).toBe(false);
  });

  it('feeds the pending bytes last, so the next output continues the escape sequence', () => {
    const m = rebuilt({ main: 'abc\n\n\n\n', pending: bytes('\x1b[3') }, state({ cursorX: 3 }));
    m.write(bytes('1mX'));
    expect(m.cells().cells[0]?.[3]).toMatchObject({ ch: 'X', fgMode: 'palette', fg: 1 });
  });

  it('restores the alternate screen over the saved primary, with the cursor ?1049l brings back', () => {
    const st = state({ alternateOn: true, alternateSavedX: 3, alternateSavedY: 2, historySize: 1, cursorX: 0, cursorY: 0 });
    const m = rebuilt({ main: 'old\nALT\n\n\n\n', alternateSaved: bytes('p0\np1\np2 $\n\n') }, st);
    expect(m.alternate).toBe(true);
    expect(m.snapshot({ format: 'text' }).lines).toEqual(['ALT', '', '', '', '']);
    m.write(bytes('\x1b[?1049l'));
    expect(m.snapshot({ format: 'text', scrollback: 'all' }).content).toBe('old\np0\np1\np2 $\n\n');
    expect(m.cursor).toMatchObject({ x: 3, y: 2 });
  });

  it('re-enters the pending-wrap state when cursor_x equals the width', () => {
    const m = rebuilt({ main: '\x1b[1mxxxxxxxxxxxxxxxxxxxY\n\n\n\n' }, state({ cursorX: 20, cursorY: 0 }));
    expect(m.cursor.x).toBe(20);
    m.write(bytes('Z'));
    expect(m.snapshot({ format: 'text' }).lines.slice(0, 2)).toEqual(['xxxxxxxxxxxxxxxxxxxY', 'Z']);
    expect(m.cells().cells[0]?.[19]).toMatchObject({ ch: 'Y', bold: true });
  });

  it('supersedes bytes still queued when it runs, and later bytes continue it', async () => {
    const m = new Mirror({ cols: 20, rows: 5, scrollback: 100 });
    mirrors.push(m);
    m.write(new Uint8Array(3 * 1024 * 1024).fill(0x41)); // queued: already inside the capture
    const parsed = m.whenParsed();
    m.rebuild({ cols: 20, rows: 5, main: bytes('$ ls\nfile\n$ \n\n'), pending: new Uint8Array(0), state: state({ cursorY: 2 }) });
    await parsed;
    expect(m.backlogBytes).toBe(0);
    m.write(bytes('next'));
    await m.whenParsed();
    expect(m.snapshot({ format: 'text', scrollback: 'all' }).content).toBe('$ ls\nfile\n$ next\n\n');
  });
});

describe('rebuild of a continuous stream: the parser state a capture cannot hold carries over', () => {
  function fed(text: string, st: PaneState = state()): Mirror {
    const m = new Mirror({ cols: st.paneWidth, rows: st.paneHeight, scrollback: 100 });
    mirrors.push(m);
    m.write(bytes(text));
    return m;
  }
  const capture = (main: string, st: PaneState, more: Partial<PaneCapture> = {}): PaneCapture => ({
    cols: st.paneWidth,
    rows: st.paneHeight,
    pending: new Uint8Array(0),
    main: bytes(main),
    state: st,
    ...more,
  });

  it('keeps the SGR pen a curses program continues from; without continuity the pen is default', () => {
    const st = state({ cursorX: 2, cursorY: 0 });
    const carried = fed('ab\x1b[1;30;46m');
    carried.rebuild(capture('ab\n\n\n\n', st, { continuous: true }));
    carried.write(bytes('cd'));
    expect(carried.cells().cells[0]?.[2]).toMatchObject({ ch: 'c', bold: true, fgMode: 'palette', fg: 0, bgMode: 'palette', bg: 6 });
    const fresh = fed('ab\x1b[1;30;46m');
    fresh.rebuild(capture('ab\n\n\n\n', st));
    fresh.write(bytes('cd'));
    expect(fresh.cells().cells[0]?.[2]).toMatchObject({ ch: 'c', bold: false, fgMode: 'default', bgMode: 'default' });
  });

  it('keeps truecolour and an extended underline', () => {
    const m = fed('\x1b[38;2;1;2;3;4:3m');
    m.rebuild(capture('\n\n\n\n', state({ cursorX: 0 }), { continuous: true }));
    m.write(bytes('u'));
    expect(m.cells().cells[0]?.[0]).toMatchObject({ ch: 'u', fgMode: 'rgb', fg: 0x010203, underline: true });
  });

  it('parses the bytes still queued before reading the pen (they set it last)', async () => {
    const m = new Mirror({ cols: 20, rows: 5, scrollback: 100 });
    mirrors.push(m);
    const big = new Uint8Array(64 * 1024).fill(0x41);
    m.write(big); // queued (over the sync limit)
    m.write(bytes('\x1b[32m')); // queued behind it
    expect(m.backlogBytes).toBeGreaterThan(0);
    m.rebuild(capture('\n\n\n\n', state({ cursorX: 0 }), { continuous: true }));
    expect(m.backlogBytes).toBe(0);
    m.write(bytes('g'));
    await m.whenParsed();
    expect(m.cells().cells[0]?.[0]).toMatchObject({ ch: 'g', fgMode: 'palette', fg: 2 });
  });

  it('flushes a queue the async parser has half consumed without parsing anything twice', async () => {
    const m = new Mirror({ cols: 500, rows: 5, scrollback: 0 });
    mirrors.push(m);
    // Each queued chunk moves the DECSC column one step right: a chunk parsed twice would show.
    // 64 KB chunks: xterm parses fewer than 50 per 12 ms slice, so it does not trim its buffer
    // and the consumed chunks are still there when the rebuild flushes it.
    const chunks = 60;
    for (let i = 0; i < chunks; i++) m.write(bytes(`${'\x1b[0m'.repeat(16_000)}\x1b8\x1b[C\x1b7${i % 2 ? '\x1b[35m' : '\x1b[36m'}`));
    const total = m.backlogBytes;
    // Until xterm's async loop has parsed its first 12 ms slice.
    for (let i = 0; i < 2000 && m.backlogBytes === total; i++) await new Promise((r) => setTimeout(r, 1));
    expect(m.backlogBytes).toBeGreaterThan(0);
    expect(m.backlogBytes).toBeLessThan(total);
    m.rebuild(capture('\n\n\n\n', state({ cursorX: 0, paneWidth: 500 }), { continuous: true }));
    m.write(bytes('x\x1b8'));
    await m.whenParsed();
    expect(m.cells().cells[0]?.[0]).toMatchObject({ ch: 'x', fgMode: 'palette', fg: 5 });
    expect(m.cursor.x).toBe(chunks);
  });

  it('keeps the charsets: G0 designation, G1 with SO, and what the capture marks with SO/SI', () => {
    const m = fed('\x1b(0\x1b)0');
    m.rebuild(capture('\x0eqqx\x0f\n\n\n\n', state({ cursorX: 3, cursorY: 0 }), { continuous: true }));
    expect(m.snapshot({ format: 'text' }).lines[0]).toBe('──│');
    m.write(bytes('lqk\x1b(B\x0elqk\x0f ok'));
    expect(m.snapshot({ format: 'text' }).lines[0]).toBe('──│┌─┐┌─┐ ok');
    const fresh = fed('\x1b(0');
    fresh.rebuild(capture('\n\n\n\n', state({ cursorX: 0 })));
    fresh.write(bytes('q'));
    expect(fresh.snapshot({ format: 'text' }).lines[0]).toBe('q');
  });

  it('keeps the DECSC saved cursor (position and pen) of the active buffer', () => {
    const m = fed('\x1b[3;5H\x1b[35m\x1b7\x1b[0m\x1b[1;1H');
    m.rebuild(capture('\n\n\n\n', state({ cursorX: 0, cursorY: 0 }), { continuous: true }));
    m.write(bytes('\x1b8X'));
    expect(m.cursor).toMatchObject({ x: 5, y: 2 });
    expect(m.cells().cells[2]?.[4]).toMatchObject({ ch: 'X', fgMode: 'palette', fg: 5 });
  });

  it('on the alternate screen: the program DECSC stays; ?1049l brings back the pen saved when it entered', () => {
    const st = state({ alternateOn: true, alternateSavedX: 1, alternateSavedY: 1, cursorX: 0, cursorY: 0 });
    const m = fed('\x1b[2;2H\x1b[33m\x1b[?1049h\x1b[0m\x1b[4;4H\x1b[34m\x1b7\x1b[0m\x1b[H');
    m.rebuild(capture('\n\n\n\n\n', st, { continuous: true, alternateSaved: bytes('\n\n\n\n') }));
    m.write(bytes('\x1b8A\x1b[?1049lB'));
    expect(m.cursor).toMatchObject({ x: 2, y: 1 });
    expect(m.cells().cells[1]?.[1]).toMatchObject({ ch: 'B', fgMode: 'palette', fg: 3 });
  });

  it('the pending bytes continue the carried pen', () => {
    const m = fed('\x1b[1m');
    m.rebuild(capture('\n\n\n\n', state({ cursorX: 0 }), { continuous: true, pending: bytes('\x1b[3') }));
    m.write(bytes('1mX'));
    expect(m.cells().cells[0]?.[0]).toMatchObject({ ch: 'X', bold: true, fgMode: 'palette', fg: 1 });
  });
});
