/**
 * The session's classification: `status()` runs the pure classifier on the mirror and the drive's
 * signals, and `publish()` — called when output settles, while output keeps flowing (once per
 * quiet window), when a re-sample or the stuck check decides, on exit and on loss — emits `state` on a change of state or reason (recording it), `attention` when a
 * person is needed, and hands a settled dialog to the auto-answer.
 */
import type { CellGrid } from '../emulator/cell-grid.js';
import type { ScreenSnapshot } from '../emulator/mirror.js';
import type { Profile } from '../perceive/profile.js';
import { classify, type SessionStatus } from '../perceive/status.js';
import type { DriveContext } from './drive-signals.js';
import type { Outcomes } from './outcomes.js';

/**
 * How a verdict reads the screen: `current` parses what the mirror still queues first (every
 * screen a caller reads is current); `as-parsed` reads it as parsed so far, for a verdict those
 * bytes cannot change (Mirror.screenAsParsed).
 */
export type ScreenRead = 'current' | 'as-parsed';

export class Verdict {
  private last: SessionStatus | undefined;

  constructor(
    private readonly ctx: DriveContext,
    private readonly options: { readonly profile: Profile; readonly stuckMs: number },
    private readonly outcomes: Outcomes,
    /** A settled dialog is showing: answer it or escalate (the auto-answer room). */
    private readonly onDialog: (status: SessionStatus) => void,
  ) {}

  /** The last classification published (the heartbeat reports it without reading the screen). */
  get published(): SessionStatus | undefined {
    return this.last;
  }

  /**
   * `flowingMs`: output this recent is "still producing" (default: the classifier's 100 ms).
   * `screen: 'as-parsed'`: the screen as parsed so far, bytes still queued left to their batch.
   */
  status(flowingMs?: number, screen: ScreenRead = 'current'): SessionStatus {
    const { mirror } = this.ctx;
    if (screen === 'as-parsed') {
      const { snapshot, cells } = mirror.screenAsParsed();
      return this.classifyScreen(snapshot, cells, flowingMs);
    }
    return this.classifyScreen(mirror.snapshot({ format: 'text' }), mirror.cells().cells, flowingMs);
  }

  /** The verdict on a screen already read from the mirror (read() shares its snapshot and cells). */
  classifyScreen(snap: ScreenSnapshot, cells: CellGrid['cells'], flowingMs?: number): SessionStatus {
    const { signals, clock } = this.ctx;
    return classify({
      snapshot: { ...snap, cells },
      now: clock.now(),
      lastOutputAt: signals.lastOutputAt,
      lastChangeAt: signals.lastChangeAt,
      exit: signals.exit,
      lost: signals.phase === 'lost' ? (signals.lostReason ?? 'lost') : undefined,
      interactions: signals.interactions,
      profile: this.options.profile,
      stuckMs: this.options.stuckMs,
      activity: signals.activity,
      sample: signals.quietSample,
      ...(flowingMs !== undefined ? { flowingMs } : {}),
    });
  }

  /**
   * Emits `state` on a change of state or reason, `attention` when a person is needed, and hands
   * dialogs on. `flowingMs` widens "output is flowing" while output has not stopped (the watch's
   * quiet window), so a program that never pauses is published working as it works.
   */
  publish(flowingMs?: number, screen: ScreenRead = 'current'): SessionStatus {
    const status = this.status(flowingMs, screen);
    const prev = this.last;
    this.last = status;
    const changed = !prev || prev.state !== status.state || prev.reason !== status.reason || prev.dialog?.digest !== status.dialog?.digest;
    if (!changed) return status;
    this.ctx.signals.noteState({ state: status.state, reason: status.reason });
    this.ctx.events.emit('state', status);
    const { confidence, reason } = status;
    if (status.dialog && status.state === 'awaiting-input') this.onDialog(status);
    else if (status.state === 'awaiting-input' && prev?.state !== 'awaiting-input') this.outcomes.attention({ kind: 'input_needed', confidence, reason });
    else if (status.state === 'stuck') this.outcomes.attention({ kind: 'stuck', confidence, reason });
    else if (status.state === 'exited' && prev?.state !== 'exited') this.outcomes.attention({ kind: 'exited', confidence, reason });
    return status;
  }
}
