/**
 * fast-check arbitraries for what a terminal program can print: the generator of the
 * differential fuzzer (tools/differential-fuzz.ts). A case is a pane size and a list of pieces,
 * each piece the bytes of one family: text, UTF-8 of every kind (wide, combining, emoji, joiners,
 * unassigned, invalid), C0, C1 as 8-bit bytes and as UTF-8, escape sequences of every family
 * (ESC, CSI with odd parameters and intermediates, OSC, DCS, APC, PM, SOS, tmux's `ESC k`
 * rename, DCS tmux; passthrough), every string terminator (BEL, ESC \, 8-bit and UTF-8 ST,
 * CAN/SUB, another ESC, none), mode changes (alternate screen, origin mode, margins, insert,
 * wrap, tabs, charsets) and sequences cut in the middle. Shrinking removes and simplifies pieces,
 * so a divergence shrinks to the few pieces that cause it.
 */
import fc from 'fast-check';

export interface OutputCase {
  readonly cols: number;
  readonly rows: number;
  /** Kept apart so that shrinking drops whole pieces; the stream is their concatenation. */
  readonly pieces: readonly Uint8Array[];
}

export function caseBytes(c: OutputCase): Uint8Array {
  const out = new Uint8Array(c.pieces.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of c.pieces) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

const encoder = new TextEncoder();

/** A string whose chars are all < 0x100, one byte each (for 8-bit controls and raw bytes). */
function latin1(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

function concat(...parts: Uint8Array[]): Uint8Array {
  return caseBytes({ cols: 0, rows: 0, pieces: parts });
}

/** Encodes any code point as UTF-8, surrogates included (as the 3-byte form a careless encoder writes). */
function utf8Of(cp: number): Uint8Array {
  if (cp < 0x80) return Uint8Array.of(cp);
  if (cp < 0x800) return Uint8Array.of(0xc0 | (cp >> 6), 0x80 | (cp & 0x3f));
  if (cp < 0x10000) return Uint8Array.of(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
  return Uint8Array.of(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f));
}

/** The pane sizes cases use (small ones make wrapping, scrolling and edges frequent). */
export const OUTPUT_CASE_SIZES: readonly (readonly [cols: number, rows: number])[] = [
  [10, 4],
  [20, 6],
  [33, 9],
  [80, 24],
];

const asciiText = fc.string({ unit: fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCXYZ0123456789 .,-_/#$%&*+=:;!?~`|@^\'"()[]{}<>\\'), minLength: 1, maxLength: 14 }).map((s) => encoder.encode(s));

const newline = fc.constantFrom('\r\n', '\n', '\r', '\r\n\r\n', '\n\n\n').map(latin1);

/** Code points by the behaviour they test (widths, joining, dropping). */
const codePoint = fc.oneof(
  { arbitrary: fc.integer({ min: 0x4e00, max: 0x9fff }), weight: 4 }, // CJK: width 2
  { arbitrary: fc.integer({ min: 0xac00, max: 0xd7a3 }), weight: 1 }, // Hangul syllables
  { arbitrary: fc.integer({ min: 0xff01, max: 0xff60 }), weight: 1 }, // fullwidth forms
  { arbitrary: fc.integer({ min: 0x1f300, max: 0x1faff }), weight: 4 }, // emoji, newer ones too
  { arbitrary: fc.integer({ min: 0x2600, max: 0x27bf }), weight: 2 }, // symbols, some emoji-presentation
  { arbitrary: fc.integer({ min: 0x0300, max: 0x036f }), weight: 4 }, // combining marks
  { arbitrary: fc.constantFrom(0x200d, 0xfe0f, 0xfe0e, 0x200b, 0x200c, 0x200e, 0x200f, 0x2028, 0x2029, 0x202e, 0x2060, 0x2061, 0xfeff, 0x00ad, 0x034f, 0x1160, 0x115f, 0x3099, 0x20e3), weight: 4 },
  { arbitrary: fc.integer({ min: 0x1f3fb, max: 0x1f3ff }), weight: 1 }, // skin tones
  { arbitrary: fc.integer({ min: 0x1f1e6, max: 0x1f1ff }), weight: 1 }, // regional indicators
  { arbitrary: fc.integer({ min: 0x1100, max: 0x11ff }), weight: 1 }, // Hangul jamo (medial vowels are width 0)
  { arbitrary: fc.integer({ min: 0x0080, max: 0x00ff }), weight: 3 }, // C1 as UTF-8, Latin-1
  { arbitrary: fc.constantFrom(0x0378, 0x0530, 0x0e3b, 0x2fffd, 0xe000, 0xf8ff, 0x10fffd, 0xfffe, 0xffff, 0xfffd, 0x31350, 0x1b11f, 0x1fa7c, 0x16fe4), weight: 2 }, // unassigned, private use, noncharacters, tables that differ
  { arbitrary: fc.integer({ min: 0xa0, max: 0x10ffff }), weight: 2 }, // anything
);

const unicodeText = fc.array(codePoint, { minLength: 1, maxLength: 6 }).map((cps) => concat(...cps.map((cp) => utf8Of(cp))));

/** Bytes that are not valid UTF-8: lone continuations, cut sequences, overlongs, surrogates, too large. */
const invalidUtf8 = fc.oneof(
  fc.integer({ min: 0x80, max: 0xbf }).map((b) => Uint8Array.of(b)),
  fc.constantFrom('\xc3', '\xe4\xb8', '\xf0\x9f\x98', '\xc0\x80', '\xc1\xbf', '\xe0\x80\x80', '\xed\xa0\x80', '\xed\xbf\xbf', '\xf4\x90\x80\x80', '\xf5\x80\x80\x80', '\xf8\x88\x80\x80\x80', '\xfe', '\xff', '\xc3\xc3\xa9', '\xe4\xb8A').map(latin1),
  fc.uint8Array({ min: 0x80, max: 0xff, minLength: 1, maxLength: 4 }),
);

const c0 = fc.oneof(fc.integer({ min: 0, max: 0x1f }), fc.constant(0x7f)).map((b) => Uint8Array.of(b));

/** An 8-bit C1 control alone, or introducing what it introduces. */
const c1Byte = fc.integer({ min: 0x80, max: 0x9f }).map((b) => Uint8Array.of(b));
const c1Utf8 = fc.integer({ min: 0x80, max: 0x9f }).map((cp) => utf8Of(cp));

const intermediates = fc.array(fc.integer({ min: 0x20, max: 0x2f }), { maxLength: 2 }).map((bs) => Uint8Array.from(bs));

const escSequence = fc.oneof(
  fc.constantFrom('7', '8', 'D', 'E', 'H', 'M', '=', '>', 'c', 'n', 'o', '|', '}', '~', 'N', 'O', 'Z', 'V', 'W', '6', '9', 'F', 'l', 'm', '\\', '#8', '#3', '#6', '%G', '%@', '(0', '(B', '(A', '(<', '(4', '(K', '(%5', ')0', ')B', ')A', '*0', '+0', '-A', '.A', '/A', ' F', ' G').map((s) => latin1(`\x1b${s}`)),
  fc.tuple(intermediates, fc.integer({ min: 0x30, max: 0x7e })).map(([i, f]) => concat(Uint8Array.of(0x1b), i, Uint8Array.of(f))),
);

/** One CSI parameter as text: empty, small, big, beyond INT_MAX, leading zeros, sub-parameters. */
const csiParam = fc.oneof(
  { arbitrary: fc.integer({ min: 0, max: 12 }).map(String), weight: 6 },
  { arbitrary: fc.constant(''), weight: 2 },
  { arbitrary: fc.integer({ min: 13, max: 300 }).map(String), weight: 2 },
  { arbitrary: fc.constantFrom('65535', '65536', '2147483647', '2147483648', '99999999999', '0000000000000000000001', '007'), weight: 1 },
  { arbitrary: fc.array(fc.oneof(fc.constant(''), fc.integer({ min: 0, max: 260 }).map(String)), { minLength: 2, maxLength: 6 }).map((ps) => ps.join(':')), weight: 1 },
);

const csiFinal = fc.oneof(
  { arbitrary: fc.constantFrom(...'@ABCDEFGHIJKLMPSTXZ`abcdefghlmnpqrstuxz{|}~'), weight: 5 },
  { arbitrary: fc.integer({ min: 0x40, max: 0x7e }).map((b) => String.fromCharCode(b)), weight: 1 },
);

const csiIntroducer = fc.oneof({ arbitrary: fc.constant('\x1b['), weight: 8 }, { arbitrary: fc.constant('\x9b'), weight: 1 }, { arbitrary: fc.constant('\xc2\x9b'), weight: 1 }).map(latin1);

/** Any CSI: an optional private marker, parameters, intermediates, a final byte. */
const randomCsi = fc
  .tuple(csiIntroducer, fc.constantFrom('', '', '', '?', '>', '<', '=', '?>'), fc.array(csiParam, { maxLength: 6 }), intermediates, csiFinal)
  .map(([intro, marker, params, inter, final]) => concat(intro, latin1(marker + params.join(';')), inter, latin1(final)));

/** A CSI whose parameter string is long (tmux drops parameter strings over 63 bytes and lists over 24). */
const longCsi = fc
  .tuple(fc.integer({ min: 20, max: 40 }), fc.constantFrom('0', '1', '31', '44', '', '007'), fc.constantFrom('m', 'H', 'r', 'J', 'h'))
  .map(([n, p, f]) => latin1(`\x1b[${Array.from({ length: n }, () => p).join(';')}${f}`));

const small = fc.integer({ min: 0, max: 30 });
const sgrCode = fc.oneof(
  fc.integer({ min: 0, max: 109 }).map(String),
  fc.tuple(fc.constantFrom('38', '48', '58'), fc.integer({ min: 0, max: 300 })).map(([c, n]) => `${c};5;${n}`),
  fc.tuple(fc.constantFrom('38', '48', '58'), fc.integer({ min: 0, max: 300 }), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([c, r, g, b]) => `${c};2;${r};${g};${b}`),
  fc.tuple(fc.constantFrom('38', '48', '58'), fc.integer({ min: 0, max: 255 })).map(([c, n]) => `${c}:5:${n}`),
  fc.tuple(fc.constantFrom('38', '48', '58'), fc.integer({ min: 0, max: 255 }), fc.integer({ min: 0, max: 255 })).map(([c, r, g]) => `${c}:2::${r}:${g}:7`),
  fc.tuple(fc.constantFrom('38', '48'), fc.integer({ min: 0, max: 255 })).map(([c, r]) => `${c}:2:${r}:1:2`),
  fc.integer({ min: 0, max: 6 }).map((n) => `4:${n}`),
  fc.constantFrom('38', '48', '38;5', '38;2;1', '38;2;1;2', '58;2;1;2;3', '38;9;1', '48;5;', '38;;1'),
);

const modeNumber = fc.constantFrom('1', '2', '3', '4', '5', '6', '7', '8', '9', '12', '20', '25', '34', '40', '45', '47', '66', '67', '69', '80', '95', '1000', '1001', '1002', '1003', '1004', '1005', '1006', '1007', '1015', '1016', '1034', '1035', '1036', '1039', '1047', '1048', '1049', '2004', '2026', '2027');

/** The sequences a program really uses, with parameters that exercise edges. */
const knownCsi = fc.oneof(
  fc.tuple(small, small).map(([r, c]) => `\x1b[${r};${c}H`),
  fc.tuple(small, small).map(([r, c]) => `\x1b[${r};${c}f`),
  fc.tuple(fc.constantFrom('A', 'B', 'C', 'D', 'E', 'F', 'G', '`', 'a', 'd', 'e', 'I', 'Z', '@', 'P', 'X', 'L', 'M', 'S', 'T', 'b'), fc.oneof(small.map(String), fc.constant(''))).map(([f, n]) => `\x1b[${n}${f}`),
  fc.tuple(fc.constantFrom('J', 'K', '?J', '?K'), fc.constantFrom('', '0', '1', '2', '3')).map(([f, n]) => (f.startsWith('?') ? `\x1b[?${n}${f[1]}` : `\x1b[${n}${f}`)),
  fc.array(sgrCode, { maxLength: 4 }).map((cs) => `\x1b[${cs.join(';')}m`),
  fc.tuple(fc.constantFrom('?', ''), fc.array(modeNumber, { minLength: 1, maxLength: 3 }), fc.constantFrom('h', 'l')).map(([p, ms, f]) => `\x1b[${p}${ms.join(';')}${f}`),
  fc.tuple(small, small).map(([t, b]) => `\x1b[${t};${b}r`),
  fc.constantFrom('\x1b[r', '\x1b[s', '\x1b[u', '\x1b[g', '\x1b[0g', '\x1b[3g', '\x1b[!p', '\x1b[1"q', '\x1b[0"q', '\x1b[?25$p', '\x1b[c', '\x1b[>c', '\x1b[=c', '\x1b[5n', '\x1b[6n', '\x1b[?6n', '\x1b[>q', '\x1b[2 q', '\x1b[>4;1m', '\x1b[>4n', '\x1b[18t', '\x1b[22;0t', '\x1b[23;0t', '\x1b[8;5;5t', '\x1b[2\'}', '\x1b[2\'~', '\x1b[2 @', '\x1b[2 A', '\x1b[3;5s', '\x1b[?69h\x1b[3;5s', '\x1b[1$x', '\x1b[*x', '\x1b[2*y', '\x1b[1;2;3;4$z', '\x1b[i', '\x1b[4i', '\x1b[5i'),
).map(latin1);

/** A string sequence's terminator, or none at all. */
const terminator = fc.constantFrom('\x07', '\x1b\\', '\x9c', '\xc2\x9c', '\x1b', '\x18', '\x1a', '\x1bX', '', '\x1b[31m').map(latin1);

const stringBody = fc.oneof(
  asciiText,
  unicodeText,
  fc.uint8Array({ min: 0, max: 0xff, maxLength: 12 }),
  fc.constantFrom('0;title', '2;win', '1;icon', '4;1;rgb:ff/00/00', '8;;http://x/', '8;id=1;http://x/\x07link\x1b]8;;', '10;?', '11;#000000', '52;c;aGVsbG8=', '52;c;?', '7;file:///tmp', '104', '112', '133;A', '1337;SetMark', '777;notify;a;b', 'l', ';', '').map((s) => encoder.encode(s)),
);

const introducers = {
  osc: ['\x1b]', '\x9d', '\xc2\x9d'],
  dcs: ['\x1bP', '\x90', '\xc2\x90'],
  apc: ['\x1b_', '\x9f', '\xc2\x9f'],
  pm: ['\x1b^', '\x9e', '\xc2\x9e'],
  sos: ['\x1bX', '\x98', '\xc2\x98'],
  rename: ['\x1bk'],
} as const;

const stringSequence = fc
  .tuple(fc.constantFrom(...Object.values(introducers).flat()), stringBody, terminator)
  .map(([intro, body, end]) => concat(latin1(intro), body, end));

const dcsSequence = fc
  .tuple(
    fc.constantFrom(...introducers.dcs),
    fc.constantFrom('tmux;', 'tmux;\x1b\x1b]0;x\x07', 'tmux;\x1b\x1b[31mred', '$qm', '$q"p', '+q544e', '1$r0m', '0;1|17/ab', 'q#0;2;0;0;0#0~~', '>|', '1;2;3', '?1p', ':x', '=1s'),
    fc.oneof(asciiText, fc.constant(new Uint8Array(0))),
    terminator,
  )
  .map(([intro, head, body, end]) => concat(latin1(intro), latin1(head), body, end));

/** Mode and structure changes: screens, margins, origin, insert, wrap, tabs, charsets, resets. */
const modeChange = fc.oneof(
  fc.constantFrom('\x1b[?1049h', '\x1b[?1049l', '\x1b[?1047h', '\x1b[?1047l', '\x1b[?47h', '\x1b[?47l', '\x1b[?1048h', '\x1b[?1048l'),
  fc.constantFrom('\x1b[?6h', '\x1b[?6l', '\x1b[4h', '\x1b[4l', '\x1b[?7l', '\x1b[?7h', '\x1b[?25l', '\x1b[?25h', '\x1b[20h', '\x1b[20l', '\x1b[?5h', '\x1b[?3h', '\x1b[?3l', '\x1b[?45h', '\x1b[?66h', '\x1b[?1h', '\x1b='),
  fc.constantFrom('\x1bH', '\x1b[g', '\x1b[3g', '\t', '\t\t\t', '\x1b[2I', '\x1b[2Z', '\x1b[W', '\x1b[2W', '\x1b[5W', '\x1b[?5W'),
  fc.constantFrom('\x1b7', '\x1b8', '\x1b[s', '\x1b[u', '\x1b#8', '\x1bc', '\x1bD', '\x1bE', '\x1bM', '\x1b(0', '\x1b(B', '\x1b)0', '\x1b)B', '\x0e', '\x0f', '\x1b(0lqqk\x1b(B', '\x1b)0\x0emqj\x0f', '\x1bn', '\x1b*0\x1bn', '\x1b%G', '\x1b[!p', '\x1b[?1l'),
  fc.tuple(small, small).map(([t, b]) => `\x1b[${t};${b}r`),
).map(latin1);

/**
 * A flood of plain lines (printable ASCII with CRLF, LF alone or no line ends), long enough to
 * scroll more than the screen and the lab's history (200) several times over in the larger
 * cases: the mirror's fast-forward skips most of such a run when it comes in one batch. Line
 * lengths around the case widths make wraps, pending wraps and exact fits.
 */
const plainFlood = fc
  .record({
    lines: fc.integer({ min: 150, max: 700 }),
    lengths: fc.array(fc.integer({ min: 0, max: 90 }), { minLength: 1, maxLength: 6 }),
    end: fc.constantFrom('\r\n', '\r\n', '\n', '\r', '', '\n\r'),
    seed: fc.nat(),
  })
  .map(({ lines, lengths, end, seed }) => {
    const alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/= .-';
    let out = '';
    for (let i = 0; i < lines; i++) {
      const n = lengths[i % lengths.length] as number;
      for (let k = 0; k < n; k++) out += alphabet[(seed + i * 31 + k * 7) % alphabet.length];
      out += end;
    }
    return latin1(out);
  });

const piece = fc.oneof(
  { arbitrary: asciiText, weight: 20 },
  { arbitrary: newline, weight: 8 },
  { arbitrary: unicodeText, weight: 10 },
  { arbitrary: invalidUtf8, weight: 3 },
  { arbitrary: c0, weight: 4 },
  { arbitrary: c1Byte, weight: 2 },
  { arbitrary: c1Utf8, weight: 2 },
  { arbitrary: escSequence, weight: 5 },
  { arbitrary: randomCsi, weight: 5 },
  { arbitrary: longCsi, weight: 1 },
  { arbitrary: knownCsi, weight: 16 },
  { arbitrary: stringSequence, weight: 5 },
  { arbitrary: dcsSequence, weight: 2 },
  { arbitrary: modeChange, weight: 10 },
  { arbitrary: plainFlood, weight: 1 },
);

/** Any piece cut short at a random point (the rest of the stream continues the cut sequence). */
const cutPiece = fc.tuple(piece, fc.nat()).map(([p, at]) => (p.length > 1 ? p.subarray(0, 1 + (at % (p.length - 1))) : p));

export const outputPiece: fc.Arbitrary<Uint8Array> = fc.oneof({ arbitrary: piece, weight: 9 }, { arbitrary: cutPiece, weight: 1 });

const generalCase: fc.Arbitrary<OutputCase> = fc
  .tuple(fc.constantFrom(...OUTPUT_CASE_SIZES), fc.array(outputPiece, { minLength: 1, maxLength: 80, size: 'large' }))
  .map(([[cols, rows], pieces]) => ({ cols, rows, pieces }));

/**
 * Aimed at the mirror's fast-forward: state set up before a flood (modes, margins, the alternate
 * screen, a pen, a cursor mid-line or at a pending wrap), the flood, then more of anything and
 * maybe a second flood, so that every condition the fast-forward checks is met and broken.
 */
const setUp = fc.oneof({ arbitrary: modeChange, weight: 4 }, { arbitrary: knownCsi, weight: 3 }, { arbitrary: outputPiece, weight: 3 });
const fastForwardCase: fc.Arbitrary<OutputCase> = fc
  .tuple(
    fc.constantFrom(...OUTPUT_CASE_SIZES),
    fc.array(setUp, { maxLength: 8 }),
    plainFlood,
    fc.array(outputPiece, { maxLength: 8 }),
    fc.option(plainFlood, { nil: undefined }),
  )
  .map(([[cols, rows], before, flood, after, second]) => ({ cols, rows, pieces: [...before, flood, ...after, ...(second ? [second] : [])] }));

export const outputCase: fc.Arbitrary<OutputCase> = fc.oneof({ arbitrary: generalCase, weight: 4 }, { arbitrary: fastForwardCase, weight: 1 });

/** Bytes as a readable string: printable ASCII kept, `\` doubled, everything else `\xHH`. */
export function escapeBytes(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b === 0x5c ? '\\\\' : b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : `\\x${b.toString(16).padStart(2, '0')}`;
  return s;
}

/** The inverse of escapeBytes. */
export function unescapeBytes(s: string): Uint8Array {
  const out: number[] = [];
  for (let i = 0; i < s.length; i++) {
    const ch = s.charCodeAt(i);
    if (ch !== 0x5c) {
      if (ch > 0x7e || ch < 0x20) throw new Error(`unescaped character ${ch} at ${i}`);
      out.push(ch);
    } else if (s[i + 1] === '\\') {
      out.push(0x5c);
      i++;
    } else if (s[i + 1] === 'x') {
      out.push(Number.parseInt(s.slice(i + 2, i + 4), 16));
      i += 3;
    } else throw new Error(`bad escape at ${i}`);
  }
  return Uint8Array.from(out);
}
