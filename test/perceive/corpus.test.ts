/**
 * The fixture corpus (test/fixtures/screens, recorded by tools/record-fixtures.ts from real
 * programs, plus labelled synthetic frames) replayed through classifyScreen with each frame's
 * profile. No live programs: JSON in, verdicts out.
 */
import { describe, expect, it } from 'vitest';
import { fileURLToPath } from 'node:url';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { decodeCells, encodeCells, loadCorpus, replayCorpus } from '../../tools/fixture-format.js';

const dir = fileURLToPath(new URL('../fixtures/screens/', import.meta.url));
const frames = loadCorpus(dir);
const results = replayCorpus(frames, loadProfileFiles());

describe('the screen fixture corpus', () => {
  it('has the frames the issue asks for, most of them from real programs', () => {
    const names = new Set(frames.map((f) => f.name));
    for (const n of ['bash-prompt', 'python-input', 'read-yn-confirm', 'vim-normal', 'less-pager', 'htop', 'fzf-picker', 'whiptail-yesno-destructive', 'whiptail-menu', 'busy-cpu-loop', 'sleep-forever', 'fake-yn-flowing']) {
      expect(names, n).toContain(n);
    }
    expect(frames.filter((f) => !f.fixture.synthetic).length).toBeGreaterThan(frames.length / 2);
  });

  it.each(results.map((r) => [r.name, r] as const))('%s is classified as labelled', (_name, r) => {
    const { label } = r.fixture;
    expect({ state: r.verdict.state, reason: r.verdict.reason }).toEqual({ state: label.state, reason: label.reason });
    if (label.dialogKind !== undefined) expect(r.verdict.dialog?.kind).toBe(label.dialogKind);
    if (label.suggestion !== undefined) {
      expect(r.verdict.suggestion?.visible).toBe(true);
      expect(r.verdict.suggestion?.text.startsWith(label.suggestion), r.verdict.suggestion?.text).toBe(true);
    }
  });

  it('no working frame is classified awaiting-input', () => {
    expect(results.filter((r) => r.fixture.label.state === 'working' && r.verdict.state === 'awaiting-input').map((r) => r.name)).toEqual([]);
  });

  it('the compact cell encoding round-trips', () => {
    for (const { fixture: f } of frames) {
      const cells = decodeCells(f.snapshot.lines, f.cells, f.snapshot.cols, f.snapshot.rows);
      expect(encodeCells(cells)).toEqual(f.cells);
    }
  });

  it('a destructive dialog in the corpus is never safe', () => {
    const destructive = results.filter((r) => r.verdict.dialog?.kind === 'destructive');
    expect(destructive.length).toBeGreaterThan(0);
    for (const r of destructive) expect(r.verdict.dialog?.safe).toBe(false);
  });
});
