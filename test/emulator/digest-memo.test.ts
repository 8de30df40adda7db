/**
 * Mirror.digest() is memoised on the parse counter: these check that every way the grid changes
 * (bytes, cursor-only moves, cursor visibility, the alternate screen, a resize with no output,
 * reset, rebuild) bumps the counter, so a memoised digest always equals one taken fresh.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { Mirror, type MirrorOptions } from '../../lib/emulator/mirror.js';
import { parsePaneState } from '../../lib/control/pane-state.js';
import { FRESH_SHELL } from '../control/pane-state-fixture.js';
import { systemParseScheduler } from '../../backends/process/system-parse-scheduler.js';

const enc = new TextEncoder();
const bytes = (s: string): Uint8Array => enc.encode(s);

const mirrors: Mirror[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

type Op = { readonly name: string; readonly apply: (m: Mirror) => void; readonly visible: boolean };
const text = (name: string, s: string, visible = true): Op => ({ name, apply: (m) => m.write(bytes(s)), visible });

const rebuildState = { ...parsePaneState(FRESH_SHELL), paneWidth: 30, paneHeight: 8, cursorX: 2, cursorY: 1 };
const OPS: readonly Op[] = [
  text('text', '$ hello \x1b[1mworld\x1b[0m'),
  text('cursor move only', '\x1b[3;5H'),
  text('cursor hidden', '\x1b[?25l'),
  text('cursor shown', '\x1b[?25h'),
  text('SGR reset (no cell changes)', '\x1b[0m', false),
  text('cursor save + restore (no change)', '\x1b7\x1b8', false),
  text('alternate screen on', '\x1b[?1049h'),
  text('text on the alternate screen', 'alt'),
  text('alternate screen off', '\x1b[?1049l'),
  { name: 'resize with no output', apply: (m) => m.resize(30, 8), visible: true },
  { name: 'reset', apply: (m) => m.reset(), visible: true },
  text('text after reset', 'again'),
  {
    name: 'rebuild',
    apply: (m) => m.rebuild({ cols: 30, rows: 8, main: bytes('$ ls\nfile\n\n\n\n\n\n'), pending: new Uint8Array(0), state: rebuildState }),
    visible: true,
  },
  text('text after rebuild', 'x'),
];

const MODES: readonly { readonly name: string; readonly options: Partial<MirrorOptions>; readonly awaitParse: boolean }[] = [
  { name: 'sync parse', options: {}, awaitParse: false },
  // A read parses what the scheduler still holds: the memo must be checked after that parse.
  { name: 'scheduled queue, read before it ran', options: { scheduler: systemParseScheduler, syncWriteMaxBytes: 0 }, awaitParse: false },
  { name: "xterm's own write queue", options: { syncWriteMaxBytes: 0 }, awaitParse: true },
];

describe('Mirror.digest memo', () => {
  for (const mode of MODES) {
    it(`equals a fresh digest after every kind of change (${mode.name})`, async () => {
      const open = (): Mirror => {
        const m = new Mirror({ cols: 40, rows: 10, scrollback: 50, ...mode.options });
        mirrors.push(m);
        return m;
      };
      const memoised = open();
      let previous = memoised.digest();
      for (let i = 0; i < OPS.length; i++) {
        const op = OPS[i] as Op;
        op.apply(memoised);
        if (mode.awaitParse) await memoised.whenParsed();
        const now = memoised.digest();
        expect(memoised.digest(), op.name).toBe(now);
        // The same ops replayed on a mirror that never took a digest before: nothing memoised.
        const fresh = open();
        // Parsed between ops as the memoised one was (a reset drops what is still queued).
        for (const earlier of OPS.slice(0, i + 1)) {
          earlier.apply(fresh);
          await fresh.whenParsed();
        }
        expect(now, op.name).toBe(fresh.digest());
        if (op.visible) expect(now, `${op.name} changes the digest`).not.toBe(previous);
        else expect(now, `${op.name} leaves the digest as it was`).toBe(previous);
        previous = now;
      }
    });
  }

  it('is not bumped by reads; a cursor-only write bumps seq and changes it', async () => {
    const m = new Mirror({ cols: 200, rows: 60, scrollback: 50 });
    mirrors.push(m);
    m.write(bytes('x'.repeat(200 * 59)));
    await m.whenParsed();
    const seq = m.seq;
    const first = m.digest();
    expect(m.digest()).toBe(first);
    expect(m.seq).toBe(seq);
    m.write(bytes('\x1b[H'));
    expect(m.seq).toBe(seq + 1);
    expect(m.digest()).not.toBe(first);
  });
});
