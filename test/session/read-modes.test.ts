/** The read shapes (digest, diff, byte caps) and the cost reading, pure. */
import { describe, expect, it } from 'vitest';
import { capDiff, capTail, diffRows, digestRows } from '../../lib/session/read-modes.js';
import { readCost } from '../../lib/perceive/cost.js';
import { loadProfiles } from '../../lib/perceive/profile.js';

describe('read modes', () => {
  it('digest: right-trimmed rows, trailing blank rows dropped, inner blank rows kept', () => {
    expect(digestRows(['$ ls   ', '', 'a  b ', '   ', ''])).toEqual(['$ ls', '', 'a  b']);
    expect(digestRows(['', ''])).toEqual([]);
  });

  it('diff: the first is every row; then only changed rows, plus rows removed', () => {
    const first = diffRows(undefined, ['a', '', 'c']);
    expect(first).toEqual({ first: true, changed: [{ row: 0, text: 'a' }, { row: 1, text: '' }, { row: 2, text: 'c' }], removed: [] });
    expect(diffRows(['a', '', 'c'], ['a', 'x'])).toEqual({ first: false, changed: [{ row: 1, text: 'x' }], removed: [2] });
    expect(diffRows(['a', undefined], ['a', 'b']).changed).toEqual([{ row: 1, text: 'b' }]);
    expect(diffRows(['a'], ['a']).changed).toEqual([]);
  });

  it('capTail keeps the end, cut at a line start, and counts the dropped bytes', () => {
    expect(capTail('short', 100)).toEqual({ text: 'short', droppedBytes: 0 });
    const text = Array.from({ length: 100 }, (_, i) => `line ${i}`).join('\n');
    const c = capTail(text, 64);
    expect(Buffer.byteLength(c.text)).toBeLessThanOrEqual(64);
    expect(c.text.endsWith('line 99')).toBe(true);
    expect(c.text.startsWith('line ')).toBe(true);
    expect(c.droppedBytes + Buffer.byteLength(c.text)).toBe(Buffer.byteLength(text));
    // One long line of multi-byte characters: cut at a character boundary.
    const wide = 'é'.repeat(100);
    const w = capTail(wide, 65);
    expect(w.text).toBe('é'.repeat(32));
    expect(w.droppedBytes).toBe(200 - 64);
  });

  it('capDiff keeps the bottom rows within the cap and returns the dropped ones', () => {
    const rows = Array.from({ length: 50 }, (_, row) => ({ row, text: `row ${row} ${'x'.repeat(20)}` }));
    const c = capDiff(rows, 200);
    expect(c.kept.at(-1)?.row).toBe(49);
    expect(c.kept.length + c.dropped.length).toBe(50);
    expect(c.droppedBytes).toBeGreaterThan(0);
    expect(c.kept.map((r) => `@${r.row} ${r.text}\n`).join('').length).toBeLessThanOrEqual(200);
  });
});

describe('the cost reading', () => {
  const profiles = loadProfiles([{ name: 'costly.json', data: { id: 'costly', cost: { pattern: 'Cost: \\$([0-9]+\\.[0-9]+)' } } }]);
  const costly = profiles.get('costly')!;

  it('reads the highest matching amount on the screen; none without a rule or a match', () => {
    expect(readCost({ lines: ['hello', 'Cost: $0.42', ''] }, costly)).toBe(0.42);
    expect(readCost({ lines: ['Cost: $0.10', 'Cost: $1.25'] }, costly)).toBe(1.25);
    expect(readCost({ lines: ['no spend here'] }, costly)).toBeUndefined();
    expect(readCost({ lines: ['Cost: $0.42'] }, {})).toBeUndefined();
  });

  it('bottomRows limits the search to the last rows with content', () => {
    const p = loadProfiles([{ name: 'b.json', data: { id: 'b', cost: { pattern: '\\$([0-9]+\\.[0-9]+)', bottomRows: 1 } } }]).get('b')!;
    expect(readCost({ lines: ['$9.00', 'total $0.50', '', ''] }, p)).toBe(0.5);
  });

  it('an unsafe cost pattern is refused at load', () => {
    expect(() => loadProfiles([{ name: 'bad.json', data: { id: 'bad', cost: { pattern: '(a+)+\\$' } } }])).toThrow(/cost\.pattern/);
  });
});
