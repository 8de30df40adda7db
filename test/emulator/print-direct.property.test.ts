/**
 * A keystroke's echo skips the parse: a run of printable ASCII goes straight into tmux's screen
 * port's print (XtermInternals.printDirect, lib/emulator/headless.ts) when that is exactly what
 * parsing it would do. Property: after any prefix (text, wraps, scroll regions, insert mode,
 * charsets, the alternate screen, SGR pens, wide and joining characters, REP, resets, and raw
 * bytes that leave xterm's parser inside a sequence or a UTF-8 character), a printable run printed
 * directly leaves the terminal as parsing it does: every cell with its attributes, the history,
 * the cursor, the pen and charsets the next byte is printed with; and the rows marked changed
 * cover the rows that changed; and bytes after it (a UTF-8 continuation, a sequence's end) land
 * the same. Where printing directly would not be the same, it declines and
 * does nothing. Real xterm with tmux's screen port on both sides.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readVisibleCells } from '../../lib/emulator/cell-grid.js';
import { createTerminal, DIRECT_PRINT_MAX_BYTES, type CreatedTerminal, type XtermInternals } from '../../lib/emulator/headless.js';
import { TmuxInputFilter } from '../../lib/emulator/input/tmux-input-filter.js';

const enc = new TextEncoder();
const COLS = 16;
const ROWS = 6;
const n = fc.integer({ min: 0, max: 18 });
const csi = (body: fc.Arbitrary<string>): fc.Arbitrary<string> => body.map((b) => `\x1b[${b}`);
const piece: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('x', 'abc', '$ ', 'hello world', '日本', 'e\u0301', '🙂', '\u200d', '\t', '\b', ' ', 'y'.repeat(15), 'z'.repeat(16)) },
  { weight: 3, arbitrary: fc.constantFrom('\r\n', '\n', '\r', '\x1bM', '\x1bD', '\x1bE') },
  { weight: 4, arbitrary: csi(fc.tuple(n, n).map(([r, c]) => `${r};${c}H`)) },
  { weight: 2, arbitrary: csi(fc.tuple(n, fc.constantFrom('L', 'M', '@', 'P', 'X', 'S', 'T', 'b', 'A', 'C', 'G', 'd', 'K', 'J')).map(([k, f]) => `${k}${f}`)) },
  { weight: 1, arbitrary: csi(fc.tuple(n, n).map(([t, b]) => `${t};${b}r`)) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '\x1b[?1049h', '\x1b[?1049l', '\x1bc', '\x1b#8', '\x1b[?7l', '\x1b[?7h', '\x1b[4h', '\x1b[4l', '\x1b[?6h', '\x1b7', '\x1b8',
      '\x1b[1;31m', '\x1b[0m', '\x1b[44;4m', '\x1b[38;2;1;2;3m', '\x1b(0', '\x1b(B', '\x0e', '\x0f', '\x1b)0', '\x1b]8;;http://a\x1b\\',
    ),
  },
);
/** Bytes given to xterm as they are, not through tmux's filter: they may leave its parser mid-way. */
const raw = fc.oneof(
  { weight: 3, arbitrary: fc.constant('') },
  { weight: 1, arbitrary: fc.constantFrom('\x1b', '\x1b[', '\x1b[3', '\x1b]0;title', '\x1bP', '\xe6', '\xe6\x97', '\xf0\x9f', '\x1b[?') },
);
/** Written after the run to both: what the parser and decoder were left holding shows in it. */
const after = fc.constantFrom('', 'q', '\x97\xa5', '\xa5', 'm', '\x1b[1mQ', '\x07');
const printable = fc.stringMatching(/^[\x20-\x7e]{1,40}$/);
const run = fc.oneof({ weight: 8, arbitrary: printable }, { weight: 1, arbitrary: fc.constantFrom('a\r', 'ab\n', 'x\x1b[m', 'é', 'x\x7f') });

function terminal(): CreatedTerminal & { readonly internals: XtermInternals } {
  const t = createTerminal(COLS, ROWS, 20);
  if (!t.internals) throw new Error('xterm private core not found: the direct print cannot be tested');
  return t as CreatedTerminal & { readonly internals: XtermInternals };
}

/** Everything the next byte or a reader can see: cells of history and screen, cursor, pen, charsets. */
function stateOf(t: CreatedTerminal): unknown {
  const b = t.term.buffer.active;
  const history: string[] = [];
  for (let y = 0; y < b.baseY; y++) history.push(b.getLine(y)?.translateToString(false) ?? '');
  return {
    cells: readVisibleCells(t.term),
    history,
    cursor: [b.cursorX, b.cursorY, b.type],
    parser: t.internals?.parserState?.save(),
  };
}

/** The rows whose cells differ between two visible grids. */
function changedBetween(before: unknown[][], after: unknown[][]): number[] {
  const rows: number[] = [];
  for (let y = 0; y < after.length; y++) if (JSON.stringify(before[y]) !== JSON.stringify(after[y])) rows.push(y);
  return rows;
}

describe('a printable run printed directly equals the run parsed', () => {
  it('on random prefixes: the same cells, history, cursor, pen and charsets; the changed rows marked', () => {
    let direct = 0;
    let declined = 0;
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 12 }), raw, run, after, (prefix, tail, text, next) => {
        const parsed = terminal();
        const printed = terminal();
        const filter = new TmuxInputFilter();
        const before = filter.push(enc.encode(prefix.join(''))).slice();
        // The raw tail is latin1 bytes (a lone UTF-8 lead byte stays one byte).
        const tailBytes = Uint8Array.from(tail, (c) => c.charCodeAt(0));
        for (const t of [parsed, printed]) {
          t.internals.writeSync(before);
          if (tailBytes.length > 0) t.internals.writeSync(tailBytes);
        }
        const grid0 = readVisibleCells(printed.term);
        printed.internals.changedRows?.take();
        const bytes = enc.encode(text);
        parsed.internals.writeSync(bytes);
        const took = printed.internals.printDirect(bytes);
        if (took) direct++;
        else {
          declined++;
          // Declined: nothing was done, so parsing it now gives the same terminal.
          expect(readVisibleCells(printed.term)).toEqual(grid0);
          printed.internals.writeSync(bytes);
        }
        expect(stateOf(printed)).toEqual(stateOf(parsed));
        const marked = printed.internals.changedRows?.take();
        for (const y of changedBetween(grid0, readVisibleCells(printed.term))) {
          expect(marked, `row ${y} changed unmarked`).toBeTruthy();
          expect(y).toBeGreaterThanOrEqual(marked?.from ?? Infinity);
          expect(y).toBeLessThan(marked?.to ?? -Infinity);
        }
        const nextBytes = Uint8Array.from(next, (c) => c.charCodeAt(0));
        for (const t of [parsed, printed]) t.internals.writeSync(nextBytes);
        expect(stateOf(printed)).toEqual(stateOf(parsed));
        parsed.term.dispose();
        printed.term.dispose();
      }),
      { numRuns: 600 },
    );
    // Both sides of the property were exercised.
    expect(direct).toBeGreaterThan(200);
    expect(declined).toBeGreaterThan(50);
  });

  it('declines mid-sequence, mid-character, for a byte that is not printable, and for a run too long', () => {
    const t = terminal();
    const x = enc.encode('x');
    expect(t.internals.printDirect(x)).toBe(true);
    expect(t.term.buffer.active.getLine(0)?.translateToString(true)).toBe('x');
    for (const [prefix, why] of [
      ['\x1b[3', 'inside a CSI'],
      ['\x1b]0;t', 'inside an OSC'],
      ['\xe6\x97', 'inside a UTF-8 character'],
    ] as const) {
      const u = terminal();
      u.internals.writeSync(Uint8Array.from(prefix, (c) => c.charCodeAt(0)));
      expect(u.internals.printDirect(x), why).toBe(false);
      u.term.dispose();
    }
    for (const bytes of [enc.encode('a\rb'), enc.encode('ab\n'), Uint8Array.of(0x61, 0x7f), Uint8Array.of(0xc3, 0xa9), new Uint8Array(0)]) {
      expect(t.internals.printDirect(bytes)).toBe(false);
    }
    expect(t.internals.printDirect(new Uint8Array(DIRECT_PRINT_MAX_BYTES).fill(0x61))).toBe(true);
    expect(t.internals.printDirect(new Uint8Array(DIRECT_PRINT_MAX_BYTES + 1).fill(0x61))).toBe(false);
    t.term.dispose();
  });

  it('declines while xterm still holds queued chunks (its order must not change)', async () => {
    const t = terminal();
    t.term.write('queued');
    expect(t.internals.writeBufferEmpty()).toBe(false);
    expect(t.internals.printDirect(enc.encode('x'))).toBe(false);
    await new Promise<void>((resolve) => t.term.write('', resolve));
    expect(t.internals.printDirect(enc.encode('x'))).toBe(true);
    expect(t.term.buffer.active.getLine(0)?.translateToString(true)).toBe('queuedx');
    t.term.dispose();
  });
});
