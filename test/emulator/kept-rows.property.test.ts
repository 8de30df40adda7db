/**
 * The input baseline re-reads only the rows marked changed since its last read (lib/emulator/
 * kept-rows.ts, screen/changed-rows.ts). Property: on random streams (typing, scrolling, scroll
 * regions, insert/delete lines and characters, erasures, the alternate screen, resets, wide and
 * combining characters, floods the mirror fast-forwards, resizes), `screenRows()` read at random
 * points equals a full read of the rows (`visibleRows(0, rows)`). Real xterm with tmux's screen port.
 */
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { createTerminal } from '../../lib/emulator/headless.js';
import { Mirror, type MirrorOptions } from '../../lib/emulator/mirror.js';
import { systemParseScheduler } from '../../backends/process/system-parse-scheduler.js';

const enc = new TextEncoder();
const mirrors: Mirror[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

const n = fc.integer({ min: 0, max: 14 });
const csi = (body: fc.Arbitrary<string>): fc.Arbitrary<string> => body.map((b) => `\x1b[${b}`);
const piece: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('x', 'abc', '$ ', 'hello world', '日本', 'e\u0301', '🙂', '\t', '\b', ' ') },
  { weight: 3, arbitrary: fc.constantFrom('\r\n', '\n', '\r', '\x1bM', '\x1bD', '\x1bE') },
  { weight: 1, arbitrary: fc.integer({ min: 20, max: 400 }).map((k) => 'flood line\r\n'.repeat(k)) },
  { weight: 1, arbitrary: fc.integer({ min: 1, max: 200 }).map((k) => 'y'.repeat(k)) },
  { weight: 4, arbitrary: csi(fc.tuple(n, n).map(([r, c]) => `${r};${c}H`)) },
  { weight: 1, arbitrary: csi(fc.constantFrom('0J', '1J', '2J', '3J', '0K', '1K', '2K')) },
  { weight: 2, arbitrary: csi(fc.tuple(n, fc.constantFrom('L', 'M', '@', 'P', 'X', 'S', 'T', 'b', 'A', 'B', 'C', 'D', 'G', 'd')).map(([k, f]) => `${k}${f}`)) },
  { weight: 1, arbitrary: csi(fc.tuple(n, n).map(([t, b]) => `${t};${b}r`)) },
  { weight: 1, arbitrary: fc.constantFrom('\x1b[r', '\x1b[?1049h', '\x1b[?1049l', '\x1b[?47h', '\x1b[?47l', '\x1bc', '\x1b#8', '\x1b[?7l', '\x1b[?7h', '\x1b[4h', '\x1b[4l', '\x1b[?6h', '\x1b[?6l', '\x1b7', '\x1b8', '\x1b[1;31m', '\x1b[0m', '\x1b[44m') },
);

type Op = { readonly write: string } | { readonly read: true } | { readonly keep: true } | { readonly resize: readonly [number, number] };
const op: fc.Arbitrary<Op> = fc.oneof(
  { weight: 10, arbitrary: fc.array(piece, { minLength: 1, maxLength: 6 }).map((p) => ({ write: p.join('') })) },
  { weight: 4, arbitrary: fc.constant({ read: true as const }) },
  // The session's read after an echo's event (wait.ts afterOutput), with or without bytes queued.
  { weight: 3, arbitrary: fc.constant({ keep: true as const }) },
  { weight: 1, arbitrary: fc.tuple(fc.integer({ min: 5, max: 30 }), fc.integer({ min: 3, max: 12 })).map(([c, r]) => ({ resize: [c, r] as const })) },
);

async function run(options: Partial<MirrorOptions>, ops: readonly Op[]): Promise<void> {
  const m = new Mirror({ cols: 20, rows: 8, scrollback: 50, ...options });
  mirrors.push(m);
  const check = async (): Promise<void> => {
    await m.whenParsed();
    expect([...m.screenRows()]).toEqual([...m.visibleRows(0, m.rows).lines]);
  };
  await check();
  for (const o of ops) {
    if ('write' in o) m.write(enc.encode(o.write));
    else if ('resize' in o) m.resize(o.resize[0], o.resize[1]);
    else if ('keep' in o) m.keepRowsCurrent();
    else await check();
  }
  await check();
}

describe('the input baseline re-reads only changed rows', () => {
  it('equals a full read at random points of random streams (sync path and xterm-queued)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => run({}, ops)),
      { numRuns: 250 },
    );
  });

  it('equals a full read with the shared scheduler (batched, fast-forwarded floods)', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), (ops) => run({ scheduler: systemParseScheduler }, ops)),
      { numRuns: 150 },
    );
  });

  it('keepRowsCurrent reads ahead only what is parsed: bytes still queued stay queued', async () => {
    const m = new Mirror({ cols: 40, rows: 10, scrollback: 50, syncWriteMaxBytes: 0 });
    mirrors.push(m);
    m.write(enc.encode('$ x'));
    expect(m.backlogBytes).toBeGreaterThan(0);
    m.keepRowsCurrent();
    expect(m.backlogBytes).toBeGreaterThan(0);
    await m.whenParsed();
    m.keepRowsCurrent();
    expect(m.screenRows()[0]).toBe('$ x');
  });

  it("the cursor and the buffer's place read through the core are what xterm's public API says", () => {
    fc.assert(
      fc.property(fc.array(piece, { minLength: 1, maxLength: 40 }), (pieces) => {
        const created = createTerminal(20, 8, 50, () => undefined);
        const { term, internals } = created;
        if (!internals) throw new Error('this xterm build has no private core: the sync path is off');
        for (const p of pieces) {
          internals.writeSync(enc.encode(p));
          const active = term.buffer.active;
          expect([internals.cursorX(), internals.cursorY(), internals.baseY(), internals.viewportY(), internals.alternate()]).toEqual([active.cursorX, active.cursorY, active.baseY, active.viewportY, active.type === 'alternate']);
        }
        term.dispose();
      }),
      { numRuns: 100 },
    );
  });

  it('typing along the prompt re-reads the prompt row alone', async () => {
    const m = new Mirror({ cols: 40, rows: 10, scrollback: 50 });
    mirrors.push(m);
    m.write(enc.encode('line one\r\nline two\r\n$ '));
    await m.whenParsed();
    const first = [...m.screenRows()];
    m.write(enc.encode('x'));
    await m.whenParsed();
    expect([...m.screenRows()]).toEqual(['line one', 'line two', '$ x', ...first.slice(3)]);
  });
});
