/**
 * Where pane output goes while a capture is in flight (reference §5). A capture batch's grid reply
 * is a point in the stream: `%output` before that reply is inside the capture, `%output` after it
 * continues it. The gate counts reply blocks to know which side of that point each chunk is on:
 * before it, a chunk is dropped (the capture has it) or passed on (the mirror's parser must see it:
 * a resync of a followed stream, or a fidelity check); after it, chunks are held until the batch's
 * user (the rebuild, the comparison) is done, then released in order.
 *
 * Pure: events in, deliveries out, no timer and no I/O, so every ordering can be driven by a test.
 */
import { TmuxDriveError } from '../../lib/common/errors.js';

/** What happens to output that arrives before the capture's reply. */
export type BeforeCapture = 'drop' | 'pass';

type GatePhase =
  | { readonly kind: 'live' }
  /** Until reply number `reply` (counted since the gate was made) has ended. */
  | { readonly kind: 'until-reply'; readonly reply: number; readonly before: BeforeCapture }
  /** The capture's reply has ended: later output waits for release(). */
  | { readonly kind: 'hold'; readonly held: Uint8Array[] };

const LIVE: GatePhase = Object.freeze({ kind: 'live' });

export class CaptureGate {
  private phase: GatePhase = LIVE;
  /** Reply blocks ended so far, on whatever stream feeds the gate. */
  private repliesSeen = 0;

  /** `drive` names the drive in errors. */
  constructor(
    private readonly deliver: (data: Uint8Array) => void,
    private readonly drive: string,
  ) {}

  /** True from bracket() until its release. */
  get inFlight(): boolean {
    return this.phase.kind !== 'live';
  }

  /** A chunk of the pane's output, in stream order. */
  output(data: Uint8Array): void {
    const phase = this.phase;
    if (phase.kind === 'hold') phase.held.push(data);
    else if (phase.kind === 'live' || phase.before === 'pass') this.deliver(data);
  }

  /** A reply block ended (`%end` or `%error`, any command's: each one moves the count). */
  replyEnded(): void {
    this.repliesSeen += 1;
    const phase = this.phase;
    if (phase.kind === 'until-reply' && this.repliesSeen === phase.reply) this.phase = { kind: 'hold', held: [] };
  }

  /**
   * Runs one capture. `send` writes the batch and resolves with its replies; the capture's reply
   * is the `replyAhead`-th reply block to end from now on (replies to commands already in flight,
   * timed-out ones included, come first). `use` runs with the replies while later output is still
   * held; then the held output is released, also when `send` or `use` fails. One at a time:
   * a second bracket while one is open fails (TMUX_COMMAND_FAILED) and changes nothing.
   */
  async bracket<R, T>(replyAhead: number, before: BeforeCapture, send: () => Promise<R>, use: (replies: R) => T | Promise<T>): Promise<T> {
    if (this.phase.kind !== 'live') throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'a capture is already in flight', { name: this.drive });
    this.phase = { kind: 'until-reply', reply: this.repliesSeen + replyAhead, before };
    let replies: R;
    try {
      replies = await send();
    } catch (err) {
      this.release();
      throw err;
    }
    try {
      return await use(replies);
    } finally {
      this.release();
    }
  }

  /** Back to live; what was held goes out in order (a delivery that captures again finds the gate live). */
  private release(): void {
    const phase = this.phase;
    this.phase = LIVE;
    if (phase.kind === 'hold') for (const data of phase.held) this.deliver(data);
  }
}
