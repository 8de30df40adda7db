import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../lib/control/line-splitter.js';
import { bytes } from './transcript.js';

function split(chunks: readonly string[], options?: ConstructorParameters<typeof LineSplitter>[1]): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(Buffer.from(line).toString('latin1')), options);
  for (const c of chunks) splitter.push(bytes(c));
  splitter.end();
  return lines;
}

describe('LineSplitter', () => {
  it('splits on LF only, keeping lone CRs and empty lines', () => {
    expect(split(['a\nb\r\n\nc\rd\n'])).toEqual(['a', 'b', '', 'c\rd']);
  });

  it('joins a line spread over many chunks, CRLF split between chunks included', () => {
    expect(split(['ab', 'c', 'd\r', '\ne', 'f'])).toEqual(['abcd', 'ef']);
  });

  it('flushes an unterminated last line on end(), and nothing when the stream ended on LF', () => {
    expect(split(['x\ntail'])).toEqual(['x', 'tail']);
    expect(split(['x\n'])).toEqual(['x']);
  });

  it('hands out lines that stay correct after the pushed chunk is overwritten', () => {
    const seen: string[] = [];
    const splitter = new LineSplitter((line) => seen.push(Buffer.from(line).toString()));
    const reused = bytes('abc');
    splitter.push(reused);
    reused.fill(0x21);
    splitter.push(bytes('\n'));
    expect(seen).toEqual(['abc']);
  });

  it('drops an overlong line up to its LF and reports it once', () => {
    const reports: [string, number][] = [];
    const lines = split(['ok\n0123456789', 'abcdef', 'ghij\nnext\n', '0123456789abcdef!\n'], {
      maxLineBytes: 16,
      onOverflow: (head, dropped) => reports.push([Buffer.from(head).toString(), dropped]),
    });
    expect(lines).toEqual(['ok', 'next']);
    expect(reports).toEqual([
      ['0123456789abcdef', 20],
      ['0123456789abcdef!', 17],
    ]);
  });

  it('splits 10 MB of 100-byte lines in 64 KB chunks in well under a second', () => {
    const line = `${'x'.repeat(99)}\n`;
    const chunk = bytes(line.repeat(Math.ceil(65536 / 100)).slice(0, 65536));
    let count = 0;
    const splitter = new LineSplitter(() => count++);
    const started = performance.now();
    for (let i = 0; i < 160; i++) splitter.push(chunk);
    splitter.end();
    expect(count).toBeGreaterThan(100_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('keeps a 5 MB line arriving in 1 KB chunks linear (pieces joined once)', () => {
    let length = 0;
    const splitter = new LineSplitter((line) => (length = line.length));
    const piece = new Uint8Array(1024).fill(0x61);
    const started = performance.now();
    for (let i = 0; i < 5 * 1024; i++) splitter.push(piece);
    splitter.push(bytes('\n'));
    expect(length).toBe(5 * 1024 * 1024);
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
