/**
 * What a hostile (or careless) program's output may do to the host, contained: a DEL flood must
 * not reach the host's stderr (xterm.js logged ~770 bytes of parser state per DEL to `console`),
 * an unterminated string sequence must not be buffered (20 MB of OSC, then 10 MB of DCS, held the
 * host at 413 MB), and the screen after the terminator is tmux's.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTerminal } from '../../lib/emulator/headless.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { rateLimitedLog } from '../../lib/emulator/rate-limited-log.js';
import { TmuxLab } from '../../tools/tmux-lab.js';

const MiB = 1024 * 1024;

/** Every way xterm.js (or anything) could reach the host's stderr/stdout, counted. */
function spyOutput(): { calls: () => number; restore: () => void } {
  const spies = [
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true),
    vi.spyOn(console, 'error').mockImplementation(() => undefined),
    vi.spyOn(console, 'warn').mockImplementation(() => undefined),
    vi.spyOn(console, 'log').mockImplementation(() => undefined),
    vi.spyOn(console, 'info').mockImplementation(() => undefined),
    vi.spyOn(console, 'debug').mockImplementation(() => undefined),
  ];
  return { calls: () => spies.reduce((n, s) => n + s.mock.calls.length, 0), restore: () => spies.forEach((s) => s.mockRestore()) };
}

describe('a DEL flood', () => {
  it('1 MiB of DEL through a mirror writes nothing to the host and changes nothing on the screen', async () => {
    const incidents: unknown[] = [];
    const mirror = new Mirror({ cols: 80, rows: 24, scrollback: 100, onIncident: (code, detail) => incidents.push({ code, detail }) });
    const out = spyOutput();
    try {
      const chunk = new Uint8Array(4096).fill(0x7f); // %output arrives in chunks of this order
      mirror.write(new TextEncoder().encode('before'));
      for (let i = 0; i < MiB / chunk.length; i++) mirror.write(chunk);
      mirror.write(new TextEncoder().encode(' after'));
      await mirror.whenParsed();
      expect(out.calls()).toBe(0);
      expect(incidents).toEqual([]);
      expect(mirror.snapshot({ format: 'text' }).lines[0]).toBe('before after');
    } finally {
      out.restore();
      mirror.dispose();
    }
  });

  it("the emulator's own log lines go to the owner's function, never to the console", () => {
    const lines: string[] = [];
    const out = spyOutput();
    const { term, internals } = createTerminal(20, 5, 0, (level, message) => lines.push(`${level}: ${message}`));
    try {
      // Straight into xterm, past the filter: xterm.js reports each DEL as a parsing error.
      for (let i = 0; i < 50; i++) internals?.writeSync(Uint8Array.of(0x7f));
      expect(lines.length).toBe(50);
      expect(lines[0]).toMatch(/^error: .*Parsing error/);
      expect(out.calls()).toBe(0);
    } finally {
      out.restore();
      term.dispose();
    }
  });

  it('the mirror reports a repeated log line at its 1st, 10th, 100th… occurrence, with the count', () => {
    const incidents: { code: string; detail: Record<string, unknown> }[] = [];
    const log = rateLimitedLog((code, detail) => incidents.push({ code, detail }));
    for (let i = 0; i < 287_190; i++) log('error', 'Parsing error: ');
    log('warn', 'something else');
    expect(incidents.map((i) => i.detail.count)).toEqual([1, 10, 100, 1000, 10_000, 100_000, 1]);
    expect(incidents.every((i) => i.code === 'emulator_log')).toBe(true);
    expect(incidents[6]?.detail).toEqual({ level: 'warn', message: 'something else', count: 1 });
  });
});

describe('unterminated string sequences', () => {
  it('20 MB of OSC then 10 MB of DCS are neither queued nor buffered; the terminator ends them', async () => {
    const mirror = new Mirror({ cols: 40, rows: 5, scrollback: 100 });
    try {
      const chunk = new Uint8Array(64 * 1024).fill(0x61);
      const rssBefore = process.memoryUsage().rss;
      let backlogMax = 0;
      mirror.write(new TextEncoder().encode('\x1b]0;'));
      for (let i = 0; i < (20 * MiB) / chunk.length; i++) {
        mirror.write(chunk);
        backlogMax = Math.max(backlogMax, mirror.backlogBytes);
      }
      mirror.write(new TextEncoder().encode('\x07\x1bP1$r'));
      for (let i = 0; i < (10 * MiB) / chunk.length; i++) {
        mirror.write(chunk);
        backlogMax = Math.max(backlogMax, mirror.backlogBytes);
      }
      expect(mirror.parserInString).toBe(true);
      await mirror.whenParsed();
      const grownMiB = (process.memoryUsage().rss - rssBefore) / MiB;
      expect(backlogMax).toBe(0);
      // Nothing of the 30 MB is kept; the old mirror held 413 MB. The bound leaves room for GC noise.
      expect(grownMiB).toBeLessThan(48);
      mirror.write(new TextEncoder().encode('\x1b\\after'));
      await mirror.whenParsed();
      expect(mirror.parserInString).toBe(false);
      expect(mirror.snapshot({ format: 'text' }).lines[0]).toBe('after');
    } finally {
      mirror.dispose();
    }
  });
});

describe('the screen after a long string sequence, against tmux 3.3a', () => {
  let lab: TmuxLab;
  beforeAll(async () => {
    lab = await TmuxLab.start({ sizes: [[20, 5]] });
  });
  afterAll(async () => {
    await lab?.close();
  });

  // tmux keeps at most 1 MiB of a string (INPUT_BUF_LIMIT) and discards the rest; both are longer.
  it.each([
    ['a 3 MB OSC ended by BEL', '\x1b]0;', '\x07'],
    ['a 2 MB DCS ended by ESC \\ with CAN bytes inside', '\x1bP1$r\x18', '\x1b\\'],
    ['a 2 MB APC ended by ESC \\', '\x1b_', '\x1b\\'],
  ])('%s', async (_name, start, end) => {
    const size = start.startsWith('\x1b]') ? 3 * MiB : 2 * MiB;
    const enc = new TextEncoder();
    const parts = [enc.encode(`\x1b[1;31mbefore\r\n${start}`), new Uint8Array(size).fill(0x62), enc.encode(`${end}after\x1b[0m`)];
    const bytes = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
    let at = 0;
    for (const p of parts) {
      bytes.set(p, at);
      at += p.length;
    }
    const d = await lab.runCase({ cols: 20, rows: 5, bytes });
    expect(d).toMatchObject({ equal: true, cellMismatches: [] });
  });
});
