/**
 * The drive's timers, each armed by an event and never an interval: the quiet watch (output
 * stopped ⇒ sample the process tree, publish the state, read the cost; output still flowing when
 * it fires ⇒ publish working), the re-sample (a quiet tree with no evidence yet, at doubling
 * intervals up to stuckMs), the stuck check (stuckMs later: busy or hung), the idle reaper
 * (idleTtlMs of nothing at all ⇒ evict) and the heartbeat (one deliberate periodic notification
 * for long drives). An idle session holds at most these one-shot timers and costs no CPU.
 */
import type { TimerHandle } from '../common/clock.js';
import { compareActivity, type ProcessActivitySample } from '../perceive/activity.js';
import type { SessionStatus } from '../perceive/status.js';
import type { CostGuard } from './cost-guard.js';
import type { DriveContext } from './drive-signals.js';
import type { Heartbeat, NotifyPolicy } from './session-events.js';
import type { Verdict } from './verdict.js';

/** Output stops for this long ⇒ the process tree is sampled and the state published. */
export const QUIET_MS = 250;
/** A quiet timer this much later than asked for waits one more loop turn before it decides (armQuiet). */
const LATE_MS = 20;
/** The first re-sample of a quiet tree that shows no evidence yet; later ones double. */
const RESAMPLE_FIRST_MS = 100;

export interface DriveWatchOptions {
  /** No output and no CPU or I/O progress for this long ⇒ stuck (worker.stuckMs). */
  readonly stuckMs: number;
  /** Evict a drive idle this long (worker.idleTtlMs); absent (or 0 in the config) = never. */
  readonly idleTtlMs: number | undefined;
  /** A heartbeat every this many ms while live; 0 = none. */
  readonly heartbeatNotifyMs: number;
  readonly notify: NotifyPolicy;
  /** One sample of the pane's process tree, or undefined once it is gone. */
  readonly sampleActivity: () => ProcessActivitySample | undefined;
  /** The clock's now() when the session object was made. */
  readonly startedAt: number;
}

export class DriveWatch {
  private quietTimer: TimerHandle | undefined;
  private stuckTimer: TimerHandle | undefined;
  private reapTimer: TimerHandle | undefined;
  private heartbeatTimer: TimerHandle | undefined;
  private resampleTimer: TimerHandle | undefined;
  /** No quiet decision before this time (a re-attached drive's first verdict: deferQuiet). */
  private quietNotBefore = 0;

  constructor(
    private readonly ctx: DriveContext,
    private readonly options: DriveWatchOptions,
    private readonly rooms: { readonly verdict: Verdict; readonly costGuard: CostGuard; readonly evict: (cap: string) => Promise<void> },
  ) {}

  /** Arms the quiet watch (once; it re-arms itself only when it fires early). Called on output and screen changes. */
  armQuiet(): void {
    const { signals, clock } = this.ctx;
    if (this.quietTimer || signals.phase !== 'live') return;
    const due = Math.max(signals.quietSince + QUIET_MS, this.quietNotBefore);
    const delay = Math.max(1, Math.ceil(due - clock.now()));
    const firesAt = clock.now() + delay;
    this.quietTimer = clock.after(delay, () => {
      // Fired late: the event loop was held (a loaded host, other drives' parsing) and output that
      // came meanwhile may still be unread in the pipe, so "quiet" would be judged on stale times
      // and every drive would sample its processes and classify its screen at once, holding the
      // loop longer still. Timers run before the loop polls I/O: decide one turn later.
      if (clock.now() - firesAt > LATE_MS) {
        this.quietTimer = clock.after(0, () => {
          this.quietTimer = undefined;
          this.onQuiet();
        });
        return;
      }
      this.quietTimer = undefined;
      this.onQuiet();
    });
  }

  /**
   * No quiet decision (process sample, verdict, stuck and cost checks) for `ms`, then as usual:
   * a drive re-attached by a takeover publishes its first verdict after the first inputs its
   * clients send at once (20 drives' first samples and classifications landed among those keys
   * and echoes, on the new host's busiest moment). status() and waits read the screen as always.
   */
  deferQuiet(ms: number): void {
    this.quietNotBefore = this.ctx.clock.now() + ms;
    this.quietTimer?.cancel();
    this.quietTimer = undefined;
    this.armQuiet();
  }

  /**
   * The user-facing heartbeat: ONE timer per drive, armed at bind and re-armed only when it fires.
   * It is a deliberate periodic notification for long drives, not a poll: it reads no screen (the
   * state is the last published classification) and stops when the drive ends.
   */
  armHeartbeat(): void {
    const every = this.options.heartbeatNotifyMs;
    const { signals, clock, events } = this.ctx;
    if (!(every > 0) || this.heartbeatTimer || signals.phase !== 'live') return;
    this.heartbeatTimer = clock.after(every, () => {
      this.heartbeatTimer = undefined;
      if (signals.phase !== 'live') return;
      const now = clock.now();
      const { startedAt } = this.options;
      const st = this.rooms.verdict.published;
      const hb: Heartbeat = {
        elapsedMs: Math.round(now - startedAt),
        lastActivityMs: Math.round(now - (Number.isFinite(signals.lastOutputAt) ? signals.lastOutputAt : startedAt)),
        interactions: signals.interactions,
        state: st?.state ?? 'working',
        reason: st?.reason ?? 'starting',
        ...(signals.costUsd !== undefined ? { costUsd: signals.costUsd } : {}),
      };
      events.emit('heartbeat', hb);
      if (this.options.notify === 'all') events.emit('notification', { kind: 'heartbeat', ...hb });
      this.armHeartbeat();
    });
  }

  stop(): void {
    for (const timer of [this.quietTimer, this.stuckTimer, this.reapTimer, this.heartbeatTimer, this.resampleTimer]) timer?.cancel();
    this.quietTimer = this.stuckTimer = this.reapTimer = this.heartbeatTimer = this.resampleTimer = undefined;
  }

  /** Output stopped: sample the process tree, publish the state, read the cost. */
  private onQuiet(): void {
    const { signals, clock } = this.ctx;
    if (signals.phase !== 'live') return;
    const last = signals.quietSince;
    if (clock.now() - last < QUIET_MS - 1) {
      // Output has not stopped for a whole quiet window: the program is producing now, and the
      // published state says so at once (a spinner that never pauses never reaches the quiet
      // path). Only the transition is published: a flood costs one classification, not one per window.
      // The verdict is output_flowing whatever the screen shows (the screen gives only its cursor and
      // suggestion): it reads the screen as parsed so far, and the bytes a stream is gathering stay in
      // their batch (parsing them here cost each drive one more parse of a skip's kept lines per
      // stream, outside the fair slices: ~half the quiet path's time in a many-streams profile).
      if (this.rooms.verdict.published?.state !== 'working') this.rooms.verdict.publish(QUIET_MS, 'as-parsed');
      return this.armQuiet();
    }
    // Bytes of this output still wait in the mirror's queue (a loaded loop: the parse scheduler has
    // not reached this drive's batch). The screen cannot be judged before they are parsed, and
    // their parse re-arms this watch (the mirror's change bumps lastChangeAt): the decision is made
    // QUIET_MS after it, as it was before. Judging now cost a process sample, a forced parse outside
    // the scheduler's fair slices and a classification, then the same again after that parse; and
    // a gap a loaded host put into a stream that goes on costs nothing (2026-12-02 profile).
    if (this.ctx.mirror.backlogBytes > 0) return;
    signals.quietSample = this.options.sampleActivity();
    signals.activity = undefined;
    const status: SessionStatus = this.rooms.verdict.publish();
    this.rooms.costGuard.check();
    // Busy or hung is decided stuckMs later, unless the program plainly waits for input.
    if (status.state !== 'awaiting-input' && status.state !== 'exited') this.armStuckCheck(last);
    if (status.state === 'working' && status.reason === 'cursor_not_parked') this.armResample(last, RESAMPLE_FIRST_MS);
    this.armReaper(last);
  }

  /**
   * Quiet with no evidence either way (working / cursor_not_parked): the program may start reading
   * its terminal after the quiet sample (cat after a slow start), which no output will announce.
   * The tree is sampled again at doubling intervals from 100 ms up to stuckMs, a handful of one-shot timers per
   * quiet period, ended by output, by evidence, or by the stuck check's own sample.
   */
  private armResample(quietSince: number, delayMs: number): void {
    const { signals, clock } = this.ctx;
    this.resampleTimer?.cancel();
    if (delayMs * 2 > this.options.stuckMs) return;
    this.resampleTimer = clock.after(delayMs, () => {
      this.resampleTimer = undefined;
      if (signals.phase !== 'live' || signals.quietSince > quietSince) return; // output came: the quiet path decides
      const sample = this.options.sampleActivity();
      if (!sample) return;
      // Only a new fact replaces the quiet sample: the stuck check measures from the first one.
      if (sample.readingTerminal) signals.quietSample = sample;
      const status = this.rooms.verdict.publish();
      if (status.state === 'working' && status.reason === 'cursor_not_parked') this.armResample(quietSince, delayMs * 2);
    });
  }

  private armStuckCheck(quietSince: number): void {
    const { signals, clock } = this.ctx;
    this.stuckTimer?.cancel();
    this.stuckTimer = clock.after(this.options.stuckMs, () => {
      this.stuckTimer = undefined;
      if (signals.phase !== 'live' || signals.quietSince > quietSince) return; // output came: stale
      const before = signals.quietSample;
      const after = this.options.sampleActivity();
      if (!before || !after) return;
      const activity = compareActivity(before, after);
      signals.activity = activity;
      const status = this.rooms.verdict.publish();
      // A silent busy program is checked again one stuckMs later (it may hang later); a stuck or
      // waiting one costs nothing more until it prints.
      if (status.state === 'working' && activity.busy !== 'idle') {
        signals.quietSample = after;
        this.armStuckCheck(quietSince);
      }
    });
  }

  /** An escalation or a dialog nobody answered is pending, or a dialog shows now. */
  private waitsForPerson(): boolean {
    return this.ctx.signals.awaitingPerson !== undefined || this.rooms.verdict.published?.dialog !== undefined;
  }

  /**
   * The idle reaper: one timer per quiet period. It evicts only a drive whose grid did not change
   * (the mirror's parse counter, which every parse, rebuild, reset and resize bumps: a digest here
   * walked every cell on every quiet period, and 20 drives streaming on a loaded host go quiet many
   * times a second), that printed nothing, and whose process tree used no CPU and did no I/O all along:
   * a busy or still-changing drive is never reaped. Nor is one that waits for a person (seed 000:
   * "a human owns its lifecycle and may reply later"): an escalation or a dialog nobody answered,
   * until a caller's input.
   */
  private armReaper(quietSince: number): void {
    const ttl = this.options.idleTtlMs;
    if (ttl === undefined || !(ttl > 0) || this.waitsForPerson()) return;
    const { signals, clock, mirror } = this.ctx;
    this.reapTimer?.cancel();
    const seq = mirror.seq;
    const before = signals.quietSample;
    this.reapTimer = clock.after(ttl, () => {
      this.reapTimer = undefined;
      if (signals.phase !== 'live' || signals.quietSince > quietSince || this.waitsForPerson()) return;
      if (mirror.seq !== seq) return;
      const after = this.options.sampleActivity();
      if (before && after && compareActivity(before, after).busy !== 'idle') return this.armReaper(quietSince);
      void this.rooms.evict('worker.idleTtlMs').catch(() => undefined);
    });
  }
}
