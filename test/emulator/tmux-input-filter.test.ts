/**
 * The input filter is tmux 3.3a's parser (input.c) in front of the emulator: each row below is a
 * behaviour of tmux the emulator must not see differently (the differential fuzzer checks them
 * against real tmux; here they are pinned without one). Then the properties a byte filter owes the
 * stream: the output does not depend on how the bytes were split, and a string sequence costs no
 * memory however long it runs.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TmuxInputFilter } from '../../lib/emulator/input/tmux-input-filter.js';
import { caseBytes, outputCase, unescapeBytes } from '../../tools/output-cases.js';

const text = (b: Uint8Array): string => Buffer.from(b).toString('latin1');

function filtered(input: string): string {
  return text(new TmuxInputFilter().push(unescapeBytes(input)));
}

describe('TmuxInputFilter: what tmux acts on, canonical, and nothing else', () => {
  it.each([
    ['plain text and the C0 controls tmux executes', 'ab\\x08\\x09c\\x0d\\x0a\\x0e\\x0f', 'ab\x08\x09c\x0d\x0a\x0e\x0f'],
    ['VT and FF are line feeds; NUL, BEL and the other C0 controls do nothing', 'a\\x0b\\x0c\\x00\\x07\\x05\\x1cb', 'a\x0a\x0ab'],
    ['DEL is ignored', 'a\\x7f\\x7fb', 'ab'],
    ['8-bit C1 introduces nothing (0x9b is not CSI)', 'a\\x9b31mb', 'a31mb'],
    ['UTF-8-encoded C1 is unprintable and dropped (U+009B is not CSI)', 'a\\xc2\\x9b31mb', 'a31mb'],
    ["screen's window rename ESC k ... ST is swallowed", '\\x1bkTITLE\\x1b\\\\abc', 'abc'],
    ['OSC ends on BEL or at any ESC', '\\x1b]0;t\\x07x\\x1b]2;u\\x1b[31my', 'x\x1b[31my'],
    ['APC is not ended by BEL', '\\x1b_apc\\x07more\\x1b\\\\x', 'x'],
    ['PM and SOS are swallowed to ST', '\\x1b^pm\\x1b\\\\\\x1bXsos\\x1b\\\\x', 'x'],
    ['DCS ends only at ESC \\: CAN and SUB inside it are data', '\\x1bPq\\x18abc\\x1a\\x1b\\\\x', 'x'],
    ['DCS tmux; passthrough reaches nothing', '\\x1bPtmux;\\x1b\\x1b]52;c;aGk=\\x07\\x1b\\\\x', 'x'],
    ['CAN cancels a CSI', '\\x1b[31\\x18m', 'm'],
    ['a CSI with more than 63 parameter bytes is ignored', `\\x1b[${'1;'.repeat(32)}31mX`, 'X'],
    ['a CSI with 24 values is ignored, 23 are kept', `\\x1b[${'0;'.repeat(23)}1m\\x1b[${'0;'.repeat(22)}1m`, `\x1b[${'0;'.repeat(22)}1m`],
    ['a value past INT_MAX voids the sequence', '\\x1b[2147483648mX\\x1b[2147483647C', 'X\x1b[10000C'],
    ['sequences tmux has no entry for are ignored (CHT, HPR, VPR, DECSED, DECSEL, SL, SR, DECIC, DECDC, DECSTR, DECSCA)', '\\x1b[I\\x1b[2a\\x1b[2e\\x1b[?2J\\x1b[?1K\\x1b[2 @\\x1b[2 A\\x1b[2\'}\\x1b[2\'~\\x1b[!p\\x1b[1"qX', 'X'],
    ['LNM (CSI 20 h) does not exist in tmux', '\\x1b[20hX', 'X'],
    ['modes come one per sequence; unknown ones are dropped', '\\x1b[?1;5;25;1049hX', '\x1b[?1h\x1b[?25h\x1b[?1049hX'],
    ['DECCOLM clears the screen from home (it never resizes)', '\\x1b[?3h', '\x1b[H\x1b[2J'],
    ['replies and reports are tmux business: DA, DSR, XTVERSION, window ops', '\\x1b[c\\x1b[>c\\x1b[6n\\x1b[>q\\x1b[18tX', 'X'],
    ['charsets: only DEC graphics and ASCII, for G0 and G1', '\\x1b(A\\x1b(0\\x1b)B\\x1b*0\\x1b+0X', '\x1b(0\x1b)BX'],
    ['unknown ESC finals are ignored', '\\x1bn\\x1bo\\x1b|\\x1b#3\\x1b%GX', 'X'],
    ['REP repeats the last ASCII character (sent in the mirror\'s private form)', 'a\\x1b[3b', 'a\x1b[<97;3b'],
    ['REP after anything but a printed ASCII character does nothing', 'a\\x0d\\x1b[3b\\xc3\\xa9\\x1b[2b', 'a\x0d\xc3\xa9'],
    ['counts are clamped (xterm loops n times for CBT)', '\\x1b[2147483647Z', '\x1b[10000Z'],
    ['SGR: 6 blinks, 21 is a double underline, unknown codes vanish', '\\x1b[6;21;26;51;73m', '\x1b[5;21m'],
    ['SGR: a 256-colour index past 255 sets the default colour', '\\x1b[38;5;300;48;5;256m', '\x1b[39;49m'],
    ['SGR: a bad RGB triple leaves its values to be read as codes', '\\x1b[38;2;300;1;2m', '\x1b[1;2m'],
    ['SGR: colon forms', '\\x1b[38:2::1:2:3;48:5:17;4:3m', '\x1b[38;2;1;2;3;48;5;17;4:3m'],
    ['SGR: an empty value is a reset', '\\x1b[;1m', '\x1b[0;1m'],
  ])('%s', (_name, input, expected) => {
    expect(filtered(input)).toBe(expected);
  });

  it('drops invalid and unprintable UTF-8 as tmux does (no replacement character)', () => {
    expect(filtered('\\xe4\\xb8A')).toBe('A'); // cut by a printable
    expect(filtered('\\xc3\\xc3\\xa9x')).toBe('x'); // a lead byte where a continuation belongs spoils the character
    expect(filtered('\\xc0\\x80\\xe0\\x80\\x80\\xed\\xa0\\x80\\xf4\\x90\\x80\\x80\\xf8x')).toBe('x'); // overlong, surrogate, too large, never valid
    expect(filtered('\\xcd\\xb8x')).toBe('x'); // U+0378, unassigned: glibc's wcwidth says -1
    expect(filtered('\\xe4\\xb8\\xad\\xf0\\x9f\\x98\\x80')).toBe('\xe4\xb8\xad\xf0\x9f\x98\x80');
  });

  it('keeps a UTF-8 character open across an escape sequence, as tmux does', () => {
    expect(filtered('\\xe4\\xb8\\x1b[1m\\xad')).toBe('\x1b[1m\xe4\xb8\xad');
    // but a C0 control or a printable character ends it
    expect(filtered('\\xe4\\xb8\\x0d\\xad')).toBe('\x0d');
  });

  it('gives the same output however the stream is split (property)', () => {
    fc.assert(
      fc.property(outputCase, fc.array(fc.nat(), { maxLength: 12 }), (c, cuts) => {
        const bytes = caseBytes(c);
        const whole = text(new TmuxInputFilter().push(bytes));
        const at = [...new Set(cuts.map((n) => (bytes.length === 0 ? 0 : n % bytes.length)))].sort((a, b) => a - b);
        const split = new TmuxInputFilter();
        let out = '';
        let from = 0;
        for (const cut of [...at, bytes.length]) {
          out += text(split.push(bytes.subarray(from, cut)));
          from = cut;
        }
        expect(out).toBe(whole);
      }),
      { numRuns: 300, seed: 17 },
    );
  });

  it('keeps its state across a chunk of plain text passed whole: REP, a character left open', () => {
    const f = new TmuxInputFilter();
    const chunk = unescapeBytes('ab');
    expect(f.push(chunk)).toBe(chunk);
    expect(text(f.push(unescapeBytes('\\x1b[2b')))).toBe('\x1b[<98;2b');
    expect(text(f.push(unescapeBytes('x\\x0d\\x0a')))).toBe('x\r\n');
    expect(text(f.push(unescapeBytes('\\x1b[2b')))).toBe('');
    expect(text(f.push(unescapeBytes('\\xe4\\xb8')))).toBe('');
    expect(text(f.push(unescapeBytes('z')))).toBe('z');
    expect(text(f.push(unescapeBytes('\\xad')))).toBe('');
  });

  it('buffers nothing of a string sequence: 20 MB of unterminated OSC then DCS, then the terminator', () => {
    const f = new TmuxInputFilter();
    const chunk = new Uint8Array(64 * 1024).fill(0x41);
    let emitted = f.push(unescapeBytes('\\x1b]0;')).length;
    for (let i = 0; i < 320; i++) emitted += f.push(chunk).length;
    expect(f.inString).toBe(true);
    emitted += f.push(unescapeBytes('\\x07\\x1bP1$r')).length;
    for (let i = 0; i < 160; i++) emitted += f.push(chunk).length;
    expect(emitted).toBe(0);
    expect(text(f.push(unescapeBytes('\\x1b\\\\after')))).toBe('after');
    expect(f.inString).toBe(false);
  });

  it('after reset() the parser is in the ground state with nothing open', () => {
    const f = new TmuxInputFilter();
    f.push(unescapeBytes('a\\x1b]0;unterminated\\xe4'));
    expect(f.inSequence).toBe(true);
    f.reset();
    expect(f.inSequence).toBe(false);
    expect(text(f.push(unescapeBytes('\\xb8\\xadb\\x1b[2b')))).toBe('b\x1b[<98;2b');
  });
});
