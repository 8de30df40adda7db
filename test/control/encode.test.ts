import { describe, expect, it } from 'vitest';
import { argvWord, KEY_NAMES, normalizeKey, quote } from '../../lib/control/encode.js';
import { displayMessage, encodeSendHex, encodeSendKeys, encodeSendText } from '../../lib/control/tmux-commands.js';
import { UsageError } from '../../lib/common/errors.js';
import { CORPUS } from './corpus.js';

/** Undoes quote(): the reading of a single-quoted tmux word. */
function unquote(word: string): string {
  expect(word).toMatch(/^'([^']|'\\'')*'$/);
  return word.slice(1, -1).replaceAll("'\\''", "'");
}

/** Reassembles the bytes encodeSendText's commands deliver, as tmux would. */
function delivered(lines: readonly string[]): Buffer {
  const parts: Buffer[] = [];
  for (const line of lines) {
    const literal = /^send-keys -t %\d+ -l -- ('.*')$/s.exec(line);
    const hex = /^send-keys -t %\d+ -H((?: [0-9a-f]{2})+)$/.exec(line);
    if (literal) parts.push(Buffer.from(unquote(literal[1] as string)));
    else if (hex) parts.push(Buffer.from((hex[1] as string).trim().split(' ').map((h) => parseInt(h, 16))));
    else throw new Error(`unexpected command: ${line}`);
  }
  return Buffer.concat(parts);
}


describe('quote', () => {
  it('single-quotes and writes each quote as \'\\\'\'', () => {
    expect(quote('plain')).toBe("'plain'");
    expect(quote("it's")).toBe("'it'\\''s'");
    expect(quote('')).toBe("''");
    expect(quote('; # $HOME ~ \\')).toBe("'; # $HOME ~ \\'");
  });

  it('writes control bytes as adjacent double-quoted octal escapes, in the same word', () => {
    expect(quote('a\nb')).toBe(`'a'"\\012"'b'`);
    expect(quote('\x1b[0m\t\x7f')).toBe(`"\\033"'[0m'"\\011""\\177"`);
    for (const word of ['a\nb', '\r\n', "x'\ny"]) expect(quote(word)).not.toMatch(/[\x00-\x1f\x7f]/);
  });

  it('refuses NUL, which no tmux word can carry, without echoing the text', () => {
    for (const f of [quote, argvWord]) {
      expect(() => f('secret\0byte')).toThrow(UsageError);
      try {
        f('secret\0byte');
      } catch (e) {
        expect(e).toMatchObject({ code: 'BAD_ARGUMENT' });
        expect((e as Error).message).not.toContain('secret');
      }
    }
  });

  it('argvWord escapes a final ";" (tmux would end the command there) and leaves the rest', () => {
    expect(argvWord('a;')).toBe('a\\;');
    expect(argvWord(';')).toBe('\\;');
    expect(argvWord('a;b')).toBe('a;b');
    expect(argvWord('#{pane_id}')).toBe('#{pane_id}');
  });
});

describe('encodeSendText', () => {
  it.each(CORPUS)('delivers the UTF-8 bytes of %j exactly', (text) => {
    const lines = encodeSendText('%3', text);
    expect(delivered(lines)).toEqual(Buffer.from(text));
    for (const line of lines) expect(line).not.toMatch(/[\n\0]/);
  });

  it('sends control bytes as hex and text after --', () => {
    expect(encodeSendText('%3', "a'\tb\r\n")).toEqual([
      "send-keys -t %3 -l -- 'a'\\'''",
      'send-keys -t %3 -H 09',
      "send-keys -t %3 -l -- 'b'",
      'send-keys -t %3 -H 0d 0a',
    ]);
  });

  it('bounds chunks without splitting a surrogate pair', () => {
    const text = 'a' + '😀'.repeat(10);
    const lines = encodeSendText('%1', text, { maxChunkChars: 4 });
    const chunks = lines.map((l) => unquote(l.slice('send-keys -t %1 -l -- '.length)));
    for (const c of chunks) {
      expect(c.length).toBeLessThanOrEqual(4);
      expect(c).not.toMatch(/^[\udc00-\udfff]|[\ud800-\udbff]$/);
    }
    expect(chunks.join('')).toBe(text);
  });

  it('keeps a 20 KB string to ~1000 characters per command and 1000 hex arguments per command', () => {
    const text = 'x'.repeat(20_000) + '\x01'.repeat(2500);
    const lines = encodeSendText('%1', text);
    expect(lines).toHaveLength(20 + 3);
    for (const line of lines) expect(line.split(' ').length).toBeLessThanOrEqual(1005);
    expect(delivered(lines)).toEqual(Buffer.from(text));
  });

  it('sends a lone surrogate as U+FFFD, as a UTF-8 encoder would', () => {
    expect(delivered(encodeSendText('%1', 'a\ud800b\udc00'))).toEqual(Buffer.from('a\ufffdb\ufffd'));
  });

  it('rejects a target that is not a pane id', () => {
    expect(() => encodeSendText('%1; kill-server' as '%1', 'x')).toThrow(UsageError);
  });

  it('returns nothing for empty text', () => {
    expect(encodeSendText('%1', '')).toEqual([]);
  });
});

describe('encodeSendHex', () => {
  it('writes every byte as two hex digits, at most 1000 per command', () => {
    expect(encodeSendHex('%2', Uint8Array.of(0, 0x1b, 0xff))).toEqual(['send-keys -t %2 -H 00 1b ff']);
    expect(encodeSendHex('%2', new Uint8Array(2001))).toHaveLength(3);
  });
});

describe('displayMessage', () => {
  it('builds display-message -p with a fixed format after --', () => {
    expect(displayMessage('%4', '#{pane_id}\t#{cursor_x}').line).toBe("display-message -p -t %4 -- '#{pane_id}\t#{cursor_x}'");
    expect(displayMessage('td-1', '#{pid}').line).toBe("display-message -p -t =td-1: -- '#{pid}'");
  });

  it('refuses a format that is not fixed #{variable} items, and a target that is neither a pane nor a session name', () => {
    for (const format of ['#(id)', '#{pane_id} x', "'", '#{E:HOME}', '']) expect(() => displayMessage('%4', format)).toThrow(UsageError);
    for (const target of ['%4; kill-server', '#(id)', '-t', '']) expect(() => displayMessage(target, '#{pid}')).toThrow(UsageError);
  });
});

describe('encodeSendKeys', () => {
  it('quotes validated names after --', () => {
    expect(encodeSendKeys('%1', ['Enter', 'C-c', 'q', "'", ';', '-', 'C-\\'])).toBe(
      "send-keys -t %1 -- 'Enter' 'C-c' 'q' ''\\''' ';' '-' 'C-\\'",
    );
  });

  it('accepts named keys with the modifiers tmux 3.3a turns into bytes, in any order', () => {
    for (const key of ['Up', 'C-M-Left', 'M-C-Left', 'S-F5', 'C-S-M-End', 'M-Enter', 'C-Space', 'C-M-Space', 'KP*', 'M-KPEnter', 'PgDn', 'F12']) {
      expect(() => normalizeKey(key)).not.toThrow();
    }
    expect(normalizeKey('M-C-Left')).toBe('C-M-Left');
  });

  it('maps S-Tab to BTab (tmux 3.3a would type the text "S-Tab")', () => {
    expect(normalizeKey('S-Tab')).toBe('BTab');
    expect(normalizeKey('M-S-Tab')).toBe('M-BTab');
  });

  it('accepts C- with a character that has a control code, M- with any character, and lone characters', () => {
    for (const key of ['C-a', 'C-Z', 'C-[', 'C-\\', 'C-]', 'C-^', 'C-_', 'C-?', 'C-@', 'C-M-x', 'M-x', 'M-;', 'M-é', 'a', 'q', 'y', '#', ' ', 'é', '中']) {
      expect(normalizeKey(key)).toBe(key);
    }
  });

  it.each([
    ['Foo', 'has no key "Foo"'],
    ['enter', 'did you mean Enter?'],
    ['S-Enter', 'Enter takes only M-'],
    ['C-Enter', 'Enter takes only M-'],
    ['C-Tab', 'Tab takes only M-'],
    ['S-a', 'a takes only C-, M-'],
    ['C-1', '1 takes only M-'],
    ['C-M--', '- takes only M-'],
    ['C-C-c', 'C- given twice'],
    ['C-', 'has no key "C-"'],
    ['ab', 'has no key "ab"'],
    ['\x1b', 'has no key'],
    ['', 'has no key'],
  ])('rejects %j with UNKNOWN_KEY_NAME (%s)', (key, why) => {
    let error: unknown;
    try {
      encodeSendKeys('%1', [key]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect(error).toMatchObject({ code: 'UNKNOWN_KEY_NAME', context: { key } });
    expect((error as Error).message).toContain(why);
    expect((error as Error).message).toContain('Enter, Escape, Tab');
  });

  it('rejects an empty list and more than 1000 keys', () => {
    expect(() => encodeSendKeys('%1', [])).toThrow(UsageError);
    expect(() => encodeSendKeys('%1', Array(1001).fill('a'))).toThrow(expect.objectContaining({ code: 'COMMAND_TOO_LARGE' }));
  });

  it('lists every named key with its modifiers', () => {
    expect(Object.keys(KEY_NAMES)).toEqual(expect.arrayContaining(['Enter', 'Escape', 'Tab', 'BTab', 'BSpace', 'Space', 'Up', 'PgUp', 'NPage', 'IC', 'DC', 'F1', 'F12', 'KP0', 'KPEnter']));
  });
});
