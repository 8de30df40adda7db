/**
 * Mirror.screenAsParsed: the screen as parsed so far, for a verdict the queued bytes cannot
 * change (output flowing). It reads the grid without parsing what is queued, and leaves it queued;
 * every other read parses it first. The parse scheduler is the real one, its turns held.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { systemClock } from '../../backends/process/system-clock.js';

const enc = new TextEncoder();
const mirrors: Mirror[] = [];
afterEach(() => {
  for (const m of mirrors.splice(0)) m.dispose();
});

function heldMirror(): Mirror {
  // Turns never run: only a read that parses can move the grid.
  const scheduler = createParseScheduler({ defer: () => undefined, now: () => performance.now(), after: (ms, fn) => systemClock.after(ms, fn) });
  const m = new Mirror({ cols: 40, rows: 10, scrollback: 200, scheduler });
  mirrors.push(m);
  return m;
}

describe('Mirror.screenAsParsed', () => {
  it('reads the grid as parsed so far and leaves the queued bytes queued; a read then parses them', () => {
    const m = heldMirror();
    m.write(enc.encode('\x1b[1mfirst\x1b[0m line\r\n'));
    expect(m.backlogBytes).toBe(0);
    const queued = `${'x'.repeat(5000)}\r\nlast`;
    m.write(enc.encode(queued)); // over the sync limit: queued
    expect(m.backlogBytes).toBe(queued.length);

    const { snapshot, cells } = m.screenAsParsed();
    expect(m.backlogBytes).toBe(queued.length);
    expect(snapshot.lines[0]).toBe('first line');
    expect(snapshot.lines.slice(1).every((l) => l === '')).toBe(true);
    expect(snapshot.cursor).toMatchObject({ x: 0, y: 1 });
    expect(cells.length).toBe(10);
    expect(cells[0]?.slice(0, 6).map((c) => [c.ch, c.bold])).toEqual([
      ['f', true],
      ['i', true],
      ['r', true],
      ['s', true],
      ['t', true],
      [' ', false],
    ]);

    const current = m.snapshot({ format: 'text' });
    expect(m.backlogBytes).toBe(0);
    expect(current.lines.at(-1)).toBe('last');
    expect(current.cursor).toMatchObject({ x: 4, y: 9 });
    expect(m.screenAsParsed().snapshot.lines).toEqual(current.lines);
  });

  it('refuses on a disposed mirror, as every read does', () => {
    const m = heldMirror();
    m.dispose();
    expect(() => m.screenAsParsed()).toThrow(/disposed/);
  });
});
