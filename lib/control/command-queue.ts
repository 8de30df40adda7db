/**
 * Matches commands to their reply blocks. tmux 3.3a answers every executed command with exactly
 * one `%begin … 1` block, in order, and the block's number cannot be known in advance (it is a
 * server-wide counter), so matching is FIFO: each reply pops the head of the queue.
 *
 * A command whose deadline passes is rejected with TmuxTimeoutError but KEEPS its slot: tmux will
 * still answer it, and that late reply must be consumed, or every later reply would be matched to
 * the wrong command. The FIFO assumes one block per line, so each line must hold ONE command
 * (`a ; b` yields two blocks, or one on a parse error; a line that parses to nothing, such as a
 * comment, yields none).
 *
 * The queue also knows how each reply is framed: a command whose reply carries pane text names a
 * `ReplyFraming`, worked out from the replies of the earlier commands of its batch when its
 * `%begin` arrives (`framingOfNext`, called by the parser, synchronously, in stream order).
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import { ClosedError, TmuxCommandError, TmuxTimeoutError, UsageError } from '../common/errors.js';
import { GUARD_FRAMING, type BlockFraming, type ReplyEvent } from './parser.js';
import { decodeUtf8 } from './utf8.js';

/** iTerm2 calls tmux unresponsive after 5 s; commands here are short, so a 5 s deadline is generous. */
export const DEFAULT_TIMEOUT_MS = 5000;

export interface Reply {
  /** false only for a `mayFail` command that tmux answered with %error. */
  readonly ok: boolean;
  /** Raw reply lines, unescaped as tmux wrote them. */
  readonly lines: Uint8Array[];
  /** The lines decoded as UTF-8 (lossy) and joined with LF. */
  text(): string;
}

/** A reply as the framing of a later command of the same batch sees it. */
export interface EarlierReply {
  readonly ok: boolean;
  readonly lines: readonly Uint8Array[];
}

/** How to frame a command's reply, from the replies of the commands before it in its batch. */
export type ReplyFraming = (earlier: readonly EarlierReply[]) => BlockFraming;

/** A command line with what the queue needs to know about its reply. */
export interface QueuedCommand {
  readonly line: string;
  readonly framing?: ReplyFraming;
  /** An %error reply resolves (ok: false) instead of rejecting. */
  readonly mayFail?: boolean;
}

export interface CommandQueueOptions {
  readonly defaultTimeoutMs?: number;
}

export interface SendOptions {
  readonly timeoutMs?: number;
}

interface Slot {
  /** The command as errors show it: quoted arguments elided, since typed text may be a secret. */
  readonly label: string;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (error: Error) => void;
  timer: TimerHandle | undefined;
  /** Timed out: the caller has its error, the reply is still owed and will be discarded. */
  abandoned: boolean;
  readonly framing: ReplyFraming | undefined;
  readonly mayFail: boolean;
  /** The replies of this slot's batch, filled in as they arrive; this slot's is at `index`. */
  readonly batch: EarlierReply[];
  readonly index: number;
}

function textOf(lines: readonly Uint8Array[]): string {
  return lines.map(decodeUtf8).join('\n');
}

function makeReply(ok: boolean, lines: Uint8Array[]): Reply {
  return { ok, lines, text: () => textOf(lines) };
}

/** For a framing that throws: one line at most, so anything longer is a mismatch, never trusted. */
const STRICTEST: BlockFraming = Object.freeze({ kind: 'lines', count: 1 });

function asQueued(command: string | QueuedCommand): QueuedCommand {
  return typeof command === 'string' ? { line: command } : command;
}

export class CommandQueue {
  readonly #write: (data: string) => void;
  readonly #clock: Clock;
  readonly #defaultTimeoutMs: number;
  /** Slots awaiting a reply block, oldest first; a plain array since depths stay small. */
  readonly #slots: Slot[] = [];
  #closedBy: Error | undefined;

  constructor(write: (data: string) => void, clock: Clock, options: CommandQueueOptions = {}) {
    this.#write = write;
    this.#clock = clock;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  /** Commands written whose reply block has not arrived, timed-out ones included. */
  get pending(): number {
    return this.#slots.length;
  }

  send(command: string | QueuedCommand, options?: SendOptions): Promise<Reply> {
    return this.#enqueue([command], options)[0] as Promise<Reply>;
  }

  /**
   * Writes all commands in ONE write, one per line: tmux reads them together and runs them one
   * after another with no pane output handled in between (what a consistent snapshot needs).
   * Resolves when every reply is in; rejects with the first failure (the others still settle).
   */
  sendBatch(commands: readonly (string | QueuedCommand)[], options?: SendOptions): Promise<Reply[]> {
    return Promise.all(this.#enqueue(commands, options));
  }

  /**
   * The framing of the next reply block (its `%begin` was just read). Guard framing when the
   * command has none (tmux's own text) or when no command waits.
   */
  framingOfNext(): BlockFraming {
    const slot = this.#slots[0];
    if (!slot?.framing) return GUARD_FRAMING;
    try {
      return slot.framing(slot.batch.slice(0, slot.index));
    } catch {
      return STRICTEST;
    }
  }

  /** Feed every `reply` event of the parser here, in order. */
  onReply(event: ReplyEvent): void {
    const slot = this.#slots.shift();
    // A reply with no command waiting: the owner sent a line that produced an extra block. Nothing to match.
    if (!slot) return;
    slot.batch[slot.index] = { ok: event.ok, lines: event.lines };
    slot.timer?.cancel();
    if (slot.abandoned) return;
    if (event.ok || slot.mayFail) slot.resolve(makeReply(event.ok, event.lines));
    else slot.reject(new TmuxCommandError(slot.label, textOf(event.lines)));
  }

  /** Rejects everything pending with `error`; later sends fail at once. Idempotent. */
  close(error: Error): void {
    if (this.#closedBy) return;
    this.#closedBy = error;
    for (const slot of this.#slots.splice(0)) {
      slot.timer?.cancel();
      if (!slot.abandoned) slot.reject(error);
    }
  }

  #enqueue(given: readonly (string | QueuedCommand)[], options: SendOptions | undefined): Promise<Reply>[] {
    const commands = given.map(asQueued);
    const problem = this.#closedBy ? this.#closedError() : commands.map((c) => checkCommand(c.line)).find((e) => e !== undefined);
    if (problem) return commands.map(() => Promise.reject(problem));
    if (commands.length === 0) return [];
    const timeoutMs = options?.timeoutMs ?? this.#defaultTimeoutMs;
    const added: Slot[] = [];
    const batch: EarlierReply[] = [];
    const promises = commands.map(
      (command, index) =>
        new Promise<Reply>((resolve, reject) => {
          const slot: Slot = { label: labelOf(command.line), resolve, reject, timer: undefined, abandoned: false, framing: command.framing, mayFail: command.mayFail === true, batch, index };
          slot.timer = this.#clock.after(timeoutMs, () => {
            slot.abandoned = true;
            slot.timer = undefined;
            reject(new TmuxTimeoutError(slot.label, timeoutMs));
          });
          added.push(slot);
        }),
    );
    // Slots go in before the write: a synchronous writer (a test fake) may answer at once.
    this.#slots.push(...added);
    try {
      this.#write(commands.map((c) => `${c.line}\n`).join(''));
    } catch (error) {
      for (const slot of added) {
        const at = this.#slots.indexOf(slot);
        if (at >= 0) this.#slots.splice(at, 1);
        slot.timer?.cancel();
        slot.reject(error instanceof Error ? error : new Error(String(error)));
      }
    }
    return promises;
  }

  #closedError(): Error {
    const cause = this.#closedBy;
    return new ClosedError('CONTROL_CLOSED', `the tmux control channel is closed${cause ? `: ${cause.message}` : ''}`, {}, { cause });
  }
}

/** Longest command label in an error message. */
const MAX_LABEL_CHARS = 80;

function labelOf(command: string): string {
  const quote = command.indexOf("'");
  const hex = command.indexOf(' -H ');
  const cut = quote < 0 ? hex : hex < 0 ? quote : Math.min(quote, hex + 4);
  const head = cut < 0 ? command : `${command.slice(0, cut)}…`;
  return head.length > MAX_LABEL_CHARS ? `${head.slice(0, MAX_LABEL_CHARS)}…` : head;
}

/** Why `command` cannot be sent as one line with one reply block, or undefined when it can. */
function checkCommand(command: string): UsageError | undefined {
  if (command.includes('\n')) return new UsageError('BAD_ARGUMENT', 'a command cannot contain a line feed: tmux would read two commands', {});
  if (command.includes('\0')) return new UsageError('BAD_ARGUMENT', 'a command cannot contain a NUL byte: tmux would cut the line there', {});
  // An empty line detaches the control client; a blank or comment line yields no reply block.
  const trimmed = command.trim();
  if (trimmed === '' || trimmed.startsWith('#')) return new UsageError('BAD_ARGUMENT', 'a command line must hold a command (an empty line detaches tmux -C)', {});
  return undefined;
}
