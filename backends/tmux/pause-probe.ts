/**
 * A pane tmux paused without the %pause reaching us. Seen with tmux 3.3a and 20 drives streaming
 * on two loaded cores (docs/benchmarks.md, 2026-12-02): a drive's control client got no more
 * output, nothing was left unread in its pipe, another client of the same server saw the pane's
 * new output, and a `refresh-client -A '%N:continue'` from our client resumed it (tmux answers
 * `%continue` only for a pane it had paused). The drive waited forever meanwhile.
 *
 * So after a flood, once output has stopped for QUIET_MS, one continue is sent: a no-op for a
 * pane that is not paused. When tmux answers %continue to it, the owner resyncs (the output tmux
 * dropped is recovered from a capture). One timer per flood, armed by output, re-armed only when
 * it fires while output still flows: an idle drive costs nothing.
 */
import type { Clock, TimerHandle } from '../../lib/common/clock.js';

/** Output since the last probe (or pause) that makes a flood worth probing after. */
const FLOOD_BYTES = 64 * 1024;
/** Output stopped this long after a flood ⇒ probe. */
const QUIET_MS = 1000;
/** A %continue this soon after the probe's reply still answers it. */
const ANSWER_GRACE_MS = 500;

export interface PauseProbePort {
  readonly clock: Clock;
  /** Sends the continue; resolves when tmux has answered it. */
  readonly probe: () => Promise<unknown>;
}

export class PauseProbe {
  private bytes = 0;
  private lastOutputAt = 0;
  private timer: TimerHandle | undefined;
  private inFlight = 0;
  private stopped = false;

  constructor(private readonly port: PauseProbePort) {}

  /** A probe's continue is in flight: a %continue now answers it. */
  get probing(): boolean {
    return this.inFlight > 0;
  }

  output(bytes: number): void {
    this.bytes += bytes;
    this.lastOutputAt = this.port.clock.now();
    if (this.bytes >= FLOOD_BYTES && this.timer === undefined && !this.stopped) this.arm(QUIET_MS);
  }

  /** tmux announced a pause: the resync continues the pane; the flood starts over. */
  paused(): void {
    this.bytes = 0;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(ms: number): void {
    const { clock } = this.port;
    this.timer = clock.after(ms, () => {
      this.timer = undefined;
      if (this.stopped) return;
      const quiet = clock.now() - this.lastOutputAt;
      if (quiet < QUIET_MS) return this.arm(Math.max(1, Math.ceil(QUIET_MS - quiet)));
      this.bytes = 0;
      this.inFlight += 1;
      void this.port
        .probe()
        .catch(() => undefined) // the client closed or timed out: its loss is reported elsewhere
        // A %continue tmux stored behind other lines may come just after the reply.
        .finally(() => clock.after(ANSWER_GRACE_MS, () => (this.inFlight -= 1)));
    });
  }
}
