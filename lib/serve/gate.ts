/**
 * The single gate: every call from every surface (the socket, and in-process commands when no
 * host serves) arrives here as (identity, method, params) and is decided the same way:
 *
 *   method in the verb table → params stripped of `_`-prefixed keys (a caller cannot pass an
 *   identity; the host injects the token's) and checked by the verb's strict schema → the token
 *   not expired → its class allows the verb → its scope allows the drive → the verb's body, one
 *   call of the public Driver/Session API → audited with the token's id and how it ended.
 *
 * A GateSession is one caller (a connection): its identity and its subscriptions.
 */
import * as v from 'valibot';
import type { Driver } from '../driver/driver.js';
import { TmuxDriveError, UsageError } from '../common/errors.js';
import type { AuditLog } from '../../journal/audit-log.js';
import type { FeedEndReason, FeedItem, Identity } from '../wire/protocol.js';
import { CapabilityError, HostError } from '../wire/host-error.js';
import { allowsClass, isExpired, requireDrive } from './capabilities.js';
import { OperatorHolds, type HoldCaller, type HoldHow, type OperatorHold } from './operator-holds.js';
import { VERBS, type VerbContext } from './verbs.js';
import { DriveFeed } from './drive-feed.js';
import { takeoverMark } from '../driver/takeover-marks.js';
import type { TokenStore } from './token-store.js';

export const GATE_LIMITS = {
  /** Subscriptions one caller holds: one per drive it watches; a flood past this is refused. */
  subscriptionsPerCaller: 256,
} as const;

export interface GateOptions {
  readonly driver: Driver;
  /** The host's token store; absent in-process (mint, revoke and tokens need a host). */
  readonly tokens?: TokenStore;
  readonly audit?: AuditLog;
  readonly now?: () => number;
}

const SESSION_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_]{0,31}$/;

/** `params.cols: Invalid value; …` naming only plain keys (a key a caller sent may be anything). */
function describe(issues: readonly v.BaseIssue<unknown>[]): string {
  return issues
    .slice(0, 3)
    .map((issue) => {
      const path = (issue.path ?? []).map((p) => (typeof p.key === 'number' || (typeof p.key === 'string' && PLAIN_KEY.test(p.key)) ? String(p.key) : '…')).join('.');
      return `${path || '(params)'}: ${issue.message.slice(0, 120)}`;
    })
    .join('; ');
}

/** The params a verb sees: an object, without the keys a caller must not set (`_…`: identity, internals). */
function stripped(params: unknown): Record<string, unknown> {
  if (params === undefined) return {};
  if (typeof params !== 'object' || params === null || Array.isArray(params)) throw new UsageError('BAD_ARGUMENT', 'params must be an object');
  return Object.fromEntries(Object.entries(params).filter(([k]) => !k.startsWith('_')));
}

export class Gate {
  readonly driver: Driver;
  readonly tokens: TokenStore | undefined;
  private readonly audit: AuditLog | undefined;
  private readonly now: () => number;
  private readonly feeds = new Map<string, DriveFeed>();
  /** Operators' take-overs: while one holds a drive, nobody else's input reaches it. */
  readonly holds: OperatorHolds;
  private readonly sessions = new Set<GateSession>();
  private nextSubscription = 1;
  private nextSession = 1;

  constructor(opts: GateOptions) {
    this.driver = opts.driver;
    this.tokens = opts.tokens;
    this.audit = opts.audit;
    this.now = opts.now ?? Date.now;
    this.holds = new OperatorHolds((drive, item) => {
      if (item.type === 'hold') this.tellSession(drive, item.held ? item.by : undefined);
      this.feeds.get(drive)?.announce(item);
    }, this.now);
  }

  /** The drive's session answers no dialog itself while a person holds it. */
  private tellSession(drive: string, by: string | undefined): void {
    try {
      this.driver.get(drive).setOperatorHold(by);
    } catch {
      /* the drive is gone: nothing to tell */
    }
  }

  /** The identity a token stands for, or TOKEN_INVALID (audited, without the token). */
  verify(token: unknown): Identity {
    if (!this.tokens) throw new HostError('NOT_SERVING', 'this gate serves in-process callers only');
    const verdict = this.tokens.verify(token);
    if (verdict.ok) return verdict.identity;
    this.record(null, 'hello', '-', false, 'TOKEN_INVALID');
    throw new CapabilityError('TOKEN_INVALID', verdict.reason === 'expired' ? 'the token has expired: ask for a new one' : 'no valid token: present the owner token (<dataDir>/serve/owner.token) or one minted by tmux-drive token mint');
  }

  /** A caller with `identity`; `sink` receives its subscriptions' items; `onEnd` is told when the gate ends it. */
  open(identity: Identity, sink: (subscription: number, drive: string, item: FeedItem) => void, onEnd: (reason: FeedEndReason) => void): GateSession {
    const s = new GateSession(this, `c${this.nextSession++}`, identity, sink, onEnd);
    this.sessions.add(s);
    return s;
  }

  /** Ends the callers of a revoked token, at once. */
  revoked(tokenId: string): void {
    for (const s of [...this.sessions]) if (s.identity.tokenId === tokenId) s.end('token_revoked');
  }

  /** Ends every caller (the host is closing); the drives are the Driver's to detach. */
  close(): void {
    for (const s of [...this.sessions]) s.end('host_closing');
    for (const f of [...this.feeds.values()]) f.close('host_closing');
  }

  /** @internal */ forget(s: GateSession): void {
    this.sessions.delete(s);
  }

  /** @internal */ feedFor(drive: string): DriveFeed {
    let feed = this.feeds.get(drive);
    if (!feed) {
      const session = this.driver.get(drive);
      const created: DriveFeed = new DriveFeed({
        drive,
        session,
        journalEvents: (afterSeq, limit) => this.driver.events(drive, { afterSeq, limit }),
        redact: this.driver.config.redactSecrets,
        onIdle: () => {
          if (this.feeds.get(drive) === created) this.feeds.delete(drive);
        },
      });
      feed = created;
      this.feeds.set(drive, feed);
    }
    return feed;
  }

  /** @internal */ leaveFeed(drive: string, subscription: number, reason?: FeedEndReason): void {
    this.feeds.get(drive)?.remove(subscription, reason);
  }

  /** @internal */ subscriptionId(): number {
    return this.nextSubscription++;
  }

  /** @internal */ allowIdOf(drive: string): string | undefined {
    try {
      return this.driver.get(drive).allowId;
    } catch {
      return this.driver.list().find((i) => i.id === drive)?.allowId;
    }
  }

  /** @internal */ record(drive: string | null, verb: string, tokenId: string, ok: boolean, code?: string): void {
    if (!this.audit) return;
    try {
      this.audit.record({ sessionId: drive !== null && SESSION_ID.test(drive) ? drive : null, kind: 'call', payload: '', tags: { verb, token: tokenId, ok, ...(code ? { code } : {}) } });
    } catch {
      /* an audit write that fails (disk full) is the journal's to report; the call's answer stands */
    }
  }

  /** @internal */ clock(): number {
    return this.now();
  }
}

export class GateSession implements HoldCaller {
  private readonly subscriptions = new Map<number, string>();
  private ended = false;

  constructor(
    private readonly gate: Gate,
    readonly id: string,
    readonly identity: Identity,
    private readonly sink: (subscription: number, drive: string, item: FeedItem) => void,
    private readonly onEnd: (reason: FeedEndReason) => void,
  ) {}

  get subscriptionCount(): number {
    return this.subscriptions.size;
  }

  get tokenId(): string {
    return this.identity.tokenId;
  }

  /**
   * The console's take-over: this caller holds `drive` (its token needs the drive class and the
   * drive in its scope); OPERATOR_HOLD when another operator holds it. Audited like a call.
   */
  takeOver(drive: string, how: HoldHow): OperatorHold {
    const { scope, tokenId } = this.identity;
    try {
      if (this.ended) throw new HostError('HOST_LOST', 'this connection was ended by the host');
      if (!allowsClass(scope, 'drive')) throw new CapabilityError('NOT_PERMITTED', `token ${tokenId} may not take a drive over (it needs the drive capability)`, { tokenId, needs: 'drive' });
      requireDrive(scope, tokenId, drive, scope.allowIds === undefined ? undefined : this.gate.allowIdOf(drive));
      const hold = this.gate.holds.take(drive, this, how);
      this.gate.record(drive, 'hold', tokenId, true);
      return hold;
    } catch (err) {
      this.gate.record(drive, 'hold', tokenId, false, err instanceof TmuxDriveError ? err.code : 'INTERNAL');
      throw err;
    }
  }

  /** Ends this caller's hold on `drive` (false when it held none). */
  releaseHold(drive: string): boolean {
    const released = this.gate.holds.release(drive, this);
    if (released) this.gate.record(drive, 'release', this.identity.tokenId, true);
    return released;
  }

  async call(method: string, rawParams: unknown, signal: AbortSignal): Promise<unknown> {
    const verb = Object.hasOwn(VERBS, method) ? VERBS[method] : undefined;
    const verbName = verb ? method : 'unknown';
    let drive: string | null = null;
    const disposers: (() => void)[] = [];
    try {
      if (this.ended) throw new HostError('HOST_LOST', 'this connection was ended by the host');
      if (!verb) throw new HostError('PROTOCOL_ERROR', `no method named like that (known: ${Object.keys(VERBS).join(', ')})`);
      const parsed = v.safeParse(verb.params, stripped(rawParams));
      if (!parsed.success) throw new UsageError('BAD_ARGUMENT', `${method}: ${describe(parsed.issues)}`);
      const p = parsed.output;
      const { scope, tokenId } = this.identity;
      // Named before any refusal, so the audit says which drive a refused call was aimed at.
      if (verb.drive) drive = verb.drive(p);
      if (isExpired(scope, this.gate.clock())) {
        // Ended after this call's answer has gone out (the connection closes when it ends).
        setImmediate(() => this.end('token_expired'));
        throw new CapabilityError('TOKEN_INVALID', 'the token has expired: ask for a new one', { tokenId });
      }
      if (verb.cls !== 'any' && !allowsClass(scope, verb.cls)) {
        throw new CapabilityError('NOT_PERMITTED', `token ${tokenId} may not ${method} (it needs the ${verb.cls} capability)`, { tokenId, verb: method, needs: verb.cls });
      }
      if (drive !== null) requireDrive(scope, tokenId, drive, scope.allowIds === undefined ? undefined : this.gate.allowIdOf(drive));
      // A standby that took over serves while it re-attaches: a call waits for the drive it names
      // (a call naming none, for every drive); nothing to wait for once they are all re-attached.
      const adoption = this.gate.driver.adoption(drive ?? undefined);
      if (adoption) await adoption;
      takeoverMark(`call:${method}:${drive ?? '-'}`);
      // An operator's take-over holds every other caller's input off (observers read on). Checked
      // after the wait: a holder's hold asked again of this host (it waits too) that was asked
      // before this input is in force by then.
      if (verb.cls === 'drive' && drive !== null) this.gate.holds.check(drive, this, method);
      const ctx: VerbContext = {
        driver: this.gate.driver,
        identity: this.identity,
        signal,
        caller: `${tokenId}:${this.id}`.slice(0, 64),
        redact: this.gate.driver.config.redactSecrets,
        tokens: this.gate.tokens,
        subscribe: (d, afterSeq, output) => this.subscribe(d, afterSeq, output),
        unsubscribe: (id) => this.unsubscribe(id, 'unsubscribed'),
        now: () => this.gate.clock(),
        inputSignal: (d) => {
          const turn = this.gate.holds.inputSignal(d, this, signal);
          disposers.push(() => turn.dispose());
          return turn.signal;
        },
        hold: (d) => this.gate.holds.take(d, this, 'attach'),
        // The call's own audit row says hold / release: no second row for it.
        release: (d) => this.gate.holds.release(d, this),
      };
      const result = await verb.run(ctx, p);
      takeoverMark(`done:${method}:${drive ?? '-'}`);
      if (method === 'revoke') this.gate.revoked(String((p as { id: string }).id));
      this.gate.record(drive, verbName, tokenId, true);
      return result;
    } catch (err) {
      this.gate.record(drive, verbName, this.identity.tokenId, false, err instanceof TmuxDriveError ? err.code : 'INTERNAL');
      throw err;
    } finally {
      for (const dispose of disposers) dispose();
    }
  }

  private subscribe(drive: string, afterSeq: number, output: boolean): number {
    for (const [id, d] of this.subscriptions) {
      if (d === drive) {
        // One subscription per drive and caller: subscribing again updates it (output marks on/off).
        this.gate.feedFor(drive).add(id, () => undefined, afterSeq, output);
        return id;
      }
    }
    if (this.subscriptions.size >= GATE_LIMITS.subscriptionsPerCaller) {
      throw new TmuxDriveError('LIMIT_REACHED', `a caller holds at most ${GATE_LIMITS.subscriptionsPerCaller} subscriptions`, { cap: 'subscriptionsPerCaller' });
    }
    const id = this.gate.subscriptionId();
    this.subscriptions.set(id, drive);
    this.gate.feedFor(drive).add(
      id,
      (item) => {
        if (item.type === 'ended') this.subscriptions.delete(id);
        this.sink(id, drive, item);
      },
      afterSeq,
      output,
    );
    return id;
  }

  private unsubscribe(id: number, reason: FeedEndReason): boolean {
    const drive = this.subscriptions.get(id);
    if (drive === undefined) return false;
    this.subscriptions.delete(id);
    this.gate.leaveFeed(drive, id, reason);
    return true;
  }

  /** Ends this caller: its subscriptions end with `reason`, and its connection is told. */
  end(reason: FeedEndReason): void {
    if (this.ended) return;
    this.ended = true;
    for (const id of [...this.subscriptions.keys()]) this.unsubscribe(id, reason);
    this.gate.holds.releaseAll(this);
    this.gate.forget(this);
    this.onEnd(reason);
  }

  /** The caller went away: its subscriptions end quietly. */
  dispose(): void {
    if (this.ended) return;
    this.ended = true;
    for (const [id, drive] of [...this.subscriptions]) {
      this.subscriptions.delete(id);
      this.gate.leaveFeed(drive, id);
    }
    // A dead operator holds nothing: the connection or page that went releases its take-overs.
    this.gate.holds.releaseAll(this);
    this.gate.forget(this);
  }
}
