/**
 * The spend ceiling (config `drive.maxCostUsd`): the profile's cost line is read on a settled
 * screen; past the ceiling the drive escalates (needs-you, cost_limit) and is stopped — interrupted
 * through the input gate like any keystroke, then evicted after a short grace.
 */
import { readCost } from '../perceive/cost.js';
import type { Profile } from '../perceive/profile.js';
import type { DriveContext } from './drive-signals.js';
import type { InputGate } from './input-gate.js';
import type { Outcomes } from './outcomes.js';
import type { WaitEngine } from './wait.js';

/** After the cost limit interrupts the program, how long it gets to stop before the drive is evicted. */
const COST_STOP_GRACE_MS = 2000;
const CAP = 'drive.maxCostUsd';

export class CostGuard {
  private stopping = false;

  constructor(
    private readonly ctx: DriveContext,
    private readonly options: { readonly profile: Profile; readonly maxCostUsd: number | null },
    private readonly rooms: { readonly gate: InputGate; readonly waits: WaitEngine; readonly outcomes: Outcomes; readonly evict: (cap: string) => Promise<void> },
  ) {}

  /** Reads the cost line of the settled screen; stops the drive past the ceiling (once). */
  check(): void {
    const { signals, mirror, transcript, events } = this.ctx;
    const { profile, maxCostUsd: cap } = this.options;
    if (!profile.cost || signals.phase !== 'live') return;
    const reading = readCost(mirror.snapshot({ format: 'text' }), profile);
    if (reading === undefined) return;
    signals.costUsd = reading;
    if (cap === null || reading <= cap || this.stopping) return;
    this.stopping = true;
    transcript.append('incident', undefined, { code: 'cost_limit' });
    events.emit('incident', 'cost_limit', { limitUsd: cap, costUsd: reading });
    this.rooms.outcomes.attention({ kind: 'input_needed', confidence: 'high', reason: 'cost_limit' });
    void this.stop();
  }

  private async stop(): Promise<void> {
    const { gate, waits, evict } = this.rooms;
    try {
      const backend = gate.admit('signal', 'interrupt', { cap: CAP });
      await backend.signal('interrupt');
      await waits.wait({ forExit: true, timeoutMs: COST_STOP_GRACE_MS });
    } catch {
      /* it is evicted below either way */
    }
    await evict(CAP).catch(() => undefined);
  }
}
