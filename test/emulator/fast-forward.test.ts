/**
 * The mirror's fast-forward (lib/emulator/pending-output.ts): a long run of plain text is skipped
 * up to the point from which what it printed fills the whole buffer. One test per condition the
 * skip depends on: where skipping would be wrong, the mirror must not skip (its stats say so) and
 * must equal both the same mirror parsing every byte and real tmux 3.3a (tools/tmux-lab.ts, which
 * writes each case to a tmux pane and compares grid, cursor, screen and history); where it may
 * skip, it must skip and still equal both.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemParseScheduler } from '../../backends/process/system-parse-scheduler.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { TmuxLab } from '../../tools/tmux-lab.js';

const COLS = 20;
const ROWS = 6;
/** The lab's history-limit (the mirror's scrollback). */
const HISTORY = 200;
/** Advances a cut needs after it: rows − 1 to reach the bottom, then the whole buffer. */
const NEEDED = ROWS - 1 + ROWS + HISTORY;

const enc = new TextEncoder();

/** `n` lines of plain text: each `\r`, then text, then `\n` (the CR before each line is a cut). */
function flood(n: number, width = 12, tag = ''): string {
  let out = '';
  for (let i = 0; i < n; i++) out += `\r${`${tag}${i}:`.padEnd(width, String.fromCharCode(97 + (i % 26)))}\n`;
  return out;
}

let lab: TmuxLab;
beforeAll(async () => {
  lab = await TmuxLab.start({ sizes: [[COLS, ROWS]], historyLimit: HISTORY });
});
afterAll(async () => {
  await lab?.close();
});

interface Outcome {
  readonly skips: number;
  readonly sameAsFullParse: boolean;
  readonly sameAsTmux: boolean;
}

function text(m: Mirror): string {
  return `${m.cursor.x},${m.cursor.y},${m.alternate}\n${m.snapshot({ format: 'ansi', scrollback: 'all' }).content}\n${m.digest()}`;
}

/** The stream in one write (one batch) to a fast-forwarding mirror and to one that parses every byte, and to tmux. */
async function run(stream: string, scrollback = HISTORY): Promise<Outcome> {
  const bytes = enc.encode(stream);
  const options = { cols: COLS, rows: ROWS, scrollback, scheduler: systemParseScheduler, syncWriteMaxBytes: 0 };
  const fast = new Mirror(options);
  const full = new Mirror({ ...options, fastForward: false });
  try {
    fast.write(bytes);
    full.write(bytes);
    await Promise.all([fast.whenParsed(), full.whenParsed()]);
    expect(fast.backlogBytes).toBe(0);
    const sameAsTmux = scrollback === HISTORY ? (await lab.runCase({ cols: COLS, rows: ROWS, bytes })).equal : true;
    return { skips: fast.fastForwardStats.skips, sameAsFullParse: text(fast) === text(full), sameAsTmux };
  } finally {
    fast.dispose();
    full.dispose();
  }
}

describe('fast-forward: skips only where the result cannot change', () => {
  it('skips a long plain run after a pen, a cursor mid-line and a pending wrap, and the grid, history and cursor are the same', async () => {
    const stream = `\x1b[31;44mred on blue\x1b[3;7H${'w'.repeat(COLS - 6)}${flood(600)}tail\x1b[0m`;
    expect(await run(stream)).toEqual({ skips: 1, sameAsFullParse: true, sameAsTmux: true });
  });

  it('skips at exactly the advances needed after a cut (cursor starting on the top row), and not one fewer', async () => {
    // The first line's CR has NEEDED advances after it only from NEEDED lines on.
    expect(await run(flood(NEEDED + 1))).toEqual({ skips: 1, sameAsFullParse: true, sameAsTmux: true });
    expect(await run(flood(NEEDED - 1))).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('counts autowraps as line advances (lines longer than the width)', async () => {
    expect(await run(`x${flood(250, COLS * 2 + 3)}`)).toEqual({ skips: 1, sameAsFullParse: true, sameAsTmux: true });
  });

  it('does not skip on the alternate screen (no history there)', async () => {
    expect(await run(`before${flood(300)}\x1b[?1049h${flood(600)}`)).toMatchObject({ sameAsFullParse: true, sameAsTmux: true });
    // Only the main-screen flood may be skipped.
    expect((await run(`\x1b[?1049h${flood(600)}`)).skips).toBe(0);
  });

  it('does not skip with a scroll region set (lines above and below it stay)', async () => {
    expect(await run(`top\r\n\x1b[2;5r\x1b[5;1H${flood(600)}`)).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('does not skip with autowrap off (a long line overwrites its last cell)', async () => {
    expect(await run(`\x1b[?7l${flood(600, COLS * 2)}`)).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('does not skip in insert mode', async () => {
    expect(await run(`\x1b[4h${flood(600)}`)).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('does not skip with a line-drawing charset active', async () => {
    expect(await run(`\x1b(0${flood(600)}`)).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('does not skip a run with no CR (the column at its start is unknown)', async () => {
    expect(await run(`abc${'0123456789\n'.repeat(600)}`)).toEqual({ skips: 0, sameAsFullParse: true, sameAsTmux: true });
  });

  it('skips with origin mode on (CR, LF and printing do not read it)', async () => {
    expect(await run(`\x1b[?6h${flood(600)}`)).toEqual({ skips: 1, sameAsFullParse: true, sameAsTmux: true });
  });

  it('skips each long run between escapes, and resets the run at each escape', async () => {
    const stream = `${flood(400, 12, 'a')}\x1b[1mB\x1b[0m${flood(100, 12, 'b')}\x1b[2;4H${flood(500, 25, 'c')}`;
    expect(await run(stream)).toEqual({ skips: 2, sameAsFullParse: true, sameAsTmux: true });
  });

  it('skips with no history (scrollback 0): the screen alone is the buffer', async () => {
    expect(await run(flood(100), 0)).toEqual({ skips: 1, sameAsFullParse: true, sameAsTmux: true });
  });

  it('a marker on a row that scrolls out is lost as it is without the skip', async () => {
    const options = { cols: COLS, rows: ROWS, scrollback: HISTORY, scheduler: systemParseScheduler, syncWriteMaxBytes: 0 };
    const fast = new Mirror(options);
    const full = new Mirror({ ...options, fastForward: false });
    try {
      const marks = [fast, full].map((m) => {
        m.write(enc.encode('$ typed'));
        return m;
      });
      await Promise.all(marks.map((m) => m.whenParsed()));
      const rows = marks.map((m) => m.markCursorRow());
      for (const m of marks) m.write(enc.encode(flood(600)));
      await Promise.all(marks.map((m) => m.whenParsed()));
      expect(fast.fastForwardStats.skips).toBe(1);
      expect(rows.map((r) => r.visibleRow())).toEqual([undefined, undefined]);
    } finally {
      fast.dispose();
      full.dispose();
    }
  });

  it('keeps a resize queued between two floods in its place', async () => {
    const options = { cols: COLS, rows: ROWS, scrollback: HISTORY, scheduler: systemParseScheduler, syncWriteMaxBytes: 0 };
    const fast = new Mirror(options);
    const full = new Mirror({ ...options, fastForward: false });
    try {
      for (const m of [fast, full]) {
        m.write(enc.encode(flood(500, 30, 'a')));
        m.resize(COLS + 7, ROWS + 2);
        m.write(enc.encode(flood(500, 30, 'b')));
      }
      await Promise.all([fast.whenParsed(), full.whenParsed()]);
      expect(fast.fastForwardStats.skips).toBe(2);
      expect([fast.cols, fast.rows]).toEqual([COLS + 7, ROWS + 2]);
      expect(text(fast)).toBe(text(full));
    } finally {
      fast.dispose();
      full.dispose();
    }
  });
});
