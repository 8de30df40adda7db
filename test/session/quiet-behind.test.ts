/**
 * The quiet watch when the parse loop is behind (issue 16): a real program floods its pty and
 * stops, and the mirror's parse scheduler is made to run its turns late (its port defers each
 * turn by BEHIND_MS, as a loop held by twenty other drives' parsing does; the scheduler itself is
 * the real one). Output has been quiet for 250 ms while its bytes still wait in the mirror's queue:
 * the drive is judged once, QUIET_MS after those bytes reach the grid, not also at once with a
 * forced parse (a second process sample and classification for the same stop). And the state
 * still follows the stop: the program (a `cat` reading its terminal) is awaiting-input within
 * QUIET_MS of the parse. The process samples are real (/proc of the program).
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import { QUIET_MS } from '../../lib/session/drive-watch.js';
import type { SessionStatus } from '../../lib/index.js';
import { systemClock } from '../../backends/process/system-clock.js';
import { sampleProcessActivity } from '../../backends/process/process-activity.js';
import { spawnSession, type SpawnSession } from './spawn-session.js';

/** Each parse turn runs this late: well past the quiet watch's 250 ms. */
const BEHIND_MS = 700;
/** Slack for a loaded machine on top of the documented QUIET_MS. */
const SLACK_MS = 400;

describe('the quiet watch while the parse loop is behind', () => {
  let drive: SpawnSession | undefined;
  const dir = mkdtempSync(join(tmpdir(), 'td-quiet-behind-'));
  afterEach(async () => {
    await drive?.close();
    drive = undefined;
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('a flood that stops is judged once, QUIET_MS after its bytes are parsed, and the verdict follows the stop', async () => {
    const pidFile = join(dir, 'pid');
    const sampleTimes: number[] = [];
    let lastTurnAt = 0;
    const turnTimes: number[] = [];
    const scheduler = createParseScheduler({
      defer: (fn) =>
        void setTimeout(() => {
          lastTurnAt = performance.now();
          turnTimes.push(lastTurnAt);
          fn();
        }, BEHIND_MS),
      now: () => performance.now(),
      after: (ms, fn) => systemClock.after(ms, fn),
    });
    // 400 KB of 79-character lines in one burst, then a cat that reads its terminal (same pid: exec).
    const script = `echo $$ > ${pidFile}; yes abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyz | head -n 5000; exec cat`;
    drive = await spawnSession(['/bin/sh', '-c', script], {
      parseScheduler: scheduler,
      stuckMs: 60_000,
      sampleActivity: () => {
        sampleTimes.push(performance.now());
        if (!existsSync(pidFile)) return undefined;
        return sampleProcessActivity(Number(readFileSync(pidFile, 'utf8').trim()), systemClock.now());
      },
    });
    const s = drive.session;
    const states: { at: number; st: SessionStatus }[] = [];
    s.on('state', (st) => states.push({ at: performance.now(), st }));
    let lastOutputAt = 0;
    s.on('output', () => void (lastOutputAt = performance.now()));
    // The verdict for the stop: awaiting-input (cat reads its tty).
    const deadline = performance.now() + 15_000;
    while (!states.some((x) => x.st.state === 'awaiting-input') && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    // Let the late turns run out and any second judgment of the same stop happen, then count.
    await new Promise((r) => setTimeout(r, BEHIND_MS * 2 + QUIET_MS * 2));
    const verdict = states.find((x) => x.st.state === 'awaiting-input');
    expect(verdict?.st).toMatchObject({ state: 'awaiting-input', reason: 'tty_read' });
    // The loop was behind: a parse turn ran after output had been quiet for QUIET_MS.
    expect(lastTurnAt - lastOutputAt).toBeGreaterThan(QUIET_MS);
    // One process sample for the stop (before: one at once with a forced parse, one after it).
    expect(sampleTimes.filter((t) => t > lastOutputAt)).toHaveLength(1);
    // Judged QUIET_MS after the last parse turn (slack for load), not before the bytes were parsed.
    const at = (verdict as { at: number }).at;
    expect(at - lastTurnAt).toBeGreaterThanOrEqual(QUIET_MS - 5);
    expect(at - lastTurnAt).toBeLessThan(QUIET_MS + SLACK_MS);
    // Then idle: no sample, no parse turn after the verdict (nothing polls).
    expect(sampleTimes.filter((t) => t > at)).toEqual([]);
    expect(turnTimes.filter((t) => t > at)).toEqual([]);
    expect(s.read().content).toContain('abcdefghijklmnopqrstuvwxyz');
  }, 30_000);
});
