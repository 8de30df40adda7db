/**
 * The mirror against tmux 3.3a itself: real programs in a private server, the mirror fed either
 * by a rebuild from the §5 snapshot or by the pane's raw bytes (pipe-pane), and compared cell by
 * cell with tmux's own capture. After a rebuild the program goes on, and the mirror is fed the
 * bytes that came after the capture: the continuation must land exactly (modes, region, saved
 * cursor, pending escape sequence).
 */
import { afterEach, describe, expect, it } from 'vitest';
import { compareWithCapture } from '../../lib/emulator/fidelity.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { TmuxPane } from './tmux-pane.js';

const BASH = ['env', 'PS1=$ ', 'bash', '--norc', '--noprofile'];

let pane: TmuxPane | undefined;
const mirrors: Mirror[] = [];
afterEach(async () => {
  for (const m of mirrors.splice(0)) m.dispose();
  const p = pane;
  pane = undefined;
  await p?.close();
});

async function start(argv: readonly string[], options?: Parameters<typeof TmuxPane.start>[1]): Promise<TmuxPane> {
  pane = await TmuxPane.start(argv, options);
  return pane;
}

function newMirror(p: TmuxPane): Mirror {
  const m = new Mirror({ cols: p.cols, rows: p.rows, scrollback: 1000 });
  mirrors.push(m);
  return m;
}

/** pipe-pane writes through `cat`: wait until the file stops growing. */
async function outputSettled(p: TmuxPane): Promise<Uint8Array> {
  let last = -1;
  for (;;) {
    const out = p.output();
    if (out.length === last) return out;
    last = out.length;
    await new Promise((r) => setTimeout(r, 80));
  }
}

async function expectFaithful(p: TmuxPane, mirror: Mirror, label: string): Promise<void> {
  await mirror.whenParsed();
  const { capture, cursor } = await p.visible();
  const report = compareWithCapture(mirror, capture, cursor);
  expect({ label, ...report, mirrorCursor: mirror.cursor, tmuxCursor: cursor }).toMatchObject({ label, equal: true, mismatches: [], cursorMatches: true });
}

/** The mirror's history + screen as text equals tmux's (`capture-pane -p -S - -E -`, no -J). */
async function expectSameHistory(p: TmuxPane, mirror: Mirror): Promise<void> {
  await mirror.whenParsed();
  const state = await p.state();
  const tmuxText = (await p.tmux('capture-pane', '-p', '-S', '-', '-E', '-', '-t', 't')).toString('utf8').replace(/\n$/, '').split('\n');
  const mirrorText = mirror.snapshot({ format: 'text', scrollback: 'all' });
  expect(mirrorText.scrollbackLines).toBe(state.historySize);
  expect(mirrorText.content.split('\n')).toEqual(tmuxText.map((l) => l.replace(/ +$/, '')));
}

/** Rebuilds a mirror from a snapshot; returns it with the output offset the capture corresponds to. */
async function rebuilt(p: TmuxPane): Promise<{ mirror: Mirror; offset: number }> {
  const before = await outputSettled(p);
  const capture = await p.capture();
  const mirror = newMirror(p);
  mirror.rebuild(capture);
  return { mirror, offset: before.length };
}

/** The live path: everything the program wrote, as one stream. */
async function live(p: TmuxPane): Promise<Mirror> {
  const mirror = newMirror(p);
  mirror.write(await outputSettled(p));
  return mirror;
}

/** Rebuild now, let `act` drive the program on, feed the bytes after the capture, compare. */
async function rebuildAndContinue(p: TmuxPane, act: () => Promise<void>, label: string): Promise<Mirror> {
  const { mirror, offset } = await rebuilt(p);
  await expectFaithful(p, mirror, `${label}: rebuilt`);
  await act();
  mirror.write((await outputSettled(p)).subarray(offset));
  await expectFaithful(p, mirror, `${label}: continued`);
  return mirror;
}

describe('mirror fidelity against tmux 3.3a', () => {
  it('bash with coloured output, a coloured line wrapping at the bottom row and wide chars', async () => {
    const p = await start(BASH);
    await p.waitForText('$ ');
    await p.type(
      "printf '\\e[1;31mred\\e[0m \\e[2mdim\\e[0m \\e[38;5;208morange\\e[0m \\e[38;2;10;200;30;48;2;50;0;90mtrue\\e[0m\\n'; " +
        "seq 1 30; printf '\\e[44m%s\\e[0m\\n' $(seq -s - 1 45); printf 'ab\\e[45m\\e[K\\e[0m\\n'; echo 'é中😀 ok'",
    );
    await p.keys('Enter');
    await p.waitForText('😀 ok\n');
    await expectFaithful(p, await live(p), 'live');
    const m = await rebuildAndContinue(
      p,
      async () => {
        await p.type("printf '\\e[7minverse\\e[0m\\n'");
        await p.keys('Enter');
        await p.waitForText(/inverse\n\$ /);
      },
      'bash',
    );
    expect(m.snapshot({ format: 'text' }).lines.join('\n')).toContain('é中😀 ok');
  });

  it('background colour on new rows: none after an autowrap scroll, BCE after EL and after a line feed scroll', async () => {
    // A `z` printed further along each row makes tmux's capture include the blanks before it
    // (capture-pane stops at the last written cell), so their background is checked strictly.
    const script = [
      'import sys',
      'w = sys.stdout.write',
      "w('\\x1b[2J\\x1b[3;1Hab\\x1b[42m\\x1b[K\\x1b[0m\\x1b[3;15Hz')",
      "w('\\x1b[5;1Hcd\\x1b[45m\\n\\x1b[0m\\x1b[5;15Hz')",
      "w('\\x1b[5;1H\\x1b[44m' + 'a' * 25 + '\\x1b[0m\\x1b[5;18Hz\\x1b[1;1H')",
      'sys.stdout.flush(); sys.stdin.readline()',
    ].join('\n');
    const p = await start(['python3', 's.py'], { cols: 20, rows: 5, files: { 's.py': script } });
    await p.waitForText(/a{5} +z/);
    await expectFaithful(p, await live(p), 'live');
    const { mirror } = await rebuilt(p);
    await expectFaithful(p, mirror, 'rebuilt');
  });

  it('long lines that tmux wrapped: -J joins them and the rebuild wraps them again', async () => {
    const p = await start(BASH, { cols: 50, rows: 12 });
    await p.waitForText('$ ');
    // 49 columns then a wide char: it does not fit and wraps, leaving the last column empty.
    await p.type("printf '%049d中%s\\n' 0 $(seq -s , 1 60); printf '%050d' 0; echo; echo end");
    await p.keys('Enter');
    await p.waitForText(/end\n\$ /);
    await expectFaithful(p, await live(p), 'live');
    await rebuildAndContinue(
      p,
      async () => {
        await p.type('echo again');
        await p.keys('Enter');
        await p.waitForText(/again\n\$ /);
      },
      'wrapped',
    );
  });

  it('more than a screen of output: history rows match tmux history', async () => {
    const p = await start(BASH, { cols: 40, rows: 10 });
    await p.waitForText('$ ');
    // Bash builtins only: the earlier $(seq …)/$(printf …) forked ~450 processes, which on a loaded
    // machine outlasted the wait (10 s) before line 150 was printed.
    await p.type("for i in {1..150}; do printf -v w '%*s' $((i % 50)) ''; printf 'line %d \\e[3%dmcolour\\e[0m %s\\n' $i $((i % 8)) \"${w// /w}\"; done");
    await p.keys('Enter');
    await p.waitForText(/line 150.*\n(.*\n)*\$ /);
    const { mirror } = await rebuilt(p);
    await expectFaithful(p, mirror, 'rebuilt');
    await expectSameHistory(p, mirror);
  });

  it("a wide character whose first half a delete-character removed: the row's text leaves the second half out, as tmux's capture does", async () => {
    const p = await start(BASH, { cols: 40, rows: 10 });
    await p.waitForText('$ ');
    // ab中cd, then DCH at 中's first column: its second half (a width-0 cell) stays, in tmux too
    // (the Z at column 4 lands on the c), in a row whose text is all ASCII (xterm's translation
    // reads that cell as a space). The capture cannot show the cell, so this compares text only.
    await p.type("printf '\\e[2J\\e[Hab\\xe4\\xb8\\xadcd\\e[1;3H\\e[P\\e[1;4HZ\\e[5;1H'");
    await p.keys('Enter');
    await p.waitForText(/^abZd\s/);
    const mirror = await live(p);
    await expectSameHistory(p, mirror);
    expect(mirror.visibleRows(0, 1).lines).toEqual(['abZd']);
  });

  it('vim with a file (alternate screen), then :q back to the primary screen', async () => {
    const file = Array.from({ length: 60 }, (_, i) => `def f${i}(x):  # ${'note '.repeat(i % 13)}\n    return "é中😀" * ${i}\n`).join('');
    const p = await start(['vim', '-u', 'NONE', '-i', 'NONE', '-N', '-c', 'syntax on', '-c', 'set number', 'f.py'], { files: { 'f.py': file } });
    await p.waitForText('def f0');
    const m = await rebuildAndContinue(
      p,
      async () => {
        await p.keys('4', '0', 'j', 'w');
        await p.waitForText(/ 41 /);
      },
      'vim',
    );
    expect(m.alternate).toBe(true);
    await expectFaithful(p, await live(p), 'live');
    // Leaving vim restores the primary screen and the cursor tmux saved when vim entered the
    // alternate screen: the rebuilt mirror must have both.
    const after = await rebuildAndContinue(
      p,
      async () => {
        await p.keys(':q!', 'Enter');
        await p.waitForText(/^$/m);
        await new Promise((r) => setTimeout(r, 300));
      },
      'vim exit',
    );
    expect(after.alternate).toBe(false);
  });

  it('less, paging forward', async () => {
    const text = Array.from({ length: 200 }, (_, i) => `${i}: ${'lorem ipsum '.repeat(1 + (i % 9))}`).join('\n');
    const p = await start(['less', '-R', 'f.txt'], { files: { 'f.txt': text } });
    await p.waitForText('0: lorem');
    await rebuildAndContinue(
      p,
      async () => {
        await p.keys('Space');
        await p.waitForText(/^\d+: lorem/m);
        await new Promise((r) => setTimeout(r, 200));
      },
      'less',
    );
    await expectFaithful(p, await live(p), 'live');
  });

  it('the python3 REPL', async () => {
    const p = await start(['python3', '-q']);
    await p.waitForText('>>> ');
    await p.type('print("é中😀" * 30, "\\x1b[1;32mgreen\\x1b[0m")');
    await p.keys('Enter');
    await p.waitForText('green');
    await rebuildAndContinue(
      p,
      async () => {
        await p.type('for i in range(40): print(i, "x" * i)');
        await p.keys('Enter', 'Enter');
        await p.waitForText(/39 x+\n>>> $/m);
      },
      'python',
    );
    await expectFaithful(p, await live(p), 'live');
  });

  it('state only the formats report: pending wrap, scroll region + origin mode, tab stops, an unfinished escape sequence', async () => {
    const script = [
      'import sys',
      'w = sys.stdout.write',
      // Tab stops at columns 5 and 17 only, then a full row: the cursor is in the pending-wrap state.
      "w('\\x1b[2J\\x1b[H\\x1b[3g\\x1b[6G\\x1bH\\x1b[18G\\x1bH\\r' + 'x' * 39 + '\\x1b[1;33mY\\x1b[0m'); sys.stdout.flush(); sys.stdin.readline()",
      // Wrap, region 3..8 with origin mode, then tabs.
      "w('wrapped\\x1b[3;8r\\x1b[?6h\\x1b[2;1H\\tA\\tB\\x1b[0m'); sys.stdout.flush(); sys.stdin.readline()",
      // Scroll inside the region (origin-relative rows), then leave an SGR half written.
      "w('\\x1b[6;1Hlast\\n\\nscrolled\\x1b[3'); sys.stdout.flush(); sys.stdin.readline()",
      "w('1mred?\\x1b[0m done'); sys.stdout.flush(); sys.stdin.readline()",
    ].join('\n');
    const p = await start(['python3', 's.py'], { cols: 40, rows: 10, files: { 's.py': script } });
    await p.waitForText('Y');
    expect((await p.state()).cursorX).toBe(40);
    const next = (needle: RegExp) => async () => {
      await p.keys('Enter');
      await p.waitForText(needle);
    };
    await rebuildAndContinue(p, next(/A\s+B/), 'pending wrap');
    const state = await p.state();
    expect(state).toMatchObject({ origin: true, scrollRegionUpper: 2, scrollRegionLower: 7, tabs: [5, 17] });
    await rebuildAndContinue(p, next(/scrolled/), 'region, origin, tabs');
    expect((await p.capture()).pending).toEqual(new TextEncoder().encode('\x1b[3'));
    await rebuildAndContinue(p, next(/done/), 'pending escape sequence');
  });

  it('an alternate screen whose rows wrapped (the -J capture joins them)', async () => {
    const script = [
      'import sys',
      "sys.stdout.write('primary\\r\\n' * 30 + 'saved here')",
      "sys.stdout.write('\\x1b[?1049h\\x1b[H' + ''.join('%d:%s\\r\\n' % (i, 'abc' * (i * 5)) for i in range(9)) + 'tail')",
      'sys.stdout.flush(); sys.stdin.readline()',
      "sys.stdout.write('\\x1b[?1049l after'); sys.stdout.flush(); sys.stdin.readline()",
    ].join('\n');
    const p = await start(['python3', 's.py'], { cols: 30, rows: 12, files: { 's.py': script } });
    await p.waitForText('tail');
    const mirror = await rebuildAndContinue(
      p,
      async () => {
        await p.keys('Enter');
        await p.waitForText('saved here after');
      },
      'wrapped alternate',
    );
    // The split between the primary's history and the alternate rows decides the history.
    await expectSameHistory(p, mirror);
    await expectFaithful(p, await live(p), 'live');
  });

  it('a continuous rebuild keeps what no format reports: the SGR pen, charsets (DEC graphics) and the DECSC cursor', async () => {
    const script = [
      'import sys',
      'w = sys.stdout.write',
      // Line drawing both ways: G1 designated and shifted in, and G0 designated. tmux marks such
      // cells with its charset attribute; capture -e writes SO/SI around them.
      "w('\\x1b)0\\x1b[2;1Ha\\x0eqqx\\x0fb \\x1b(0lqk\\x1b(B c')",
      // DECSC at row 4 column 6 with bold magenta, then the pen and G0 a program leaves set.
      "w('\\x1b[4;6H\\x1b[1;35m\\x1b7\\x1b[0m\\x1b[1;1Hhead \\x1b[30;46m\\x1b(0')",
      'sys.stdout.flush(); sys.stdin.readline()',
      // Continues from that state, as a curses program does (it only emits what changed).
      "w('\\x1b[1;7Hqq\\x0eq\\x0fs\\x1b8X'); sys.stdout.flush(); sys.stdin.readline()",
    ].join('\n');
    const p = await start(['python3', 's.py'], { cols: 30, rows: 6, files: { 's.py': script } });
    await p.waitForText('head');
    const stream = await live(p);
    await expectFaithful(p, stream, 'live');
    expect(stream.snapshot({ format: 'text' }).lines[1]).toBe('a──│b ┌─┐ c');
    const before = await outputSettled(p);
    const capture = await p.capture();
    stream.rebuild({ ...capture, continuous: true });
    const fresh = newMirror(p);
    fresh.rebuild(capture);
    await expectFaithful(p, stream, 'rebuilt');
    await expectFaithful(p, fresh, 'rebuilt without the stream');
    await p.keys('Enter');
    await p.waitForText('X');
    const after = (await outputSettled(p)).subarray(before.length);
    stream.write(after);
    await expectFaithful(p, stream, 'continued');
    // The same continuation on a mirror rebuilt without the stream's state: default pen, ASCII G0.
    fresh.write(after);
    await fresh.whenParsed();
    const { capture: grid, cursor } = await p.visible();
    expect(compareWithCapture(fresh, grid, cursor).equal).toBe(false);
  });
});
