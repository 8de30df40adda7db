/**
 * A drive through the gate, shaped like a Session: the same methods with the same options and
 * results, but every one returns a promise (read and status too: they cross a socket), `output`
 * events carry a mark ({ seq, bytes }) instead of the bytes (read them with `transcript`), and a
 * `journal` event carries the drive's stored journal events (durable seqs: a subscription resumes
 * after the last one seen, across host changes).
 */
import type { Disposable } from '../common/disposable.js';
import { SessionError } from '../common/errors.js';
import type { ReadOptions, ReadResult, SendTextOptions, InputTurnOptions, WaitOptions, WaitResult, Attention, DriveOutcome, Notification } from '../session/session.js';
import type { SessionStatus } from '../perceive/status.js';
import type { SignalName } from '../session/backend.js';
import type { ExitInfo } from '../common/exit-info.js';
import type { TranscriptEntry } from '../session/transcript.js';
import type { FeedEndReason } from '../wire/protocol.js';
import { fromWireEntry, toWirePattern, type WireTranscriptEntry } from '../wire/wire-values.js';

/** A journal event as the feed carries it. */
export interface JournalItem {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: Readonly<Record<string, unknown>>;
}

export interface OutputMark {
  /** The transcript seq of the last output chunk in this mark. */
  readonly seq: number;
  /** Bytes of output since the previous mark. */
  readonly bytes: number;
}

export interface HoldEvent {
  readonly held: boolean;
  /** The operator's token id. */
  readonly by: string;
  readonly how: 'console' | 'attach';
  /** When the hold started (wall-clock ms). */
  readonly since: number;
}

export type RemoteDriveEvents = {
  journal: [item: JournalItem];
  output: [mark: OutputMark];
  state: [status: SessionStatus];
  attention: [attention: Attention];
  exit: [exit: ExitInfo];
  outcome: [outcome: DriveOutcome];
  operators: [clients: readonly string[]];
  /** An operator took the drive over (held) or let go: meanwhile others' input fails with OPERATOR_HOLD. */
  hold: [hold: HoldEvent];
  notification: [notification: Notification];
  lost: [reason: string];
  closed: [how: 'killed' | 'detached'];
  /** The host ended this drive's subscription (the drive closed, the token was revoked, …). */
  ended: [reason: FeedEndReason];
};

export type RemoteStatus = SessionStatus & { readonly id: string; readonly lifecycle: 'live' | 'exited' | 'failed'; readonly driveOutcome?: DriveOutcome };
export type RemoteWaitResult = WaitResult & { readonly id: string; readonly driveOutcome?: DriveOutcome };

/** What a RemoteDrive needs from its Client. */
export interface DriveChannel {
  call(method: string, params: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<unknown>;
  listen<E extends keyof RemoteDriveEvents>(drive: string, event: E, listener: (...args: RemoteDriveEvents[E]) => void): Disposable;
  hold(drive: string): Promise<void>;
  release(drive: string): Promise<boolean>;
}

export class RemoteDrive {
  constructor(
    private readonly channel: DriveChannel,
    readonly id: string,
    /** Known when the drive came from create() or list(). */
    readonly allowId?: string,
  ) {}

  async read(opts: Omit<ReadOptions, 'caller'> = {}): Promise<ReadResult> {
    return (await this.channel.call('read', { id: this.id, ...opts })) as ReadResult;
  }

  /** As Session.sendText: the host serializes it with every other caller's input to this drive. */
  async sendText(text: string, opts: SendTextOptions & InputTurnOptions = {}): Promise<void> {
    const { signal, ...rest } = opts;
    await this.channel.call('sendText', { id: this.id, text, ...rest }, signal);
  }

  async sendKeys(keys: string | readonly string[], opts: InputTurnOptions = {}): Promise<void> {
    const { signal, ...rest } = opts;
    await this.channel.call('sendKeys', { id: this.id, keys, ...rest }, signal);
  }

  async wait(opts: WaitOptions = {}): Promise<RemoteWaitResult> {
    const { signal, forText, ...rest } = opts;
    return (await this.channel.call('wait', { id: this.id, ...rest, ...(forText !== undefined ? { forText: toWirePattern(forText) } : {}) }, signal)) as RemoteWaitResult;
  }

  async status(): Promise<RemoteStatus> {
    return (await this.channel.call('status', { id: this.id })) as RemoteStatus;
  }

  async resize(cols: number, rows: number, opts: InputTurnOptions = {}): Promise<void> {
    const { signal, ...rest } = opts;
    await this.channel.call('resize', { id: this.id, cols, rows, ...rest }, signal);
  }

  async signal(name: SignalName, opts: InputTurnOptions = {}): Promise<void> {
    const { signal, ...rest } = opts;
    await this.channel.call('signal', { id: this.id, signal: name, ...rest }, signal);
  }

  /**
   * Takes the drive over as its operator (admin): until release() or this client's connection
   * ends, every other caller's input to it fails with OPERATOR_HOLD. The client remembers it: after
   * a reconnect (a standby took over) it takes it again before `reconnected`, or emits `holdLost`.
   */
  async hold(): Promise<void> {
    await this.channel.hold(this.id);
  }

  /** Ends this client's hold; false when the host had none of it. */
  async release(): Promise<boolean> {
    return this.channel.release(this.id);
  }

  async kill(): Promise<void> {
    await this.channel.call('kill', { id: this.id });
  }

  async transcript(opts: { after?: number; limit?: number } = {}): Promise<TranscriptEntry[]> {
    const r = (await this.channel.call('transcript', { id: this.id, ...opts })) as { entries: WireTranscriptEntry[] };
    return r.entries.map(fromWireEntry);
  }

  /** The transcript as an asciicast v2 recording (the host's redaction and output filter applied). */
  async asciicast(opts: { after?: number; limit?: number } = {}): Promise<string> {
    const r = (await this.channel.call('transcript', { id: this.id, ...opts, asciicast: true })) as { asciicast: string };
    return r.asciicast;
  }

  async ack(seq: number): Promise<void> {
    await this.channel.call('ack', { id: this.id, seq });
  }

  async attachCommand(opts: { readOnly?: boolean } = {}): Promise<string[]> {
    const r = (await this.channel.call('attachCommand', { id: this.id, ...opts })) as { argv: string[] };
    return r.argv;
  }

  /** The drive's stored journal events after `afterSeq` (content-free). */
  async events(opts: { afterSeq?: number; limit?: number } = {}): Promise<JournalItem[]> {
    const r = (await this.channel.call('events', { id: this.id, ...opts })) as { events: JournalItem[] };
    return r.events;
  }

  /** Subscribes (once per drive and client) while any listener is on; returns a disposable. */
  on<E extends keyof RemoteDriveEvents>(event: E, listener: (...args: RemoteDriveEvents[E]) => void): Disposable {
    return this.channel.listen(this.id, event, listener);
  }
}

/**
 * The journal state of a drive that had already ended, when `err` (from `kill`, `get`…) says that is
 * why it is not open: a host that saw the program end keeps an exited row, not a session. Used where
 * the end a caller asks for already holds (CLI `kill`, the MCP kill tool).
 */
export function endedState(err: unknown): 'exited' | 'failed' | undefined {
  if (!(err instanceof SessionError) || err.code !== 'SESSION_NOT_FOUND') return undefined;
  const state = err.context.state;
  return state === 'exited' || state === 'failed' ? state : undefined;
}
