/**
 * The one thing about tmux's parser the mirror cannot follow from the bytes alone: tmux 3.3a gives
 * up on a string sequence (OSC, DCS, APC, PM, SOS, `ESC k`) that is not ended within 5 s of its
 * start (input_start_timer → input_reset: back to the ground state, pen and charsets reset), and
 * then prints what follows; the mirror, which has no clock, would go on swallowing it. The owner
 * feeds this watch the mirror's `parserInString` after each write; the watch arms a timer (armed by
 * that event, never polled) and asks for a resync from tmux once tmux must have given up.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import type { Disposable } from '../common/disposable.js';

/** input.c input_start_timer: `struct timeval tv = { .tv_sec = 5 }`. */
export const TMUX_STRING_TIMEOUT_MS = 5000;
/** tmux read the string before the mirror did; this margin covers the delivery and a busy server. */
const RESYNC_AFTER_MS = TMUX_STRING_TIMEOUT_MS + 250;
/** A string that ends after this long may have ended after tmux gave up: resync then too. */
const CLOSE_CALL_MS = TMUX_STRING_TIMEOUT_MS - 500;

export type StringTimeoutReason =
  /** The string is still open here: tmux has reset its parser (pen included) and printed what followed. */
  | 'parser_timeout'
  /** The string ended near the limit: tmux may or may not have given up first. */
  | 'parser_timeout_close_call';

export class StringTimeoutWatch implements Disposable {
  readonly #clock: Clock;
  readonly #onTimeout: (reason: StringTimeoutReason) => void;
  #since: number | undefined;
  #timer: TimerHandle | undefined;

  constructor(clock: Clock, onTimeout: (reason: StringTimeoutReason) => void) {
    this.#clock = clock;
    this.#onTimeout = onTimeout;
  }

  /** After each write: is the mirror's parser inside a string now? */
  observe(inString: boolean): void {
    if (inString && this.#since === undefined) {
      this.#since = this.#clock.now();
      this.#timer = this.#clock.after(RESYNC_AFTER_MS, () => {
        this.#timer = undefined;
        this.#since = undefined;
        this.#onTimeout('parser_timeout');
      });
    } else if (!inString && this.#since !== undefined) {
      const lasted = this.#clock.now() - this.#since;
      this.#cancel();
      if (lasted >= CLOSE_CALL_MS) this.#onTimeout('parser_timeout_close_call');
    }
  }

  dispose(): void {
    this.#cancel();
  }

  #cancel(): void {
    this.#timer?.cancel();
    this.#timer = undefined;
    this.#since = undefined;
  }
}
