/**
 * Reply framing (parser BlockFraming, CommandQueue.framingOfNext, pane-snapshot.ts), pure: pane text
 * inside a framed reply cannot end it, open another one or inject anything, whatever it imitates
 * and however stdout is cut; a reply that does not end where its size says stops the parser.
 */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CommandQueue, type Reply } from '../../lib/control/command-queue.js';
import { ControlParser, type BlockFraming, type ControlEvent } from '../../lib/control/parser.js';
import { SNAPSHOT_BUFFERS, bufferSizeIn, paneSnapshot } from '../../lib/control/pane-snapshot.js';
import { PANE_STATE_FORMAT } from '../../lib/control/pane-state.js';
import { ManualClock } from './manual-clock.js';
import { bytes, showAll } from './transcript.js';

/** Runs `input` through a parser whose every own reply gets `framing`, cut at `cuts`. */
function parseFramed(input: string | Uint8Array, framings: BlockFraming[], cuts: readonly number[] = []): ControlEvent[] {
  const data = typeof input === 'string' ? bytes(input) : input;
  const events: ControlEvent[] = [];
  const queue = [...framings];
  const parser = new ControlParser((e) => events.push(e), { replyFraming: () => queue.shift() ?? { kind: 'guard' } });
  let at = 0;
  for (const cut of [...cuts, data.length]) {
    parser.push(data.subarray(at, cut));
    at = cut;
  }
  parser.end();
  return events;
}

const GUARD = '1796000000 300 1';

describe('a reply framed by size', () => {
  it('keeps a line equal to its own guard as content (and says so), and ends exactly where the text ends', () => {
    const text = `hello\n%end ${GUARD}\n%begin 1796000000 301 1\n%output %0 forged\ntail\n`;
    const input = `%begin ${GUARD}\n${text}%end ${GUARD}\n%output %0 real\n`;
    const events = showAll(parseFramed(input, [{ kind: 'text', bytes: Buffer.byteLength(text) }]));
    expect(events).toEqual([
      { kind: 'incident', code: 'guard-in-content', line: `%end ${GUARD}`, detail: expect.any(String) },
      { kind: 'reply', ok: true, time: 1796000000, number: 300, lines: ['hello', `%end ${GUARD}`, '%begin 1796000000 301 1', '%output %0 forged', 'tail'] },
      { kind: 'output', pane: '%0', data: 'real' },
    ]);
  });

  it('takes a %pause line inside pane text as content (only tmux-text replies route it)', () => {
    const text = '%pause %0\n%continue %0\n';
    const events = showAll(parseFramed(`%begin ${GUARD}\n${text}%end ${GUARD}\n`, [{ kind: 'text', bytes: text.length }]));
    expect(events).toEqual([{ kind: 'reply', ok: true, time: 1796000000, number: 300, lines: ['%pause %0', '%continue %0'] }]);
  });

  it('reads an empty capture (no buffer: size 0) as the one empty line tmux writes', () => {
    expect(showAll(parseFramed(`%begin ${GUARD}\n\n%end ${GUARD}\n`, [{ kind: 'text', bytes: 0 }]))).toEqual([
      { kind: 'reply', ok: true, time: 1796000000, number: 300, lines: [''] },
    ]);
  });

  it('reads a buffer without a final LF (a wrapped last row), to which tmux adds one', () => {
    const buffer = 'row one\nwrapped last row';
    expect(showAll(parseFramed(`%begin ${GUARD}\n${buffer}\n%end ${GUARD}\n`, [{ kind: 'text', bytes: buffer.length }]))).toEqual([
      { kind: 'reply', ok: true, time: 1796000000, number: 300, lines: ['row one', 'wrapped last row'] },
    ]);
  });

  it('counts a CR before a LF (a pty or proxy on the way) in the size, though the line loses it', () => {
    const text = 'a\r\nb\r\n';
    expect(showAll(parseFramed(`%begin ${GUARD}\n${text}%end ${GUARD}\n`, [{ kind: 'text', bytes: text.length }]))).toEqual([
      { kind: 'reply', ok: true, time: 1796000000, number: 300, lines: ['a', 'b'] },
    ]);
  });

  it('reads a one-line framing, and an error reply of one line as the error it is', () => {
    expect(showAll(parseFramed(`%begin ${GUARD}\n\\033[3\n%end ${GUARD}\n`, [{ kind: 'lines', count: 1 }]))[0]).toMatchObject({ kind: 'reply', lines: ['\\033[3'] });
    expect(showAll(parseFramed(`%begin ${GUARD}\ncan't find pane: %9\n%error ${GUARD}\n`, [{ kind: 'text', bytes: 0 }]))).toEqual([
      { kind: 'reply', ok: false, time: 1796000000, number: 300, lines: ["can't find pane: %9"] },
    ]);
  });

  it('stops interpreting the stream when the reply does not end where its size says', () => {
    const input = `%begin ${GUARD}\nshort\nmore than announced\n%end ${GUARD}\n%output %0 x\n%begin 1796000000 301 1\n%end 1796000000 301 1\n`;
    const parsed: ControlEvent[] = [];
    const parser = new ControlParser((e) => parsed.push(e), { replyFraming: () => ({ kind: 'text', bytes: 6 }) });
    parser.push(bytes(input));
    parser.end();
    expect(showAll(parsed)).toEqual([{ kind: 'incident', code: 'framing-mismatch', line: 'more than announced', detail: expect.stringContaining('no longer interpreted') }]);
    expect(parser.untrusted).toBe(true);
  });

  it('treats a framing it cannot use (negative, NaN, a throwing callback) as one line at most', () => {
    for (const make of [() => ({ kind: 'text', bytes: -1 }) as BlockFraming, () => ({ kind: 'lines', count: Number.NaN }) as BlockFraming, (): BlockFraming => { throw new Error('x'); }]) {
      const events: ControlEvent[] = [];
      const parser = new ControlParser((e) => events.push(e), { replyFraming: make });
      parser.push(bytes(`%begin ${GUARD}\na\nb\n%end ${GUARD}\n`));
      expect(events.map((e) => (e.kind === 'incident' ? e.code : e.kind))).toEqual(['framing-mismatch']);
    }
  });

  it('frames only this client\'s replies: a flags-0 block closes on its guard', () => {
    const events = showAll(parseFramed('%begin 1796000000 264 0\n%end 1796000000 264 0\n', [{ kind: 'lines', count: 5 }]));
    expect(events).toEqual([{ kind: 'foreign-block', ok: true, time: 1796000000, number: 264, flags: 0, lines: [] }]);
  });

  it('property: any pane text, guesses of the guard included, comes back exactly, however stdout is cut', () => {
    const hostileLine = fc.oneof(
      fc.constantFrom(`%end ${GUARD}`, `%error ${GUARD}`, `%begin ${GUARD}`, `%end ${GUARD} `, '%exit', '%output %0 x', '%pause %0', '%session-changed $1 x', ''),
      fc.tuple(fc.constantFrom('%end', '%error', '%begin'), fc.integer({ min: 1795999998, max: 1796000002 }), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 0, max: 3 })).map(([w, t, n, f]) => `${w} ${t} ${n} ${f}`),
      // A grid cell never holds CR or LF (tmux handles C0 bytes as controls).
      fc.string({ unit: 'binary' }).map((s) => s.replace(/[\n\r]/g, '')),
    );
    fc.assert(
      fc.property(fc.array(hostileLine, { minLength: 1, maxLength: 12 }), fc.boolean(), fc.array(fc.nat(), { maxLength: 6 }), (lines, finalLf, rawCuts) => {
        const buffer = Buffer.from(lines.join('\n') + (finalLf ? '\n' : ''));
        // tmux prints the buffer without its final LF, then adds one.
        const wire = Buffer.concat([buffer, buffer.length > 0 && buffer[buffer.length - 1] === 0x0a ? Buffer.alloc(0) : Buffer.from('\n')]);
        const input = Buffer.concat([Buffer.from(`%begin ${GUARD}\n`), wire, Buffer.from(`%end ${GUARD}\n%output %0 after\n`)]);
        const cuts = [...new Set(rawCuts.map((c) => c % (input.length + 1)))].sort((a, b) => a - b);
        const events = parseFramed(new Uint8Array(input), [{ kind: 'text', bytes: buffer.length }], cuts).filter((e) => !(e.kind === 'incident' && e.code === 'guard-in-content'));
        expect(events.map((e) => e.kind)).toEqual(['reply', 'output']);
        const reply = events[0] as { lines: Uint8Array[] };
        expect(Buffer.from(reply.lines.map((l) => Buffer.from(l).toString('latin1')).join('\n'), 'latin1').equals(wire.subarray(0, wire.length - 1))).toBe(true);
      }),
      { seed: 20261130, numRuns: 500 },
    );
  });
});

describe('CommandQueue.framingOfNext', () => {
  it('frames a reply from the replies of earlier commands of its batch, at the moment its %begin arrives', async () => {
    const writes: string[] = [];
    const queue = new CommandQueue((d) => writes.push(d), new ManualClock(), { defaultTimeoutMs: 1000 });
    const parser = new ControlParser((e) => e.kind === 'reply' && queue.onReply(e), { replyFraming: () => queue.framingOfNext() });
    const batch = paneSnapshot('%0', PANE_STATE_FORMAT, { withContinue: false });
    const replies = queue.sendBatch(batch.commands);
    const main = `row 1\n%end 1796000000 ${306} 1\n%begin 1796000000 310 1\nlast\n`;
    let n = 300;
    const block = (body: string, ok = true): string => `%begin 1796000000 ${n} 1\n${body}%${ok ? 'end' : 'error'} 1796000000 ${n++} 1\n`;
    const stream = [
      block('80\t24\t0\t0\n'), // state (shape is not checked here)
      block('unknown buffer: td-snap-main\n', false),
      block('unknown buffer: td-snap-alt\n', false),
      block(''),
      block(''),
      block(`${SNAPSHOT_BUFFERS.main} ${Buffer.byteLength(main)}\n`),
      block(main),
      block('\n'),
      block('\n'),
      block(''),
      block('unknown buffer: td-snap-alt\n', false),
    ].join('');
    parser.push(bytes(stream));
    const parts = batch.read(await replies);
    expect(Buffer.from(parts.main).toString()).toBe(main.slice(0, -1));
    expect(parts.alternateSaved).toEqual(new Uint8Array(0));
    expect(parts.pending).toEqual(new Uint8Array(0));
    expect(queue.pending).toBe(0);
    expect(writes.join('').split('\n').filter(Boolean)).toHaveLength(batch.commands.length);
  });

  it('guards the next reply when the command has no framing or nothing waits, and answers a mayFail error', async () => {
    const queue = new CommandQueue(() => undefined, new ManualClock());
    expect(queue.framingOfNext()).toEqual({ kind: 'guard' });
    const r: Promise<Reply> = queue.send({ line: 'delete-buffer -b td-x', mayFail: true });
    queue.onReply({ kind: 'reply', ok: false, time: 1, number: 1, lines: [bytes('unknown buffer: td-x')] });
    expect(await r).toMatchObject({ ok: false });
    queue.send({ line: 'capture-pane -p', framing: () => { throw new Error('broken'); } }).catch(() => undefined);
    expect(queue.framingOfNext()).toEqual({ kind: 'lines', count: 1 });
  });

  it('reads a buffer size only from the exact buffer name', () => {
    const reply = { ok: true, lines: [bytes('td-snap-mainx 5'), bytes('td-snap-main 12'), bytes('td-snap-alt x')] };
    expect(bufferSizeIn(reply, 'td-snap-main')).toBe(12);
    expect(bufferSizeIn(reply, 'td-snap-alt')).toBe(0);
    expect(bufferSizeIn({ ok: false, lines: [] }, 'td-snap-main')).toBe(0);
  });
});
