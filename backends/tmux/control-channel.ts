/**
 * The drive's control channel: which `tmux -C` client the backend talks through, and how it gets
 * one. connect() attaches a new client (or takes over a standby's observer), runs the attach
 * handshake and the first resync; the events and the close of a client that has been replaced are
 * dropped (a generation counter), so only the current client speaks; replace() swaps the client
 * after a framing anomaly. It holds no pane state: what the handshake learns and every event of the
 * current client go to its owner, the backend (tmux-backend.ts).
 */
import { ClosedError } from '../../lib/common/errors.js';
import type { ControlEvent } from '../../lib/control/parser.js';
import { refreshClientOutputOn } from '../../lib/control/tmux-commands.js';
import type { BackendListener } from '../../lib/session/backend.js';
import { attachHandshake, promoteHandshake, type AttachedPane, type HandshakeContext } from './attach-handshake.js';
import { ControlClient } from './control-client.js';
import type { PaneResync } from './pane-resync.js';
import type { TmuxHost, TmuxTarget } from './tmux-host.js';

/** A standby observer's client and the pane its handshake found (tmux-observer.ts). */
export interface AdoptedClient {
  readonly client: ControlClient;
  readonly pane: AttachedPane;
  /**
   * The first rebuild takes the visible rows alone: its cost must not grow with the pane's
   * history (a takeover's); the caller asks for the history later (`resync(HISTORY_RESYNC)`).
   */
  readonly withoutHistory?: boolean;
}

/** What the channel needs of the backend that owns it. */
export interface ChannelOwner {
  readonly target: TmuxTarget;
  readonly host: TmuxHost;
  readonly socket: string;
  readonly listener: Pick<BackendListener, 'incident' | 'lost'>;
  /** The pane's captures: a new client's first resync, and its restart when the client is replaced. */
  readonly sync: PaneResync;
  /** The backend is ending: a close is not a loss, and nothing is replaced. */
  readonly ending: () => boolean;
  /** An event of the current client. */
  readonly onEvent: (event: ControlEvent) => void;
  /** The current client closed. */
  readonly onClosed: (reason: string | undefined) => void;
  /** The handshake found the pane (its events may arrive from then on). */
  readonly identified: (attached: AttachedPane) => void;
  /** The operators' terminal clients attached now. */
  readonly operatorsFound: (names: readonly string[]) => void;
}

export class ControlChannel {
  private client: ControlClient | undefined;
  /** Counts control clients: events and closes of a replaced one are ignored. */
  private generation = 0;
  /** The channel is being replaced after a framing anomaly. */
  private replacing: Promise<void> | undefined;

  constructor(private readonly owner: ChannelOwner) {}

  /** The client now, closed or not (none between a replaced one and its successor). */
  get current(): ControlClient | undefined {
    return this.client;
  }

  /** The client now, open: a command goes through it. */
  get live(): ControlClient {
    if (!this.client || this.client.isClosed) throw new ClosedError('SESSION_CLOSED', `drive ${this.owner.target.name} is not connected`, { name: this.owner.target.name });
    return this.client;
  }

  /** The replacement under way, if any (an end waits for it). */
  get replacement(): Promise<void> | undefined {
    return this.replacing;
  }

  /**
   * `endStale`: end every other control client first (re-attach: they are a dead host's).
   * `adopted`: an observer's client already attached (adopt()), instead of a new one.
   */
  async connect(endStale = false, adopted?: AdoptedClient): Promise<void> {
    const owner = this.owner;
    const { host, target } = owner;
    const generation = ++this.generation;
    const current = (): boolean => generation === this.generation;
    const onEvent = (event: ControlEvent): void => {
      if (current()) owner.onEvent(event);
    };
    const onClosed = (reason: string | undefined): void => {
      if (current()) owner.onClosed(reason);
    };
    if (adopted) {
      if (adopted.client.isClosed) throw new ClosedError('CONTROL_CLOSED', `the observer of drive ${target.name} has ended`, { name: target.name });
      adopted.client.rewire(onEvent, onClosed);
    }
    const client =
      adopted?.client ??
      (await ControlClient.attach({
        ...(host.remote ? { command: (args: readonly string[]) => host.tmuxCommand(args, target.env) } : {}),
        tmuxPath: target.tmuxPath,
        socket: owner.socket,
        session: target.name,
        clock: target.clock,
        env: target.env,
        timeoutMs: target.timeoutMs,
        onEvent,
        onClosed,
      }));
    this.client = client;
    const handshake: HandshakeContext = {
      client,
      session: target.name,
      host,
      clock: target.clock,
      timeoutMs: target.timeoutMs,
      endStale,
      identified: owner.identified,
      incident: (code, detail) => owner.listener.incident(code, detail),
      operatorsFound: owner.operatorsFound,
    };
    try {
      if (adopted) {
        // The observer knows its pane already: the promotion batch and the first resync (which
        // turns output on inside its batch) are written together, two round trips in all.
        handshake.identified(adopted.pane);
        const settled = await Promise.allSettled([promoteHandshake(handshake), owner.sync.resync([refreshClientOutputOn()], 'attach', { withoutHistory: adopted.withoutHistory === true })]);
        for (const r of settled) if (r.status === 'rejected') throw r.reason;
      } else {
        await attachHandshake(handshake);
        await owner.sync.resync([], 'attach');
      }
    } catch (err) {
      client.terminate();
      throw err;
    }
  }

  /**
   * A framing anomaly: the control stream can no longer be told apart from pane text, so nothing
   * more is read from it. A new control client starts a clean stream; its attach resync rebuilds
   * the mirror from tmux's grid (commands in flight on the old one fail with CONTROL_CLOSED).
   */
  replace(code: string): Promise<void> {
    if (this.owner.ending()) return Promise.resolve();
    this.replacing ??= (async () => {
      this.owner.listener.incident('control_replaced', { after: code });
      const old = this.client;
      this.client = undefined;
      this.generation += 1; // the old client's close is not a loss
      old?.terminate();
      this.owner.sync.restart();
      try {
        await this.connect();
      } catch (err) {
        if (!this.owner.ending()) this.owner.listener.lost(`control client ended: replacing it after ${code} failed: ${String(err)}`);
      }
    })().finally(() => {
      this.replacing = undefined;
    });
    return this.replacing;
  }
}
