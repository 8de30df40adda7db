/**
 * A hot standby's observer of one drive another host drives: a control client attached read-only
 * with no pane output (observerAttachArgv), so that when the standby takes the drive's lease it
 * only adopts this client (TmuxBackend.adopt) instead of starting a `tmux -C` and waiting for its
 * attach. While it observes it sends tmux nothing and reads only notifications: it never writes to
 * the pane (no input API here; the lease is the fence, tmux 3.3a's read-only flag is not one).
 */
import { observeHandshake, type AttachedPane } from './attach-handshake.js';
import { ControlClient } from './control-client.js';
import { TmuxBackend } from './tmux-backend.js';
import { hostOf, socketPathFor, type TmuxTarget } from './tmux-host.js';
import type { BackendListener } from '../../lib/session/backend.js';

export class TmuxObserver {
  private adopted = false;
  private readonly endedListeners = new Set<() => void>();

  private constructor(
    private readonly target: TmuxTarget,
    private readonly client: ControlClient,
    private readonly pane: AttachedPane,
  ) {}

  /** Attaches an observer to the drive's local server; fails (typed) when it does not answer. */
  static async attach(target: TmuxTarget): Promise<TmuxObserver> {
    let observer: TmuxObserver | undefined;
    const client = await ControlClient.attach({
      tmuxPath: target.tmuxPath,
      socket: socketPathFor(target.socketDir, target.name),
      session: target.name,
      clock: target.clock,
      env: target.env,
      timeoutMs: target.timeoutMs,
      observer: true,
      // Notifications only (no-output): nothing here needs them until the client is adopted.
      onEvent: () => undefined,
      onClosed: () => observer?.ended(),
    });
    let pane: AttachedPane | undefined;
    try {
      await observeHandshake({
        client,
        session: target.name,
        host: hostOf(target),
        clock: target.clock,
        timeoutMs: target.timeoutMs,
        endStale: false,
        identified: (found) => {
          pane = found;
        },
        incident: () => undefined,
        operatorsFound: () => undefined,
      });
    } catch (err) {
      await client.detach();
      throw err;
    }
    observer = new TmuxObserver(target, client, pane ?? { serverPid: -1, pane: '%0', pid: undefined });
    if (client.isClosed) observer.ended();
    return observer;
  }

  /** The client ended (the server went, or the holder's reconcile ended it): nothing to adopt. */
  get isClosed(): boolean {
    return this.client.isClosed;
  }

  /** Called once when the client ends before it was adopted. */
  onEnded(listener: () => void): void {
    this.endedListeners.add(listener);
  }

  /**
   * The caller holds the drive's lease now: the client becomes its driver. Once only; an observer
   * whose client ended fails with CONTROL_CLOSED (the caller re-attaches cold).
   */
  adopt(listener: BackendListener, opts: { readonly withoutHistory?: boolean } = {}): Promise<TmuxBackend> {
    this.adopted = true;
    return TmuxBackend.adopt(this.target, listener, { client: this.client, pane: this.pane, ...(opts.withoutHistory ? { withoutHistory: true } : {}) });
  }

  /** Stops observing (the standby stops, or its takeover did not need this one). */
  async detach(): Promise<void> {
    if (this.adopted) return;
    this.adopted = true;
    await this.client.detach();
  }

  private ended(): void {
    if (this.adopted) return;
    for (const listener of this.endedListeners) listener();
    this.endedListeners.clear();
  }
}
