/**
 * Redaction of what a person sees: every corpus format plain, styled (SGR before, inside, after),
 * soft-wrapped and split across chunks, through the views of each sink (plain text, terminal
 * stream, text rows with wrap flags, HTML), with the screens produced by the real emulator and its
 * serializer (the same code a read runs; tmux is added by test/security/redaction-sinks.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { Mirror } from '../../lib/emulator/mirror.js';
import { REDACTION_KINDS, findSecrets, redactArgv, redactScreen, redactSecrets, redactTerminalChunks, redactTerminalText, redactionMarker, secretAcrossTop, type ScreenFormat } from '../../lib/policy/redact.js';
import { FORMATS, NEGATIVES, leakedPieces, splitPoint, styled, wrappedAt, type SecretFormat, type Style } from '../security/redaction-corpus.js';

const STYLES: readonly Style[] = ['before', 'inside', 'after'];
const encoder = new TextEncoder();

/** The corpus text as a program prints it: lines end in CRLF (a tty's onlcr). */
const printed = (text: string): string => text.replace(/\n/g, '\r\n');

async function screenOf(bytes: string, cols: number, rows = 60): Promise<Mirror> {
  const m = new Mirror({ cols, rows, scrollback: 1000 });
  m.write(encoder.encode(bytes));
  await m.whenParsed();
  return m;
}

function expectNoLeak(format: SecretFormat, text: string, where: string): void {
  expect(leakedPieces(format, text), `${format.id} leaked in ${where}`).toEqual([]);
}

describe('the corpus', () => {
  it('has at least 40 formats, each a known kind, ids unique', () => {
    expect(FORMATS.length).toBeGreaterThanOrEqual(40);
    expect(new Set(FORMATS.map((f) => f.id)).size).toBe(FORMATS.length);
    for (const f of FORMATS) expect(REDACTION_KINDS).toContain(f.kind);
  });

  it.each(FORMATS.filter((f) => !f.text.includes('\x1b')))('$id: plain text, named $kind', (format) => {
    const r = redactSecrets(format.text);
    expectNoLeak(format, r.text, 'plain text');
    expect(r.text).toContain(redactionMarker(format.kind));
    expect(redactSecrets(r.text)).toEqual({ text: r.text, count: 0 });
  });
});

describe('terminal streams: styled output', () => {
  it.each(FORMATS)('$id: as printed, and with SGR before, inside and after the secret', (format) => {
    for (const text of [format.text, ...STYLES.map((s) => styled(format, s))]) {
      const r = redactTerminalText(printed(text));
      expectNoLeak(format, r.text, JSON.stringify(text.slice(0, 40)));
      expect(r.text).toContain(redactionMarker(format.kind));
      // Redacting again finds nothing.
      expect(redactTerminalText(r.text)).toEqual({ text: r.text, count: 0 });
    }
  });

  it('keeps the escapes of a redacted range after its marker, and every escape outside it', () => {
    const ghp = FORMATS.find((f) => f.id === 'github-classic') as SecretFormat;
    const token = ghp.secrets[0] as string;
    const r = redactTerminalText(`a \x1b[32m${token.slice(0, 9)}\x1b[1m${token.slice(9)}\x1b[0m b`);
    expect(r).toEqual({ text: `a \x1b[32m${redactionMarker('github-token')}\x1b[1m\x1b[0m b`, count: 1 });
  });

  it('redacts the payload of a control string on its own (a title, a hyperlink)', () => {
    const url = FORMATS.find((f) => f.id === 'postgres-url') as SecretFormat;
    const bearer = FORMATS.find((f) => f.id === 'authorization-bearer') as SecretFormat;
    const stream = `\x1b]0;${bearer.text}\x07$ \x1b]8;;${url.text.slice('DATABASE_URL='.length)}\x1b\\db\x1b]8;;\x1b\\ ok`;
    const r = redactTerminalText(stream);
    expectNoLeak(url, r.text, 'OSC 8');
    expectNoLeak(bearer, r.text, 'OSC 0');
    expect(r.count).toBe(2);
    expect(r.text).toContain('\x1b]0;curl -H "Authorization: Bearer [REDACTED:authorization]"');
    expect(r.text).toMatch(/\x1b\\db\x1b\]8;;\x1b\\ ok$/);
  });

  it('takes a cursor movement between two tokens as a break, not as one word', () => {
    const npm = 'npm_' + 'Ab1'.repeat(12);
    // Exactly 36 characters: glued to the next word it would be no npm token at all.
    const r = redactTerminalText(`${npm}\x1b[2;1Hxyz`);
    expect(r.text).toBe(`${redactionMarker('npm-token')}\x1b[2;1Hxyz`);
  });
});

describe('terminal streams: a secret split across chunks', () => {
  it.each(FORMATS)('$id: cut in the middle of the secret, and at every 7th offset', (format) => {
    const text = printed(styled(format, 'before'));
    const whole = redactTerminalText(text);
    const cuts = new Set([splitPoint(format) + '\x1b[1;32m'.length]);
    for (let i = 1; i < text.length; i += 7) cuts.add(i);
    for (const cut of cuts) {
      const r = redactTerminalChunks([text.slice(0, cut), text.slice(cut)]);
      expect(r.chunks).toHaveLength(2);
      for (const c of r.chunks) expectNoLeak(format, c, `a chunk cut at ${cut}`);
      expect(r.chunks.join('')).toBe(whole.text);
      expect(r.count).toBe(whole.count);
    }
  });

  it('keeps empty chunks and chunks without secrets as they are', () => {
    expect(redactTerminalChunks(['', 'plain', '', '\x1b[1mbold\x1b[0m'])).toEqual({ chunks: ['', 'plain', '', '\x1b[1mbold\x1b[0m'], count: 0 });
    expect(redactTerminalChunks([])).toEqual({ chunks: [], count: 0 });
  });
});

describe('screens from the emulator: text rows, the ANSI and the HTML serialization', () => {
  const read = (m: Mirror, format: ScreenFormat): string => {
    const snap = m.snapshot({ format, scrollback: 'all' });
    return redactScreen(snap.content, format, snap.rowBreaks).text;
  };

  for (const cols of [80, 40]) {
    it.each(FORMATS)(`$id: wrapped at ${cols} columns, plain and styled`, async (format) => {
      for (const text of [wrappedAt(format, cols), styled(format, 'before'), styled(format, 'inside'), styled(format, 'after')]) {
        const m = await screenOf(`${printed(text)}\r\n`, cols);
        try {
          for (const f of ['text', 'ansi', 'html'] as const) {
            const out = read(m, f);
            expectNoLeak(format, out, `${f} at ${cols} columns`);
            expect(out).toContain(`[REDACTED:`);
          }
        } finally {
          m.dispose();
        }
      }
    });
  }

  it('keeps the rows of a text screen when a secret wraps (the marker ends the first row)', async () => {
    const ghp = FORMATS.find((f) => f.id === 'github-classic') as SecretFormat;
    const m = await screenOf(`${wrappedAt(ghp, 40)}\r\nnext line`, 40, 5);
    try {
      const snap = m.snapshot({ format: 'text' });
      expect(snap.rowBreaks).toEqual(['line', 'wrap', 'line', 'line', 'line']);
      const r = redactScreen(snap.content, 'text', snap.rowBreaks);
      expect(r.text.split('\n')).toHaveLength(5);
      expect(r.text.split('\n')[0]).toMatch(/export GH_TOKEN=\[REDACTED:github-token\]$/);
      expect(r.text.split('\n')[2]).toBe('next line');
    } finally {
      m.dispose();
    }
  });

  it('sees through the serializer forcing a wrap where the colour changes at the margin', async () => {
    const ghp = FORMATS.find((f) => f.id === 'github-classic') as SecretFormat;
    const token = ghp.secrets[0] as string;
    // 20 columns: the token's 21st character starts row 2 with another background.
    const m = await screenOf(`${token.slice(0, 20)}\x1b[41m${token.slice(20)}\x1b[0m\r\n`, 20, 6);
    try {
      const ansi = m.snapshot({ format: 'ansi' }).content;
      expect(ansi).toContain('-\x1b[1D\x1b[1X');
      expectNoLeak(ghp, redactScreen(ansi, 'ansi').text, 'the forced wrap');
    } finally {
      m.dispose();
    }
  });

  it('decodes entities in HTML: &amp;sig= is a SAS signature', async () => {
    const sas = FORMATS.find((f) => f.id === 'azure-sas-url') as SecretFormat;
    const m = await screenOf(`${sas.text}\r\n`, 200, 3);
    try {
      const html = m.snapshot({ format: 'html' }).content;
      expect(html).toContain('&amp;sig=');
      const r = redactScreen(html, 'html');
      expectNoLeak(sas, r.text, 'html');
      expect(r.text).toContain('&amp;sig=[REDACTED:azure-sas-signature]');
    } finally {
      m.dispose();
    }
  });
});

describe('the top of a screen: what scrolled into history is context', () => {
  /** A read of the visible screen as Session.read does it: the rows above are context. */
  const readTop = (m: Mirror, format: ScreenFormat): string => {
    const wide = m.snapshot({ format: 'text', scrollback: 100 });
    const above = wide.scrollbackLines;
    const leading = above > 0 ? secretAcrossTop(wide.content, wide.rowBreaks, above) : undefined;
    const snap = m.snapshot({ format });
    return redactScreen(snap.content, format, snap.rowBreaks, leading).text;
  };
  const byId = (id: string): SecretFormat => FORMATS.find((f) => f.id === id) as SecretFormat;

  /** The keytool flag fills its row exactly: the password starts the next row. */
  const flagAtRowEnd = (format: SecretFormat, cols: number): string => {
    const head = 'keytool -storepass ';
    return `${' '.repeat(cols - head.length)}${head}${format.secrets[0] as string}`;
  };

  it.each([
    ['a token whose first row scrolled off', 'github-fine-grained', 40, wrappedAt],
    ['a key whose header scrolled off', 'pem-rsa', 80, wrappedAt],
    ['a value whose flag scrolled off', 'keytool', 40, flagAtRowEnd],
    ['a webhook whose URL prefix scrolled off', 'slack-webhook', 40, wrappedAt],
    ['a .netrc password whose machine line scrolled off', 'netrc-block', 80, wrappedAt],
  ] as const)('%s', async (_name, id, cols, layout) => {
    const format = byId(id);
    const text = printed(layout(format, cols));
    // Scroll until the secret's first line is just above the screen, then read each format.
    for (let top = 1; top <= text.split('\n').length + 1; top++) {
      const rows = 4;
      const m = await screenOf(`${text}\r\n`, cols, rows);
      try {
        m.write(encoder.encode('\r\n'.repeat(top)));
        await m.whenParsed();
        for (const f of ['text', 'ansi', 'html'] as const) expectNoLeak(format, readTop(m, f), `${f} after scrolling ${top}`);
      } finally {
        m.dispose();
      }
    }
  });

  it('leaves the top alone when nothing above it is a secret', async () => {
    const m = await screenOf(`${'plain line\r\n'.repeat(10)}last`, 20, 3);
    try {
      const wide = m.snapshot({ format: 'text', scrollback: 100 });
      expect(secretAcrossTop(wide.content, wide.rowBreaks, wide.scrollbackLines)).toBeUndefined();
    } finally {
      m.dispose();
    }
  });

  it('finds a key by its footer when its header is gone', () => {
    const pem = byId('pem-rsa');
    const headless = pem.text.split('\n').slice(2).join('\n');
    const r = redactSecrets(`$ tail -4 key.pem\n${headless}\n$ `);
    expectNoLeak(pem, r.text, 'a body under its footer');
    expect(r.text).toBe(`$ tail -4 key.pem\n${redactionMarker('private-key')}\n$ `);
  });
});

describe('ordinary text stays as it is', () => {
  it.each(NEGATIVES)('%s', async (_name, text) => {
    expect(findSecrets(text)).toEqual([]);
    expect(redactSecrets(text)).toEqual({ text, count: 0 });
    expect(redactTerminalText(printed(text))).toEqual({ text: printed(text), count: 0 });
    const m = await screenOf(printed(text), 40, 30);
    try {
      for (const f of ['text', 'ansi', 'html'] as const) {
        const snap = m.snapshot({ format: f });
        expect(redactScreen(snap.content, f, snap.rowBreaks)).toEqual({ text: snap.content, count: 0 });
      }
    } finally {
      m.dispose();
    }
  });
});

describe('redactArgv: a command line in words', () => {
  it('finds a flag and its value in two words, and keeps every word in its place', () => {
    const r = redactArgv(['/usr/bin/curl', '-u', 'admin:S3cr3t-Pa55', 'https://x.example', '--password', 'two words here', 'plain']);
    expect(r.argv).toEqual(['/usr/bin/curl', '-u', `admin:${redactionMarker('basic-credentials')}`, 'https://x.example', '--password', redactionMarker('password'), 'plain']);
    expect(r.count).toBe(2);
    expect(redactArgv(['bash', '--norc'])).toEqual({ argv: ['bash', '--norc'], count: 0 });
  });
});

describe('linear time on adversarial terminal and HTML input', () => {
  const MB = 1 << 20;
  const fill = (unit: string): string => unit.repeat(Math.ceil(MB / unit.length)).slice(0, MB);
  const CASES: ReadonlyArray<readonly [string, string, (s: string) => unknown]> = [
    ['ESC bytes', fill('\x1b'), redactTerminalText],
    ['CSI without a final', fill('\x1b[1;2;3'), redactTerminalText],
    ['SGR between every character', fill('\x1b[1ma'), redactTerminalText],
    ['cursor-forward runs', fill('\x1b[999C'), redactTerminalText],
    ['an OSC never ended', `\x1b]0;${fill('password=')}`, redactTerminalText],
    ['OSC starts', fill('\x1b]'), redactTerminalText],
    ['dashes before a back-and-erase', fill('-----\x1b[1D'), redactTerminalText],
    ['C1 controls', fill('\u009b\u009d'), redactTerminalText],
    ['tags', fill('<div><span>'), (s) => redactScreen(s, 'html')],
    ['an unclosed tag', `<${fill('a')}`, (s) => redactScreen(s, 'html')],
    ['entities', fill('&amp;sig='), (s) => redactScreen(s, 'html')],
    ['rows', fill('ghp_\n'), (s) => redactScreen(s, 'text', Array.from({ length: s.length }, () => 'wrap' as const))],
    ['many chunks', fill('x'), (s) => redactTerminalChunks(s.match(/[^]{1,16}/g) ?? [])],
  ];
  it.each(CASES)('%s (1 MiB)', (_name, input, run) => {
    const started = performance.now();
    run(input);
    // Linear passes over 1 MiB take tens to hundreds of ms; a quadratic one would take minutes.
    expect(performance.now() - started).toBeLessThan(5000);
  });
});
