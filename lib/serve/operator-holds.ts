/**
 * A person's take-over holds agents off. While an operator holds a drive (the console's take-over,
 * `tmux-drive attach` through the host), drive-class input from every other caller of the gate
 * (sendText, sendKeys, resize, signal) is refused with OPERATOR_HOLD naming the hold; inputs of
 * theirs already waiting for their turn in the drive's input queue leave it with the same error
 * (one that is running finishes: a submit is never cut between its text and its Enter). Readers
 * are not affected. A hold belongs to one gate caller (a connection, a console page): it ends
 * when released or when that caller goes, so a dropped socket never leaves a drive held by nobody.
 * Subscribers of the drive are told with a `hold` item when it starts and ends.
 */
import { TmuxDriveError } from '../common/errors.js';
import type { FeedItem } from '../wire/protocol.js';

/** How an operator took the drive over. */
export type HoldHow = 'console' | 'attach';

export interface OperatorHold {
  readonly drive: string;
  /** The gate caller holding it (a connection or console page): only it may drive meanwhile. */
  readonly holder: string;
  /** The holder's token id (never the token): named in refusals and events. */
  readonly tokenId: string;
  readonly how: HoldHow;
  /** Wall-clock ms. */
  readonly since: number;
}

export interface HoldCaller {
  readonly id: string;
  readonly tokenId: string;
}

function holdError(h: OperatorHold, what: string): TmuxDriveError {
  return new TmuxDriveError('OPERATOR_HOLD', `drive ${h.drive} is held by an operator (${h.how}, token ${h.tokenId}) since ${new Date(h.since).toISOString()}: ${what} is refused until they release it (subscribers get a hold event then); reading goes on`, { drive: h.drive, heldBy: h.tokenId, how: h.how, since: h.since });
}

export class OperatorHolds {
  private readonly holds = new Map<string, OperatorHold>();
  /** Per drive, the inputs under way through the gate (waiting for their turn, or running), by caller. */
  private readonly inputs = new Map<string, Set<{ readonly caller: string; readonly abort: (reason: TmuxDriveError) => void }>>();

  constructor(
    /** Tells the drive's subscribers (a `hold` feed item). */
    private readonly announce: (drive: string, item: FeedItem) => void,
    private readonly now: () => number,
  ) {}

  heldBy(drive: string): OperatorHold | undefined {
    return this.holds.get(drive);
  }

  /** `caller` takes `drive` over; OPERATOR_HOLD when another holds it. Taking it again is a no-op. */
  take(drive: string, caller: HoldCaller, how: HoldHow): OperatorHold {
    const current = this.holds.get(drive);
    if (current) {
      if (current.holder === caller.id) return current;
      throw holdError(current, 'a take-over');
    }
    const hold: OperatorHold = { drive, holder: caller.id, tokenId: caller.tokenId, how, since: this.now() };
    this.holds.set(drive, hold);
    // Other callers' inputs still waiting for their turn leave the queue (a running one finishes).
    const reason = holdError(hold, 'input that was waiting for its turn (not sent)');
    for (const input of this.inputs.get(drive) ?? []) if (input.caller !== caller.id) input.abort(reason);
    this.announce(drive, { type: 'hold', held: true, by: hold.tokenId, how, since: hold.since });
    return hold;
  }

  /** Ends `caller`'s hold on `drive`; false when it held none there. */
  release(drive: string, caller: HoldCaller): boolean {
    const current = this.holds.get(drive);
    if (!current || current.holder !== caller.id) return false;
    this.holds.delete(drive);
    this.announce(drive, { type: 'hold', held: false, by: current.tokenId, how: current.how, since: current.since });
    return true;
  }

  /** The caller went (connection closed, page closed, token revoked): its holds end. */
  releaseAll(caller: HoldCaller): void {
    for (const h of [...this.holds.values()]) if (h.holder === caller.id) this.release(h.drive, caller);
  }

  /** Throws OPERATOR_HOLD when someone other than `caller` holds `drive`. */
  check(drive: string, caller: HoldCaller, what: string): void {
    const current = this.holds.get(drive);
    if (current && current.holder !== caller.id) throw holdError(current, what);
  }

  /**
   * The signal `caller`'s input to `drive` waits for its turn under: the call's own, and unless
   * the caller holds the drive, aborted (with OPERATOR_HOLD) when another caller takes it over.
   * `dispose` when the call ends.
   */
  inputSignal(drive: string, caller: HoldCaller, callSignal: AbortSignal): { readonly signal: AbortSignal; dispose(): void } {
    if (this.holds.get(drive)?.holder === caller.id) return { signal: callSignal, dispose: () => undefined };
    const controller = new AbortController();
    const onCall = (): void => controller.abort(callSignal.reason);
    if (callSignal.aborted) onCall();
    else callSignal.addEventListener('abort', onCall, { once: true });
    let inputs = this.inputs.get(drive);
    if (!inputs) {
      inputs = new Set();
      this.inputs.set(drive, inputs);
    }
    const input = { caller: caller.id, abort: (reason: TmuxDriveError) => controller.abort(reason) };
    inputs.add(input);
    return {
      signal: controller.signal,
      dispose: () => {
        callSignal.removeEventListener('abort', onCall);
        const set = this.inputs.get(drive);
        set?.delete(input);
        if (set?.size === 0) this.inputs.delete(drive);
      },
    };
  }
}
