/**
 * A pane tmux paused without the %pause reaching us: tmux 3.3a stores a line it must write while
 * pane output is queued for the client (a command's reply, a notification) behind that output.
 * When the pane's queued output then ages past pause-after inside tmux's write callback, tmux
 * drops it, stores `%pause` behind that line, and (its buffer to the client being empty) turns the
 * write event off: neither line is written until tmux writes another line to this client
 * (docs/backends.md; test/backends/tmux/stranded-pause.test.ts makes it on demand). The drive's
 * output stops for good meanwhile.
 *
 * So once output has stopped for QUIET_MS during a flood (≥ FLOOD_BYTES, or output tmux held
 * ≥ BEHIND_MS: tmux queues for us), one `continue` is sent: its reply makes tmux write what it
 * holds, and it continues a pane paused. The flood is over only when a probe's reply comes with no
 * output before it (tmux had nothing queued for us when it ran the command); otherwise the next
 * quiet stretch is probed again, and a probe whose reply has not come in QUIET_MS (its own reply
 * may be the stranded line) is followed by one more. One timer, armed by output; none once the flood
 * is over: an idle drive costs nothing.
 */
import type { Clock, TimerHandle } from '../../lib/common/clock.js';

/** Output that makes a flood worth probing after. */
const FLOOD_BYTES = 64 * 1024;
/** Output tmux held this long before sending it: tmux is queueing for us, a flood whatever its size. */
const BEHIND_MS = 1000;
/** Output stopped this long during a flood ⇒ probe. */
const QUIET_MS = 1000;
/** A %continue this soon after the probe's reply still answers it. */
const ANSWER_GRACE_MS = 500;
/**
 * Probes unanswered with no output since the last: the second one's reply gets the first's written
 * if tmux answers at all. Output since the last probe allows another (those replies may all be
 * stranded behind output tmux has since dropped).
 */
const MAX_UNANSWERED = 2;

export interface PauseProbePort {
  readonly clock: Clock;
  /** Sends the continue; resolves when tmux has answered it. */
  readonly probe: () => Promise<unknown>;
}

export class PauseProbe {
  private bytes = 0;
  private behind = false;
  /** Chunks of output so far: a reply tells whether any came between its probe and itself. */
  private chunks = 0;
  private lastOutputAt = 0;
  private lastProbeAt = 0;
  /** `chunks` when the last probe was sent. */
  private chunksAtProbe = 0;
  private timer: TimerHandle | undefined;
  private unanswered = 0;
  /** Probes answered less than ANSWER_GRACE_MS ago, or not yet. */
  private inFlight = 0;
  /** tmux announced a pause since the last probe: a %continue now answers that pause's resync. */
  private pauseSeen = false;
  private stopped = false;

  constructor(private readonly port: PauseProbePort) {}

  /** A probe's continue is in flight and no %pause came since: a %continue now answers the probe. */
  get probing(): boolean {
    return this.inFlight > 0 && !this.pauseSeen;
  }

  private get flooding(): boolean {
    return this.bytes >= FLOOD_BYTES || this.behind;
  }

  /** `ageMs`: how long tmux held the chunk (`%extended-output`), when known. */
  output(bytes: number, ageMs?: number): void {
    this.bytes += bytes;
    if (ageMs !== undefined && ageMs >= BEHIND_MS) this.behind = true;
    this.chunks += 1;
    this.lastOutputAt = this.port.clock.now();
    if (this.flooding && this.timer === undefined && !this.stopped) this.arm(QUIET_MS);
  }

  /** tmux announced a pause: the resync continues the pane; the flood starts over. */
  paused(): void {
    this.pauseSeen = true;
    this.bytes = 0;
    this.behind = false;
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(ms: number): void {
    this.timer = this.port.clock.after(ms, () => this.fire());
  }

  private fire(): void {
    this.timer = undefined;
    if (this.stopped || (!this.flooding && this.unanswered === 0)) return;
    const quiet = this.port.clock.now() - Math.max(this.lastOutputAt, this.lastProbeAt);
    if (quiet < QUIET_MS) return this.arm(Math.max(1, Math.ceil(QUIET_MS - quiet)));
    // Two unanswered and nothing since: tmux is not answering this client (the command deadline reports it).
    if (this.unanswered >= MAX_UNANSWERED && this.chunks === this.chunksAtProbe) return;
    this.send();
    this.arm(QUIET_MS);
  }

  private send(): void {
    const { clock } = this.port;
    const chunksAtSend = this.chunks;
    this.chunksAtProbe = chunksAtSend;
    this.lastProbeAt = clock.now();
    this.unanswered += 1;
    this.inFlight += 1;
    this.pauseSeen = false;
    void this.port
      .probe()
      .then(
        () => {
          this.unanswered -= 1;
          // No output before the reply: tmux had none queued for us when it ran the command.
          if (this.chunks === chunksAtSend && this.unanswered === 0) {
            this.bytes = 0;
            this.behind = false;
          }
        },
        () => (this.unanswered -= 1), // the client closed or timed out: its loss is reported elsewhere
      )
      // A %continue tmux stored behind other lines may come just after the reply.
      .finally(() => clock.after(ANSWER_GRACE_MS, () => (this.inFlight -= 1)));
  }
}
