/**
 * The verdict's `as-parsed` read (issue 16): the quiet watch publishes `working` / `output_flowing`
 * while output flows, a verdict the bytes still queued cannot change, so it reads the screen as
 * parsed so far and leaves a gathering batch alone. A real mirror whose parse scheduler never runs
 * a turn (only a read that parses can move its grid), and the drive's real signals and outcomes.
 */
import { EventEmitter } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { createParseScheduler } from '../../lib/emulator/parse-scheduler.js';
import { Mirror } from '../../lib/emulator/mirror.js';
import { GENERIC_PROFILE } from '../../lib/perceive/profile.js';
import { DriveSignals, type DriveContext } from '../../lib/session/drive-signals.js';
import { QUIET_MS } from '../../lib/session/drive-watch.js';
import { Outcomes } from '../../lib/session/outcomes.js';
import type { SessionEvents } from '../../lib/session/session-events.js';
import type { SessionStatus } from '../../lib/index.js';
import { Transcript } from '../../lib/session/transcript.js';
import { Verdict } from '../../lib/session/verdict.js';
import { systemClock } from '../../backends/process/system-clock.js';

const enc = new TextEncoder();
const disposables: { dispose(): void }[] = [];
afterEach(() => {
  for (const d of disposables.splice(0)) d.dispose();
});

function drive(): { ctx: DriveContext; verdict: Verdict; states: SessionStatus[] } {
  const scheduler = createParseScheduler({ defer: () => undefined, now: () => performance.now(), after: (ms, fn) => systemClock.after(ms, fn) });
  const mirror = new Mirror({ cols: 40, rows: 10, scrollback: 200, scheduler });
  disposables.push(mirror);
  const transcript = new Transcript(1 << 20);
  const events = new EventEmitter<SessionEvents>();
  const ctx: DriveContext = { id: 'd1', clock: systemClock, signals: new DriveSignals('d1', transcript, 0), mirror, transcript, events };
  const states: SessionStatus[] = [];
  events.on('state', (s) => states.push(s));
  const verdict = new Verdict(ctx, { profile: GENERIC_PROFILE, stuckMs: 30_000 }, new Outcomes(ctx, 'none', systemClock.now()), () => undefined);
  return { ctx, verdict, states };
}

describe('Verdict: the screen as parsed', () => {
  it('publishes output_flowing without parsing what the mirror queues; a current read parses it', () => {
    const { ctx, verdict, states } = drive();
    const { mirror, signals } = ctx;
    mirror.write(enc.encode('$ '));
    const queued = `cat big\r\n${'line of a flood\r\n'.repeat(400)}`;
    mirror.write(enc.encode(queued)); // over the sync limit: queued, and no turn ever runs
    signals.lastOutputAt = systemClock.now();
    const seq = mirror.seq;

    const flowing = verdict.publish(QUIET_MS, 'as-parsed');
    expect(flowing).toMatchObject({ state: 'working', reason: 'output_flowing', cursor: { x: 2, y: 0 } });
    expect(states).toEqual([flowing]);
    expect(mirror.backlogBytes).toBe(queued.length);
    expect(mirror.seq).toBe(seq);

    // The same verdict read current: the queued bytes are parsed first (the cursor below the flood).
    const current = verdict.status(QUIET_MS);
    expect(current).toMatchObject({ state: 'working', reason: 'output_flowing', cursor: { x: 0, y: 9 } });
    expect(mirror.backlogBytes).toBe(0);
    expect(mirror.seq).toBeGreaterThan(seq);
  });
});
