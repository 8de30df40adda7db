/**
 * A caller's text and keys, and the submit protocol: text is typed (or pasted), submit waits until
 * the screen shows it, presses Enter as a key of its own, and presses it again (a bounded number of
 * times) when a composer swallowed it. Every keystroke, the Enters included, passes the input gate.
 */
import { UsageError } from '../common/errors.js';
import type { Profile } from '../perceive/profile.js';
import { inputLines } from '../perceive/text-match.js';
import type { DriveContext } from './drive-signals.js';
import type { InputGate } from './input-gate.js';
import type { WaitEngine, WaitResult } from './wait.js';

export interface SendTextOptions {
  /** Press Enter (as its own key) once the text shows on the screen. */
  readonly submit?: boolean;
  /** 'auto': the paste buffer for multi-line or large text, literal keys otherwise. */
  readonly paste?: 'auto' | 'always' | 'never';
  /** After sending, wait until the screen settles this long (ms); 0 to return at once. */
  readonly settle?: number;
}

/**
 * Under paste 'auto', text longer than this (or with a newline) is pasted: one piece through the
 * paste buffer, bracketed when the program asked, instead of thousands of typed keys. Shorter text
 * is typed, as a person would. When to paste is the session's policy; backends only deliver.
 */
export const PASTE_THRESHOLD_CHARS = 4096;
/** After Enter, how long the screen may stay unchanged before the Enter is taken as swallowed. */
const SUBMIT_CONFIRM_MS = 1000;
/** Enter is pressed again at most this many times. */
const SUBMIT_RETRIES = 2;
/** How long submit waits for the typed text to show before pressing Enter anyway. */
const SUBMIT_ECHO_TIMEOUT_MS = 2000;
/** Key names per sendKeys call. */
const KEY_LIMIT = 1000;
/**
 * A text's audit tags, one frozen object per combination: the audit log spells a frozen object's
 * tags once instead of checking and stringifying them on every keystroke.
 */
const TEXT_TAGS = {
  typed: Object.freeze({ paste: false, submit: false }),
  typedSubmit: Object.freeze({ paste: false, submit: true }),
  pasted: Object.freeze({ paste: true, submit: false }),
  pastedSubmit: Object.freeze({ paste: true, submit: true }),
} as const;
const ENTER_TAGS = Object.freeze({ submit: true });
/** A send's options to the backend and its transcript entry's tags, one object each, not one per key. */
const TYPED = Object.freeze({ paste: false });
const PASTED = Object.freeze({ paste: true });

export class InputSender {
  constructor(
    private readonly ctx: DriveContext,
    private readonly profile: Profile,
    private readonly gate: InputGate,
    private readonly waits: WaitEngine,
  ) {}

  /**
   * Not async: typing (no submit) is the keystroke path, where the async function's own promise,
   * its closures and its await's turn on the reply's way back were each a cost per key; a throw
   * still reaches the caller as a rejection.
   */
  sendText(text: string, opts: SendTextOptions = {}): Promise<void> {
    let sending: Promise<void> | undefined;
    try {
      if (typeof text !== 'string') throw new UsageError('BAD_ARGUMENT', 'sendText takes a string');
      const paste = opts.paste ?? 'auto';
      if (paste !== 'auto' && paste !== 'always' && paste !== 'never') throw new UsageError('BAD_ARGUMENT', `paste must be auto, always or never`);
      const usePaste = paste === 'always' || (paste === 'auto' && (text.includes('\n') || text.length > PASTE_THRESHOLD_CHARS));
      this.gate.countRequest();
      if (opts.submit || (opts.settle !== undefined && opts.settle > 0)) return this.sendUnit(text, opts, usePaste);
      sending = this.deliverText(text, usePaste, usePaste ? TEXT_TAGS.pasted : TEXT_TAGS.typed);
      this.noteInput(text, usePaste);
      return this.whileSending(sending);
    } catch (error) {
      // Written already (the input's bookkeeping failed): the caller has this error, not the send's.
      sending?.catch(() => undefined);
      return Promise.reject(error);
    }
  }

  /** The text through the input gate (lease, audit) to the backend, typed or pasted. */
  private deliverText(text: string, usePaste: boolean, tags: (typeof TEXT_TAGS)[keyof typeof TEXT_TAGS]): Promise<void> {
    return this.gate.deliver('sendText', text, tags, true, (backend) => (text.length > 0 ? backend.sendText(text, usePaste ? PASTED : TYPED) : Promise.resolve()));
  }

  /** After the keys are written (same turn): where they were typed, counted and transcribed. */
  private noteInput(text: string, usePaste: boolean): void {
    // One line (a key, a word): no RegExp split.
    this.waits.markInput(text.includes('\n') || text.includes('\r') ? inputLines(text) : [text]);
    this.ctx.signals.interactions += 1;
    this.ctx.transcript.append('input', text, usePaste ? PASTED : TYPED);
  }

  /** A submission (its echo wait and Enter), or a send with its settle wait. */
  private async sendUnit(text: string, opts: SendTextOptions, usePaste: boolean): Promise<void> {
    const submit = opts.submit ?? false;
    const tags = usePaste ? (submit ? TEXT_TAGS.pastedSubmit : TEXT_TAGS.pasted) : submit ? TEXT_TAGS.typedSubmit : TEXT_TAGS.typed;
    let shown: Promise<WaitResult['outcome']> | undefined;
    /** After the keys are written (same turn): where they were typed, and the submit's echo wait. */
    const afterWrite = (): void => {
      this.noteInput(text, usePaste);
      // Only whether the echo showed is read: no end-of-wait status (a classification of the screen).
      if (submit && text.length > 0) shown = this.waits.waitOutcome({ forText: lastLine(text), timeoutMs: SUBMIT_ECHO_TIMEOUT_MS }, true);
    };
    if (submit && text.includes('\n') && this.profile.softNewline === 'meta-enter') {
      // This program takes M-Enter as a newline inside one message (aider): a multi-line message
      // stays one submission; bracketed-paste programs get the paste buffer (tmux brackets it).
      const backend = this.gate.admit('sendText', text, tags, true);
      afterWrite();
      const lines = text.split(/\r\n|\n/);
      for (const [i, line] of lines.entries()) {
        if (i > 0) await backend.sendKeys(['M-Enter']);
        if (line.length > 0) await backend.sendText(line, TYPED);
      }
    } else {
      const sending = this.deliverText(text, usePaste, tags);
      afterWrite();
      await this.whileSending(sending);
    }
    const echoed = shown ? (await shown) === 'text' : false;
    if (submit) await this.pressEnter(text, echoed);
    if (opts.settle && opts.settle > 0) await this.settle(opts.settle);
  }

  /** Waits until the screen settles `ms` after a send. Part of that request: not a wait of its own. */
  async settle(ms: number): Promise<void> {
    await this.waits.waitOutcome({ forIdleMs: ms }, false, true);
  }

  async sendKeys(keys: string | readonly string[]): Promise<void> {
    const list = typeof keys === 'string' ? [keys] : [...keys];
    if (list.length === 0 || list.length > KEY_LIMIT) throw new UsageError('BAD_ARGUMENT', `sendKeys takes 1 to ${KEY_LIMIT} key names`);
    this.gate.countRequest();
    const names = list.join(' ');
    const sending = this.gate.deliver('sendKeys', names, { count: list.length }, true, (backend) => backend.sendKeys(list));
    this.waits.markInput();
    this.ctx.signals.interactions += 1;
    this.ctx.transcript.append('keys', undefined, { keys: names });
    await this.whileSending(sending);
  }

  /**
   * A send whose keys were just written (the input is marked right after the write, in the same
   * turn: no output can be read in between, and the cursor cannot move before tmux has the keys).
   * The screen rows of its markInput (the input baseline) are read by whatever needs them first: a
   * wait, or anything that is about to change the screen (the echo's output, a resync, a resize).
   * Not while tmux handles the keys, nor at their reply (which comes before the echo, while tmux
   * and the program still work on it): on two loaded cores, CPU spent then delays them by more than
   * it costs (docs/benchmarks.md, 2026-12-02 10:31). Bytes still queued in the mirror change the
   * screen without a new event, so with a backlog the rows are read in the microtask after the
   * write. Not async: an await would be one more microtask turn on the reply's way to the caller.
   */
  private whileSending(sending: Promise<void>): Promise<void> {
    if (this.ctx.mirror.backlogBytes > 0) queueMicrotask(() => this.waits.takeBaseline());
    return sending;
  }

  /**
   * Enter, then confirm the program reacted. A composer may swallow an Enter that comes too soon
   * after the text (seen with codex and gemini): when the screen did not change at all and our text
   * still sits on the cursor row, Enter is pressed again, a bounded number of times.
   */
  private async pressEnter(text: string, echoed: boolean): Promise<void> {
    const { signals, mirror, transcript } = this.ctx;
    // The program ended while its text was on the way: there is nothing to press Enter to.
    if (signals.phase === 'exited') return;
    const before = mirror.digest();
    const sending = this.gate.deliver('sendKeys', 'Enter', ENTER_TAGS, false, (backend) => backend.sendKeys(['Enter']));
    this.waits.markInput();
    transcript.append('keys', undefined, { keys: 'Enter' });
    await this.whileSending(sending);
    for (let retry = 1; echoed && retry <= SUBMIT_RETRIES; retry++) {
      if (await this.waits.changesWithin(before, SUBMIT_CONFIRM_MS)) break;
      if (signals.phase !== 'live' || !this.cursorRowEndsWith(lastLine(text))) break;
      const again = this.gate.admit('sendKeys', 'Enter', { submit: true, retry });
      transcript.append('keys', undefined, { keys: 'Enter', retry });
      await again.sendKeys(['Enter']);
    }
  }

  /** True when the row the cursor is on ends with `tail` (our text still waits in the composer). */
  private cursorRowEndsWith(tail: string): boolean {
    const snap = this.ctx.mirror.snapshot({ format: 'text' });
    return (snap.lines[snap.cursor.y] ?? '').trimEnd().endsWith(tail.trimEnd());
  }
}

/** The last non-blank line of `text`, its tail at most: what the echo of a submission ends with. */
function lastLine(text: string): string {
  const lines = text.split(/\r\n|\r|\n/).map((l) => l.trim()).filter((l) => l.length > 0);
  const last = lines[lines.length - 1] ?? text;
  // The tail is enough to see the echo, and survives a program that wraps or scrolls a long line.
  return last.length > 40 ? last.slice(-40) : last;
}
