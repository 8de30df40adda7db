/**
 * The program's exit as tmux records it. tmux 3.3a marks a pane dead on either of two events: the
 * pty's EOF or the program's SIGCHLD (server.c, window.c: whichever comes first destroys the
 * pane), and `pane_dead_status`/`pane_dead_signal` exist only after the SIGCHLD. So a pane can be
 * dead while its status is still unknown: a program that closed its terminal and runs on, or a
 * loaded machine where the reap comes late. The status is never guessed while tmux can still
 * give it:
 *   - events first: the pane-death subscription's format carries the status, so tmux reports it
 *     again when it arrives; the pane-died hook fires only once the status is ready (3.3a
 *     server_destroy_pane returns early before that). Either calls `check()`.
 *   - a bounded re-ask, armed by the dead pane (never an interval on a live one), with backoff,
 *     and a `run-shell` job now and then (its SIGCHLD makes tmux reap every exited child: 3.3a
 *     was seen leaving a pane's zombie unreaped).
 *   - once that patience is spent: if the pane's process is gone and tmux still has no status,
 *     tmux cannot say it any more — the exit is reported unknown. If the process still runs (its
 *     terminal closed, the program not ended), nothing is reported and nothing is armed: the
 *     subscription reports the status whenever the program ends.
 */
import type { Clock, TimerHandle } from '../../lib/common/clock.js';
import type { ExitInfo } from '../../lib/common/exit-info.js';
import type { PaneId } from '../../lib/control/parser.js';
import { displayMessage, runShellTrue, type TmuxCommand } from '../../lib/control/tmux-commands.js';

/** What the pane-death subscription and the query expand: dead, then the status or the signal. */
export const PANE_DEATH_FORMAT = '#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}';
/** The first re-ask after a dead pane without a status; each next one waits twice as long… */
const FIRST_REASK_MS = 5;
/** …up to this (tmux's own subscription check runs once a second). */
const LONGEST_REASK_MS = 1000;
/** A reap job is sent at the first re-ask and again after this long. */
const NUDGE_EVERY_MS = 1000;
/**
 * How long a dead pane may go without a status before the pane's process is looked at: far past
 * the ~0.6 s the status took at worst here under a CPU hog with twenty drives ending at once.
 */
export const EXIT_STATUS_PATIENCE_MS = 15_000;

export interface PaneDeath {
  readonly dead: boolean;
  /** The exit, once tmux knows it (code or signal). */
  readonly exit: ExitInfo | undefined;
}

/** A `PANE_DEATH_FORMAT` expansion (a subscription value or a query's reply) read. */
export function parsePaneDeath(text: string): PaneDeath {
  const [dead, status, signal] = text.split('\t');
  const code = status ? Number(status) : null;
  const sig = signal ? Number(signal) : null;
  const known = (code !== null && Number.isInteger(code)) || (sig !== null && Number.isInteger(sig));
  return { dead: dead === '1', exit: known ? { code: code !== null && Number.isInteger(code) ? code : null, signal: sig !== null && Number.isInteger(sig) ? sig : null } : undefined };
}

export interface PaneExitDeps {
  /** Sends one command on the drive's live client; rejects when the server went away. */
  readonly command: (line: TmuxCommand) => Promise<string>;
  readonly pane: () => PaneId;
  readonly clock: Clock;
  /** True when the pane's process no longer runs (gone, or a zombie nobody reaped). */
  readonly processGone: () => Promise<boolean>;
  /** The exit, reported once. */
  readonly report: (exit: ExitInfo) => Promise<void>;
  /** Overrides EXIT_STATUS_PATIENCE_MS (tests). */
  readonly patienceMs?: number;
}

export class PaneExitReader {
  private reading: Promise<void> | undefined;
  /** An event came after the last ask of a read in flight: read once more if that one ends empty. */
  private again = false;
  private reported = false;
  /** The re-ask timer the reader sleeps on; an event cuts it short. */
  private pending: { readonly timer: TimerHandle; readonly wake: () => void } | undefined;

  constructor(private readonly deps: PaneExitDeps) {}

  /** True once the exit was reported. */
  get done(): boolean {
    return this.reported;
  }

  /**
   * tmux said something about the pane's death (the subscription, the hook's line, a capture that
   * shows it dead): read the exit now, or cut a waiting re-ask short.
   */
  check(): void {
    if (this.reported) return;
    if (this.reading) {
      this.again = true;
      this.pending?.wake();
      return;
    }
    this.reading = this.read()
      .catch(() => undefined) // the server went away: the backend's close handler reports it
      .finally(() => {
        this.reading = undefined;
        if (this.again) this.check();
      });
  }

  /** Resolves once the read in flight (if any) has reported the exit or given up for now. */
  async settled(): Promise<void> {
    while (this.reading) await this.reading;
  }

  /** Stops re-asking (the drive is ending). */
  dispose(): void {
    this.reported = true;
    this.pending?.wake();
  }

  private async ask(): Promise<PaneDeath> {
    this.again = false;
    return parsePaneDeath(await this.deps.command(displayMessage(this.deps.pane(), PANE_DEATH_FORMAT)));
  }

  private async read(): Promise<void> {
    const { clock } = this.deps;
    let death = await this.ask();
    if (!death.dead) return;
    const patience = this.deps.patienceMs ?? EXIT_STATUS_PATIENCE_MS;
    const since = clock.now();
    let lastNudge = Number.NEGATIVE_INFINITY;
    for (let delay = FIRST_REASK_MS; !death.exit && !this.reported; delay = Math.min(delay * 2, LONGEST_REASK_MS)) {
      if (clock.now() - lastNudge >= NUDGE_EVERY_MS) {
        lastNudge = clock.now();
        await this.deps.command(runShellTrue(this.deps.pane())).catch(() => undefined);
      }
      if (clock.now() - since >= patience) {
        if (!(await this.deps.processGone())) return; // the program runs on: the subscription will say when it ends
        death = await this.ask();
        break;
      }
      await this.sleep(delay);
      death = await this.ask();
    }
    if (this.reported) return;
    this.reported = true;
    await this.deps.report(death.exit ?? { code: null, signal: null });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const wake = (): void => {
        this.pending?.timer.cancel();
        this.pending = undefined;
        resolve();
      };
      this.pending = { timer: this.deps.clock.after(ms, wake), wake };
    });
  }
}
