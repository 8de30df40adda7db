/**
 * The drive's timers, each armed by an event and never an interval: the quiet watch (output
 * stopped ⇒ sample the process tree, publish the state, read the cost), the stuck check (stuckMs
 * later: busy or hung), the idle reaper (idleTtlMs of nothing at all ⇒ evict) and the heartbeat
 * (one deliberate periodic notification for long drives). An idle session holds at most these
 * four one-shot timers and costs no CPU.
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

  constructor(
    private readonly ctx: DriveContext,
    private readonly options: DriveWatchOptions,
    private readonly rooms: { readonly verdict: Verdict; readonly costGuard: CostGuard; readonly evict: (cap: string) => Promise<void> },
  ) {}

  /** Arms the quiet watch (once; it re-arms itself only when it fires early). Called on output and screen changes. */
  armQuiet(): void {
    const { signals, clock } = this.ctx;
    if (this.quietTimer || signals.phase !== 'live') return;
    const due = signals.quietSince + QUIET_MS;
    this.quietTimer = clock.after(Math.max(1, Math.ceil(due - clock.now())), () => {
      this.quietTimer = undefined;
      this.onQuiet();
    });
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
    for (const timer of [this.quietTimer, this.stuckTimer, this.reapTimer, this.heartbeatTimer]) timer?.cancel();
    this.quietTimer = this.stuckTimer = this.reapTimer = this.heartbeatTimer = undefined;
  }

  /** Output stopped: sample the process tree, publish the state, read the cost. */
  private onQuiet(): void {
    const { signals, clock } = this.ctx;
    if (signals.phase !== 'live') return;
    const last = signals.quietSince;
    if (clock.now() - last < QUIET_MS - 1) return this.armQuiet();
    signals.quietSample = this.options.sampleActivity();
    signals.activity = undefined;
    const status: SessionStatus = this.rooms.verdict.publish();
    this.rooms.costGuard.check();
    // Busy or hung is decided stuckMs later, unless the program plainly waits for input.
    if (status.state !== 'awaiting-input' && status.state !== 'exited') this.armStuckCheck(last);
    this.armReaper(last);
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
   * The idle reaper: one timer per quiet period. It evicts only a drive whose screen digest did not
   * change, that printed nothing, and whose process tree used no CPU and did no I/O all along:
   * a busy or still-changing drive is never reaped. Nor is one that waits for a person (seed 000:
   * "a human owns its lifecycle and may reply later"): an escalation or a dialog nobody answered,
   * until a caller's input.
   */
  private armReaper(quietSince: number): void {
    const ttl = this.options.idleTtlMs;
    if (ttl === undefined || !(ttl > 0) || this.waitsForPerson()) return;
    const { signals, clock, mirror } = this.ctx;
    this.reapTimer?.cancel();
    const digest = mirror.digest();
    const before = signals.quietSample;
    this.reapTimer = clock.after(ttl, () => {
      this.reapTimer = undefined;
      if (signals.phase !== 'live' || signals.quietSince > quietSince || this.waitsForPerson()) return;
      if (mirror.digest() !== digest) return;
      const after = this.options.sampleActivity();
      if (before && after && compareActivity(before, after).busy !== 'idle') return this.armReaper(quietSince);
      void this.rooms.evict('worker.idleTtlMs').catch(() => undefined);
    });
  }
}
