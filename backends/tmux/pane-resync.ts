/**
 * The resync protocol of one drive (reference §5): a batch of state + captures whose replies
 * bracket the pane output exactly (capture-gate.ts), so the mirror is rebuilt without a gap or an
 * overlap; the same bracket holds output while a fidelity check compares the mirror with tmux's
 * grid. Captures run one at a time, in call order.
 */
import { TmuxDriveError } from '../../lib/common/errors.js';
import { readPaneCapture, type PaneCapture } from '../../lib/control/pane-capture.js';
import { paneSnapshot, visibleScreen } from '../../lib/control/pane-snapshot.js';
import { PANE_STATE_FORMAT } from '../../lib/control/pane-state.js';
import type { PaneId } from '../../lib/control/parser.js';
import type { TmuxCommand } from '../../lib/control/tmux-commands.js';
import type { BackendListener, VisibleGrid } from '../../lib/session/backend.js';
import { CaptureGate } from './capture-gate.js';
import type { ControlClient } from './control-client.js';

const CURSOR_FORMAT = '#{cursor_x}\t#{cursor_y}';

/** What the resync needs from the backend it serves. */
export interface ResyncPort {
  /** The drive's name, for errors. */
  readonly drive: string;
  /** The live control client; throws (SESSION_CLOSED) when there is none. */
  client(): Pick<ControlClient, 'outstanding' | 'batch'>;
  pane(): PaneId;
  readonly listener: Pick<BackendListener, 'output' | 'resync'>;
  /** A capture (not the exit's own) showed the pane dead. */
  paneDead(): void;
}

export class PaneResync {
  /** Pane output passes through it to the listener, steered around captures in flight. */
  private readonly gate: CaptureGate;
  /** The capture in flight, if any (see serial()). */
  private captures: Promise<unknown> = Promise.resolve();
  /** tmux paused the pane (%pause): the next resync sends the continue in its batch. */
  private paused = false;
  /** True once a resync has completed: from then on every pane byte reaches the listener. */
  private followed = false;

  constructor(private readonly port: ResyncPort) {
    this.gate = new CaptureGate((data) => port.listener.output(data), port.drive);
  }

  /** A chunk of the pane's output. */
  output(data: Uint8Array): void {
    this.gate.output(data);
  }

  /** A reply block of the control client ended. */
  replyEnded(): void {
    this.gate.replyEnded();
  }

  /** tmux paused the pane and discarded its queued output: the next resync must continue it. */
  pause(): void {
    this.paused = true;
  }

  /** A new control client: its stream does not continue the old one, and no pause is pending on it. */
  restart(): void {
    this.paused = false;
    this.followed = false;
  }

  /**
   * A resync batch, optionally preceded by commands that change the pane (they run in the same
   * batch, so the capture shows their effect and nothing the program did afterwards).
   *
   * Once the stream has been followed since attach, output before the capture is passed on, not
   * dropped: the capture supersedes its cells, but the mirror's parser must see it to know the
   * SGR pen, charsets and saved cursor the program continues from, which tmux 3.3a cannot report
   * (`PaneCapture.continuous`). After a %pause tmux has discarded output, so nothing carries.
   */
  resync(prefix: readonly TmuxCommand[], reason: string, opts: { readonly withoutHistory?: boolean } = {}): Promise<void> {
    return this.serial(() => this.resyncNow(prefix, reason, opts.withoutHistory === true));
  }

  /** A fresh capture of the pane, outside the gate (nothing is rebuilt from it). */
  async capture(): Promise<PaneCapture> {
    const batch = paneSnapshot(this.port.pane(), PANE_STATE_FORMAT, { withContinue: false });
    return readPaneCapture(batch, await this.port.client().batch(batch.commands));
  }

  compareGrid<T>(compare: (grid: VisibleGrid) => T | Promise<T>): Promise<T> {
    // Output after the grid's reply is held until the comparison is done: both sides show one moment.
    return this.serial(() => {
      const batch = visibleScreen(this.port.pane(), CURSOR_FORMAT);
      const client = this.port.client();
      return this.gate.bracket(client.outstanding + batch.captureAt, 'pass', () => client.batch(batch.commands), (replies) => {
        let parts;
        try {
          parts = batch.read(replies);
        } catch (err) {
          throw new TmuxDriveError('TMUX_COMMAND_FAILED', 'incomplete grid batch', {}, { cause: err });
        }
        const [x, y] = parts.cursor.split('\t').map(Number);
        return compare({ capture: parts.capture, cursor: { x: x ?? 0, y: y ?? 0 } });
      });
    });
  }

  /** Captures run one at a time: a %pause during a resize waits for it, then consumes the pause. */
  private serial<T>(run: () => Promise<T>): Promise<T> {
    const next = this.captures.then(run);
    this.captures = next.catch(() => undefined);
    return next;
  }

  private async resyncNow(prefix: readonly TmuxCommand[], reason: string, withoutHistory: boolean): Promise<void> {
    const withContinue = this.paused;
    this.paused = false;
    const continuous = this.followed && !withContinue;
    const batch = paneSnapshot(this.port.pane(), PANE_STATE_FORMAT, { prefix, withContinue, withoutHistory });
    let capture: PaneCapture;
    try {
      const client = this.port.client();
      // Replies to commands already in flight (timed-out ones included) come before the batch's.
      capture = await this.gate.bracket(client.outstanding + batch.captureAt, continuous ? 'pass' : 'drop', () => client.batch(batch.commands), (replies) => {
        const c: PaneCapture = { ...readPaneCapture(batch, replies), continuous };
        this.port.listener.resync(c, reason);
        return c;
      });
    } catch (err) {
      if (withContinue) this.paused = true; // the continue did not run: the next resync must send it
      throw err;
    }
    this.followed = true;
    if (capture.state.paneDead && reason !== 'exit') this.port.paneDead();
  }
}
