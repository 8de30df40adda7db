/**
 * A pending text wait and a plain-text flood (issue 16): the wait looks at the screen once output
 * has been quiet 30 ms, and it must not hurry the mirror's gathering batch to do so. Hurrying ended
 * the batch at every such gap (on a loaded loop, many per second), and each batch's fast-forward
 * parses the rows and history it keeps. A real program in a pty prints bursts of plain text with
 * 50 ms gaps; the parse scheduler is the real one on real timers, wrapped only to count how often
 * a batch fell due (`request`). And the screen is still looked at: a text that shows only on the
 * screen (drawn over with CR, never in the stream as a whole) ends the wait once the batch is parsed.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createParseScheduler, type ParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import { systemClock } from '../../backends/process/system-clock.js';
import { spawnSession, type SpawnSession } from './spawn-session.js';

/** 30 bursts of ~24 KB of plain lines (over the 16 KB per 50 ms that makes a stream), 50 ms apart; the last line is cut short. */
function bursts(end: string): string {
  return `for i in $(seq 30); do yes 'plain text line of a flood, forty-some chars' | head -c 24000; sleep 0.05; done; ${end}; exec cat`;
}

function countingScheduler(): { scheduler: ParseScheduler; dues: () => number } {
  const inner = createParseScheduler({ defer: (fn) => void setImmediate(fn), now: () => performance.now(), after: (ms, fn) => systemClock.after(ms, fn) });
  let dues = 0;
  const scheduler: ParseScheduler = {
    request: (job) => {
      dues++;
      inner.request(job);
    },
    cancel: (job) => inner.cancel(job),
    now: () => inner.now(),
    after: (ms, fn) => inner.after(ms, fn),
  };
  return { scheduler, dues: () => dues };
}

describe('a text wait pending during a plain-text flood', () => {
  let drive: SpawnSession | undefined;
  afterEach(async () => {
    await drive?.close();
    drive = undefined;
  });

  /** Batches that fell due while the program printed its bursts and `END-OF-BURSTS`. */
  async function run(withWait: boolean): Promise<number> {
    const { scheduler, dues } = countingScheduler();
    drive = await spawnSession(['/bin/sh', '-c', `sleep 0.3; ${bursts("echo END-OF-''BURSTS")}`], { parseScheduler: scheduler });
    const s = drive.session;
    const waited = withWait ? s.wait({ forText: 'END-OF-BURSTS', timeoutMs: 30_000 }) : undefined;
    let text = '';
    const decoder = new TextDecoder();
    const ended = new Promise<void>((resolve) => {
      s.on('output', (data) => {
        text = (text + decoder.decode(data, { stream: true })).slice(-200);
        if (text.includes('END-OF-BURSTS')) resolve();
      });
    });
    await ended;
    if (waited) expect((await waited).outcome).toBe('text');
    const n = dues();
    await drive.close();
    drive = undefined;
    return n;
  }

  it('gathers the flood into as many batches as without the wait', async () => {
    const without = await run(false);
    const withWait = await run(true);
    // Before: one batch per 50 ms gap with the wait pending (~30 more than without it).
    expect(withWait).toBeLessThanOrEqual(without + 8);
  }, 60_000);

  it('still finds a text that shows only on the screen, once the flood is parsed', async () => {
    // The stream says "hexlo", CR, "hel" (no "hello" in it); the screen row reads "hello".
    drive = await spawnSession(['/bin/sh', '-c', `sleep 0.3; ${bursts("echo; printf 'hexlo\\rhel'")}`]);
    const s = drive.session;
    const result = await s.wait({ forText: 'hello', timeoutMs: 30_000 });
    expect(result.outcome).toBe('text');
    expect(s.read().content).toContain('hello');
  }, 60_000);
});
