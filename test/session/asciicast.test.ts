/**
 * asciicast v2 export: the format rules asciinema's player relies on (a JSON header line with
 * version 2, width, height, timestamp; then `[time, code, data]` lines with non-decreasing times,
 * codes o/i/r/m, `COLSxROWS` resizes), UTF-8 decoded as one stream, secrets redacted; and a real
 * drive's recording replayed into a terminal emulator ends on the screen the mirror shows.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import xtermHeadless from '@xterm/headless';
import unicode11Module from '@xterm/addon-unicode11';
import { formatAsciicast, keyBytes, toAsciicast, type AsciicastEvent } from '../../lib/session/asciicast.js';
import type { TranscriptEntry } from '../../lib/session/transcript.js';
import { allow, openDriver, type TestDriver } from '../helpers.js';

const { Terminal } = xtermHeadless;
const { Unicode11Addon } = unicode11Module;

const enc = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Checks every rule of the asciicast v2 format on the text; returns the parsed lines. */
function parseCast(text: string): { header: Record<string, unknown>; events: AsciicastEvent[] } {
  expect(text.endsWith('\n')).toBe(true);
  const lines = text.slice(0, -1).split('\n');
  const header = JSON.parse(lines[0] as string) as Record<string, unknown>;
  expect(header.version).toBe(2);
  for (const key of ['width', 'height'] as const) {
    expect(Number.isInteger(header[key]) && (header[key] as number) > 0, key).toBe(true);
  }
  expect(Number.isInteger(header.timestamp)).toBe(true);
  expect(header.env).toEqual({ TERM: expect.any(String) });
  let last = 0;
  const events = lines.slice(1).map((line) => {
    const e = JSON.parse(line) as unknown;
    expect(Array.isArray(e) && e.length === 3, line).toBe(true);
    const [time, code, data] = e as [unknown, unknown, unknown];
    expect(typeof time === 'number' && Number.isFinite(time) && time >= last, line).toBe(true);
    last = time as number;
    expect(['o', 'i', 'r', 'm']).toContain(code);
    expect(typeof data).toBe('string');
    if (code === 'r') expect(data).toMatch(/^[1-9]\d*x[1-9]\d*$/);
    return e as AsciicastEvent;
  });
  return { header, events };
}

describe('toAsciicast', () => {
  const t0 = Date.UTC(2026, 10, 30, 12, 0, 0, 250);
  const entries: TranscriptEntry[] = [
    { seq: 1, time: t0, kind: 'output', data: enc('$ ') },
    { seq: 2, time: t0 + 100, kind: 'input', data: 'echo héllo' },
    { seq: 3, time: t0 + 110, kind: 'keys', tags: { keys: 'Enter' } },
    // "é" is 0xC3 0xA9: split across two chunks of pane output.
    { seq: 4, time: t0 + 120, kind: 'output', data: Uint8Array.of(...enc('echo h'), 0xc3) },
    { seq: 5, time: t0 + 121, kind: 'output', data: Uint8Array.of(0xa9, ...enc('llo\r\nhéllo\r\n$ ')) },
    { seq: 6, time: t0 + 500, kind: 'resize', tags: { cols: 100, rows: 30 } },
    { seq: 7, time: t0 + 501, kind: 'resync', tags: { reason: 'resize', cols: 100, rows: 30 } },
    { seq: 8, time: t0 + 700, kind: 'gap', tags: { reason: 'reattach' } },
    // The wall clock stepped back: times must still never decrease.
    { seq: 9, time: t0 + 650, kind: 'keys', tags: { keys: 'C-c Up M-x F5 Nonesuch' } },
    { seq: 10, time: t0 + 800, kind: 'output', data: enc('export TOKEN=ghp_R3allyS3cretT0kenValue0123456789abcd\r\n') },
    { seq: 11, time: t0 + 900, kind: 'exit', tags: { code: 0, signal: null } },
  ];

  it('writes a header and o/i/r/m events that follow the asciicast v2 rules', () => {
    const cast = toAsciicast(entries, { cols: 80, rows: 24, title: 'demo' });
    const { header, events } = parseCast(formatAsciicast(cast));
    expect(header).toEqual({ version: 2, width: 80, height: 24, timestamp: Math.floor(t0 / 1000), title: 'demo', env: { TERM: 'tmux-256color' } });
    expect(events).toEqual([
      [0, 'o', '$ '],
      [0.1, 'i', 'echo héllo'],
      [0.11, 'i', '\r'],
      [0.12, 'o', 'echo h'],
      [0.121, 'o', 'éllo\r\nhéllo\r\n$ '],
      [0.5, 'r', '100x30'],
      [0.7, 'm', 'gap: reattach'],
      [0.7, 'i', '\x03\x1b[A\x1bx\x1b[15~'],
      [0.8, 'o', 'export TOKEN=[REDACTED:github-token]\r\n'],
    ]);
    expect(cast.redactions).toBe(1);
  });

  it('keeps secrets when redaction is off, and starts from a given screen', () => {
    const cast = toAsciicast(entries.slice(9, 10), { cols: 80, rows: 24, redact: false, initialScreen: '\x1b[1mbold\x1b[0m' });
    expect(cast.events.map((e) => e[2])).toEqual(['\x1b[1mbold\x1b[0m', expect.stringContaining('ghp_R3ally')]);
    expect(cast.redactions).toBe(0);
  });

  it('flushes a truncated UTF-8 tail and rejects a nonsense size', () => {
    const cast = toAsciicast([{ seq: 1, time: 0, kind: 'output', data: Uint8Array.of(0x41, 0xe2, 0x82) }], { cols: 10, rows: 5 });
    expect(cast.events.map((e) => e[2]).join('')).toBe('A\ufffd');
    expect(() => toAsciicast([], { cols: 0, rows: 5 })).toThrow(RangeError);
  });

  it('maps key names to the bytes a terminal sends', () => {
    expect(['Enter', 'Tab', 'BTab', 'Escape', 'BSpace', 'C-a', 'C-[', 'M-Enter', 'q', 'Left', 'F1'].map(keyBytes)).toEqual(['\r', '\t', '\x1b[Z', '\x1b', '\x7f', '\x01', '\x1b', '\x1b\r', 'q', '\x1b[D', '\x1bOP']);
    expect(keyBytes('Hyper-X')).toBeUndefined();
  });
});

describe('a real drive recorded as asciicast', () => {
  let t: TestDriver;
  beforeAll(async () => {
    t = await openDriver([allow('bash', '/bin/bash', { env: { PS1: '$ ' } })]);
  });
  afterAll(async () => t.cleanup());

  it('replays into a terminal emulator to the screen the mirror shows', async () => {
    const s = await t.driver.create({ allowId: 'bash', args: ['--norc', '--noprofile'] });
    await s.wait({ forText: '$ ' });
    await s.sendText('echo before-resize', { submit: true });
    await s.wait({ forText: /^before-resize$/m });
    // tmux and xterm reflow differently on a resize: the screen is cleared after it, so the replay
    // compares what the program drew.
    await s.resize(100, 30);
    await s.sendText(`clear; printf '\\033[1;31mred\\033[0m wide:日本 é\\n'; seq 1 5; printf "done-%s\\n" $((6 * 7))`, { submit: true });
    await s.wait({ forText: /^done-42$/m });
    await s.wait({ forIdleMs: 200 });
    const cast = toAsciicast(s.transcript(), { cols: 80, rows: 24, redact: false });
    const { header, events } = parseCast(formatAsciicast(cast));
    expect(events.some((e) => e[1] === 'r' && e[2] === '100x30')).toBe(true);
    expect(events.some((e) => e[1] === 'i' && e[2].includes('seq 1 5'))).toBe(true);

    const term = new Terminal({ cols: header.width as number, rows: header.height as number, allowProposedApi: true });
    term.loadAddon(new Unicode11Addon());
    term.unicode.activeVersion = '11';
    for (const [, code, data] of events) {
      if (code === 'o') await new Promise<void>((ok) => term.write(data, ok));
      if (code === 'r') {
        const [c, r] = data.split('x').map(Number);
        term.resize(c as number, r as number);
      }
    }
    const buf = term.buffer.active;
    const replayed = Array.from({ length: term.rows }, (_, y) => (buf.getLine(buf.viewportY + y)?.translateToString(true) ?? '').trimEnd());
    const mirror = s.read().content.split('\n').map((l) => l.trimEnd());
    const trim = (lines: string[]) => lines.join('\n').replace(/\n+$/, '');
    expect(trim(replayed)).toBe(trim(mirror));
    expect(replayed).toContain('done-42');
    expect(replayed).toContain('red wide:日本 é');
    term.dispose();
    await s.kill();
  });
});
