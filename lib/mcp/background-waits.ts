/**
 * Waits that outlive their tool call (seed 000: "a long wait auto-backgrounds so the turn never
 * blocks"). A terminal_session_wait still pending after `backgroundAfterMs` returns at once with a
 * `waitId`; the wait goes on here, its completion is announced to the client (the `onComplete`
 * callback: a logging notification) and a later call with the `waitId` collects its result. Only
 * one timer per call is armed (the backgrounding deadline), by the call itself: nothing polls.
 */
import { randomBytes } from 'node:crypto';
import { UsageError } from '../common/errors.js';

/** What a wait resolves to: the tool result's JSON payload, or the error the wait threw. */
export type WaitSettlement = { readonly ok: true; readonly payload: Record<string, unknown> } | { readonly ok: false; readonly error: unknown };

/** A call's answer: the wait settled within the call, or it was (or still is) backgrounded. */
export type RaceOutcome = { readonly settled: WaitSettlement } | { readonly backgrounded: { readonly waitId: string; readonly sessionId: string; readonly elapsedMs: number } };

interface Entry {
  readonly sessionId: string;
  readonly startedAt: number;
  readonly abort: AbortController;
  readonly done: Promise<WaitSettlement>;
  settlement?: WaitSettlement;
}

/**
 * Backgrounded waits one server keeps (pending or completed and not yet collected). Each holds a
 * result of a few KiB; past it the oldest completed one is dropped (its completion was announced),
 * and with every slot pending a new wait stays in its call instead.
 */
export const MAX_BACKGROUND_WAITS = 64;

export class BackgroundWaits {
  readonly #entries = new Map<string, Entry>();
  #closed = false;

  constructor(private readonly onComplete: (waitId: string, sessionId: string, settlement: WaitSettlement) => void) {}

  /**
   * Starts `wait` (given an AbortSignal that ends it) and answers within `afterMs`: its settlement,
   * or a waitId when it is still pending then. `request` is the call's own signal: cancelled before
   * the wait is backgrounded, it ends the wait (as an inline wait always did).
   */
  async start(sessionId: string, afterMs: number, request: AbortSignal, wait: (signal: AbortSignal) => Promise<Record<string, unknown>>): Promise<RaceOutcome> {
    const abort = new AbortController();
    const onRequestAbort = (): void => abort.abort(request.reason);
    request.addEventListener('abort', onRequestAbort, { once: true });
    const done: Promise<WaitSettlement> = wait(abort.signal).then(
      (payload) => ({ ok: true as const, payload }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const entry: Entry = { sessionId, startedAt: Date.now(), abort, done };
    try {
      const first = await this.#race(done, this.#room() ? afterMs : undefined);
      if (first !== undefined) return { settled: first };
    } finally {
      request.removeEventListener('abort', onRequestAbort);
    }
    const waitId = `w-${randomBytes(6).toString('hex')}`;
    this.#entries.set(waitId, entry);
    void done.then((settlement) => {
      entry.settlement = settlement;
      if (!this.#closed) this.onComplete(waitId, sessionId, settlement);
    });
    return { backgrounded: { waitId, sessionId, elapsedMs: Date.now() - entry.startedAt } };
  }

  /** The result of backgrounded wait `waitId` when it settles within `afterMs` (then forgotten), else its id again. */
  async collect(waitId: string, sessionId: string, afterMs: number): Promise<RaceOutcome> {
    const entry = this.#entries.get(waitId);
    if (entry === undefined || entry.sessionId !== sessionId) {
      throw new UsageError('BAD_ARGUMENT', `no backgrounded wait "${waitId}" on session "${sessionId}" (it was collected already, or dropped: at most ${MAX_BACKGROUND_WAITS} are kept)`);
    }
    const settled = entry.settlement ?? (await this.#race(entry.done, afterMs));
    if (settled === undefined) return { backgrounded: { waitId, sessionId, elapsedMs: Date.now() - entry.startedAt } };
    this.#entries.delete(waitId);
    return { settled };
  }

  /** Ends every pending wait (the server is closing); nothing is announced after this. */
  close(): void {
    this.#closed = true;
    for (const entry of this.#entries.values()) entry.abort.abort(new Error('the MCP server closed'));
    this.#entries.clear();
  }

  /** True when one more wait may be kept, dropping the oldest completed one if need be. */
  #room(): boolean {
    if (this.#closed) return false;
    if (this.#entries.size < MAX_BACKGROUND_WAITS) return true;
    for (const [id, entry] of this.#entries) {
      if (entry.settlement !== undefined) {
        this.#entries.delete(id);
        return true;
      }
    }
    return false;
  }

  /** `done`'s settlement if it comes within `afterMs` (undefined: no deadline), else undefined. */
  async #race(done: Promise<WaitSettlement>, afterMs: number | undefined): Promise<WaitSettlement | undefined> {
    if (afterMs === undefined) return done;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(() => resolve(undefined), afterMs);
    });
    try {
      return await Promise.race([done, deadline]);
    } finally {
      clearTimeout(timer);
    }
  }
}
