/**
 * The verdict published while output flows (issue 16): the quiet watch, finding output still
 * flowing, publishes `working` / `output_flowing` once, and that verdict is the same whatever the
 * screen shows. It must not parse the bytes a plain-text stream is gathering into a batch to make
 * it: that parse, outside the parse scheduler's turns, cost each drive one more parse of the lines
 * a fast-forward keeps per stream (a many-streams profile, 2026-12-02). A real program in a pty
 * prints a flood of plain text; the parse scheduler is the real one, its turns held until the
 * flood is over, so the mirror's parse counter moves only where a write takes the sync path (the
 * flood's first chunks, before it counts as a stream) or a read parses. (Whether bytes are queued
 * at the moment of that verdict depends on the host's load; verdict-as-parsed.test.ts pins the
 * read with bytes queued.) Then the turns run, and
 * the screen and the final verdict are what the program left.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import type { Mirror } from '../../lib/emulator/mirror.js';
import type { SessionStatus } from '../../lib/index.js';
import type { Session } from '../../lib/session/session.js';
import { systemClock } from '../../backends/process/system-clock.js';
import { spawnSession, type SpawnSession } from './spawn-session.js';

/**
 * A prompt (published awaiting-input), a second later 3 MB of plain lines at once (a stream: the
 * pty full, over 16 KB per 50 ms however loaded the host), then a marker and a prompt again. No
 * input is sent: nothing but the watch reads the screen while the flood goes.
 */
const SCRIPT = `printf '$ '; sleep 1; echo; yes 'plain text line of a flood, forty-some chars' | head -c 3000000; sleep 0.3; echo END-OF-''FLOOD; printf '$ '; exec cat`;

function mirrorOf(s: Session): Mirror {
  return (s as unknown as { ctx: { mirror: Mirror } }).ctx.mirror;
}

describe('the verdict published while output flows', () => {
  let drive: SpawnSession | undefined;
  afterEach(async () => {
    await drive?.close();
    drive = undefined;
  });

  it('is output_flowing without parsing the bytes the stream gathers; the screen is exact once they are parsed', async () => {
    let held: (() => void)[] | undefined = [];
    const scheduler = createParseScheduler({
      defer: (fn) => (held ? held.push(fn) : void setImmediate(fn)),
      now: () => performance.now(),
      after: (ms, fn) => systemClock.after(ms, fn),
    });
    drive = await spawnSession(['/bin/sh', '-c', SCRIPT], { parseScheduler: scheduler });
    const s = drive.session;
    // The mirror's parse counter after each output event and at each verdict: with the turns held,
    // only a write's sync path or a read that parses can move it.
    let seqAfterOutput = 0;
    const flowing: { status: SessionStatus; seq: number; seqAfterOutput: number }[] = [];
    const states: SessionStatus[] = [];
    s.on('state', (status) => {
      states.push(status);
      if (status.reason === 'output_flowing') flowing.push({ status, seq: mirrorOf(s).seq, seqAfterOutput });
    });
    const until = async (state: SessionStatus['state']): Promise<void> => {
      const deadline = performance.now() + 60_000;
      while (states.at(-1)?.state !== state && performance.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    };
    let text = '';
    const decoder = new TextDecoder();
    const flooded = new Promise<void>((resolve) => {
      s.on('output', (data) => {
        seqAfterOutput = mirrorOf(s).seq;
        text += decoder.decode(data, { stream: true });
        if (text.endsWith('END-OF-FLOOD\r\n$ ')) resolve();
      });
    });
    // The transition to working is what the watch publishes while output flows.
    await until('awaiting-input');
    expect(states.at(-1)).toMatchObject({ state: 'awaiting-input', reason: 'cursor_parked' });
    await flooded;
    // Published on the way to working (again after a gap a loaded host put into the flood), and
    // nothing parsed for it (before: the publish parsed the queued bytes).
    expect(flowing.length).toBeGreaterThanOrEqual(1);
    for (const f of flowing) {
      expect(f.status).toMatchObject({ state: 'working', reason: 'output_flowing' });
      expect(f.seq).toBe(f.seqAfterOutput);
    }
    // The flood was gathered, not parsed as it came: bytes still wait for the held turns.
    expect(mirrorOf(s).backlogBytes).toBeGreaterThan(0);
    // The turns run: the batch is parsed (skipping what scrolled out), and the drive is judged on it.
    const turns = held ?? [];
    held = undefined;
    for (const fn of turns) fn();
    await until('awaiting-input');
    expect(states.at(-1)).toMatchObject({ state: 'awaiting-input' });
    expect(states.at(-1)).toMatchObject({ reason: 'cursor_parked' });
    // The screen is the stream's last rows (its lines fit the 80 columns; the last is the prompt's).
    const printed = text.split('\r\n').map((l) => l.trimEnd());
    expect(printed.at(-2)).toMatch(/END-OF-FLOOD$/);
    expect(s.read().content.split('\n')).toEqual(printed.slice(-24));
  }, 150_000);
});
