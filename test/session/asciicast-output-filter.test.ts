/**
 * A recording is played into the operator's own terminal (`asciinema play drive.cast`): the export
 * removes what acts on that terminal rather than its screen (clipboard writes, passthrough,
 * titles, APC/PM/SOS, queries), unless `raw` is asked for. The oracle for "never reaches the
 * terminal" is xterm.js's own parser: fed the filtered text character by character, it must never
 * enter a string state, never answer a query, never change its title.
 */
import fc from 'fast-check';
import xtermHeadless from '@xterm/headless';
import { describe, expect, it } from 'vitest';
import { AsciicastOutputFilter, neutraliseTerminalOutput } from '../../lib/session/asciicast-output-filter.js';
import { toAsciicast } from '../../lib/session/asciicast.js';
import type { TranscriptEntry } from '../../lib/session/transcript.js';

const { Terminal } = xtermHeadless;

/** xterm.js parser states that hold a string (SOS/PM/APC, OSC, DCS…): see its ParserState enum. */
const STRING_STATES = new Set([7, 8, 9, 10, 11, 12, 13]);

interface PlayedBy {
  readonly stringStates: number;
  readonly replies: number;
  readonly titles: number;
  readonly screen: string;
}

/** Plays `text` into a headless xterm the way a player's terminal would take it, watching what it does. */
function play(text: string): PlayedBy {
  const term = new Terminal({ cols: 40, rows: 6, allowProposedApi: true, logLevel: 'off' });
  let replies = 0;
  let titles = 0;
  term.onData(() => replies++);
  term.onBinary(() => replies++);
  term.onTitleChange(() => titles++);
  const core = (term as unknown as { _core: { _inputHandler: { _parser: { parse(d: Uint32Array, n: number): void; currentState: number } } } })._core;
  const parser = core._inputHandler._parser;
  let stringStates = 0;
  for (const ch of text) {
    parser.parse(Uint32Array.of(ch.codePointAt(0) as number), 1);
    if (STRING_STATES.has(parser.currentState)) stringStates++;
  }
  const rows: string[] = [];
  for (let y = 0; y < term.rows; y++) rows.push(term.buffer.active.getLine(y)?.translateToString(true) ?? '');
  term.dispose();
  return { stringStates, replies, titles, screen: rows.join('\n') };
}

describe('the asciicast output filter', () => {
  it.each([
    ['an OSC 52 clipboard write (BEL and ST forms)', '\x1b]52;c;ZWNobyBwd25lZA==\x07\x1b]52;p;aGk=\x1b\\'],
    ['a DCS tmux; passthrough carrying an OSC 52', '\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\'],
    ['titles (OSC 0/1/2) and screen\'s ESC k', '\x1b]0;pwned\x07\x1b]2;x\x1b\\\x1bkname\x1b\\'],
    ['APC, PM, SOS (kitty graphics, private messages)', '\x1b_Gf=100;AAAA\x1b\\\x1b^pm\x1b\\\x1bXsos\x1b\\'],
    ['C1 introducers and controls', '\u009d52;c;aGk=\u009c\u0090tmux;x\u009c\u009b6n\u0085'],
    ['iTerm2 file transfer and notifications', '\x1b]1337;File=name=x;inline=0:AAAA\x07\x1b]9;hi\x07\x1b]777;notify;a;b\x07'],
    ['queries whose answers would land in the operator\'s input', '\x1b[c\x1b[>c\x1b[6n\x1b[?6n\x1b[?25$p\x1b[>q\x1b[?u\x1b[21t\x1b[8;100;100t'],
    ['an ESC with a C0 control inside before the introducer', '\x1b\x07]52;c;aGk=\x07'],
  ])('removes %s', (_name, hostile) => {
    const played = play(`a${neutraliseTerminalOutput(hostile)}b`);
    expect(played).toMatchObject({ stringStates: 0, replies: 0, titles: 0 });
    // and the raw text does reach the terminal (the check would see it)
    expect(play(hostile)).not.toMatchObject({ stringStates: 0, replies: 0, titles: 0 });
  });

  it('keeps everything that draws: the screen plays the same', () => {
    const drawing = '\x1b[2J\x1b[H\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m\r\n\x1b(0lqk\x1b(B é中😀\x1b[3;5Hthere\x1b[K\x1b[?25l\x1b7\x1b[1;1H\x1b8';
    const at = drawing.indexOf('\r\n');
    const noisy = `\x1b]0;title\x07${drawing.slice(0, at)}\x1bPtmux;x\x1b\\${drawing.slice(at)}\x1b[6n`;
    expect(neutraliseTerminalOutput(drawing)).toBe(drawing);
    expect(play(neutraliseTerminalOutput(noisy)).screen).toBe(play(drawing).screen);
  });

  it('never lets a string start, a query through or a title change, for any text (property)', () => {
    const unit = fc.oneof(
      { arbitrary: fc.constantFrom('\x1b', '\x07', '\\', ']', 'P', '_', '^', 'X', 'k', '[', '52;c;', '6n', 'c', 't', '>', '?', '$p', '\x18', '\x1a', ';', '0'), weight: 6 },
      { arbitrary: fc.integer({ min: 0x80, max: 0x9f }).map((c) => String.fromCharCode(c)), weight: 2 },
      { arbitrary: fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c)), weight: 2 },
      { arbitrary: fc.constantFrom('a', 'é', '中', ' '), weight: 2 },
    );
    fc.assert(
      fc.property(fc.array(unit, { maxLength: 60 }), fc.nat(), (units, cut) => {
        const text = units.join('');
        const at = text.length === 0 ? 0 : cut % text.length;
        const f = new AsciicastOutputFilter();
        const out = f.push(text.slice(0, at)) + f.push(text.slice(at));
        expect(out).toBe(neutraliseTerminalOutput(text));
        expect(play(out)).toMatchObject({ stringStates: 0, replies: 0, titles: 0 });
      }),
      { numRuns: 400, seed: 23 },
    );
  });
});

describe('toAsciicast neutralises by default; raw keeps the stream', () => {
  const enc = (s: string): Uint8Array => new TextEncoder().encode(s);
  const t0 = Date.UTC(2026, 11, 1);
  // The OSC 52 is split between two output entries.
  const entries: TranscriptEntry[] = [
    { seq: 1, time: t0, kind: 'output', data: enc('$ cat notes\r\n\x1b]52;c;cm0gLXJmIH4=') },
    { seq: 2, time: t0 + 5, kind: 'output', data: enc('\x07\x1bPtmux;\x1b\x1b]2;owned\x07\x1b\\done\r\n') },
  ];

  it('the default recording holds neither the clipboard write nor the passthrough', () => {
    const cast = toAsciicast(entries, { cols: 40, rows: 6 });
    const output = cast.events.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
    expect(output).toBe('$ cat notes\r\ndone\r\n');
  });

  it('raw: true keeps them word for word', () => {
    const cast = toAsciicast(entries, { cols: 40, rows: 6, raw: true });
    const output = cast.events.filter((e) => e[1] === 'o').map((e) => e[2]).join('');
    expect(output).toContain('\x1b]52;c;cm0gLXJmIH4=\x07');
    expect(output).toContain('\x1bPtmux;\x1b\x1b]2;owned\x07\x1b\\');
  });
});
