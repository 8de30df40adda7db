/**
 * The console's table: one row per drive (name, allow entry and profile, state with confidence and
 * reason, the dialog kind, outcome, who is attached, interactions, age), kept from the sessions'
 * own events and handed to every watching table at most once per turn of the event loop.
 *
 * Rows are content-free (machine values, never screen text), so one row serves every token; each
 * socket filters by its token's drives. Nothing listens while no table is open.
 */
import type { Driver, SessionInfo } from '../driver/driver.js';
import type { Session } from '../session/session.js';
import type { Attention, DriveOutcome } from '../session/session-events.js';
import type { SessionStatus } from '../perceive/status.js';
import type { Disposable } from '../common/disposable.js';

export interface DriveRow {
  readonly name: string;
  readonly allowId: string;
  readonly profile?: string;
  readonly backend: 'tmux' | 'spawn';
  readonly lifecycle: 'live' | 'exited' | 'failed';
  /** Another process drives it (this host only lists it). */
  readonly heldBy?: number;
  readonly state?: SessionStatus['state'];
  readonly confidence?: SessionStatus['confidence'];
  readonly reason?: string;
  readonly dialog?: string;
  readonly attention?: Attention;
  readonly outcome?: Pick<DriveOutcome, 'outcome' | 'reason' | 'dialog'>;
  /** tmux clients attached, and `console:<token id>` while someone drives it from a console. */
  readonly attached: readonly string[];
  readonly interactions?: number;
  readonly createdAt: string;
  /** Waits for a person: the attention queue, listed first. */
  readonly waiting: boolean;
}

export type FleetListener = (changed: readonly DriveRow[], removed: readonly string[]) => void;

interface Watched {
  readonly session: Session;
  readonly listeners: Disposable[];
  status?: SessionStatus;
  attention?: Attention;
}

function waitsForPerson(status: SessionStatus | undefined, attention: Attention | undefined, outcome: DriveOutcome | undefined): boolean {
  if (outcome) return outcome.outcome === 'needs-you';
  if (!status) return false;
  if (status.state === 'stuck' || (status.state === 'awaiting-input' && status.dialog !== undefined)) return true;
  return attention !== undefined && attention.kind !== 'exited' && status.state !== 'working' && status.state !== 'exited';
}

export class FleetView {
  private readonly listeners = new Set<FleetListener>();
  private readonly watched = new Map<string, Watched>();
  private readonly takers = new Map<string, string>();
  private readonly dirty = new Set<string>();
  private created: Disposable | undefined;
  private flushArmed = false;

  constructor(private readonly driver: Driver) {}

  /** Every row now (drives of this host first, then those only listed). */
  rows(): DriveRow[] {
    return this.driver.list().map((info) => this.row(info));
  }

  /** `listener` gets the rows that changed; the first watcher starts the listening, the last stops it. */
  watch(listener: FleetListener): Disposable {
    this.listeners.add(listener);
    if (this.listeners.size === 1) this.start();
    return {
      dispose: () => {
        if (!this.listeners.delete(listener)) return;
        if (this.listeners.size === 0) this.stop();
      },
    };
  }

  /** A console operator took over (`who`) or released (undefined) the drive. */
  setTaker(name: string, who: string | undefined): void {
    if (who === undefined) this.takers.delete(name);
    else this.takers.set(name, who);
    this.mark(name);
  }

  taker(name: string): string | undefined {
    return this.takers.get(name);
  }

  private start(): void {
    for (const info of this.driver.list()) {
      const s = this.sessionOf(info.id);
      if (s) this.follow(s);
    }
    this.created = this.driver.onCreated((s) => {
      this.follow(s);
      this.mark(s.id);
    });
  }

  private stop(): void {
    this.created?.dispose();
    this.created = undefined;
    for (const w of this.watched.values()) for (const l of w.listeners) l.dispose();
    this.watched.clear();
    this.dirty.clear();
  }

  private sessionOf(id: string): Session | undefined {
    try {
      return this.driver.get(id);
    } catch {
      return undefined; // held by another process, or gone: listed, not followed
    }
  }

  private follow(s: Session): void {
    const old = this.watched.get(s.id);
    if (old?.session === s) return;
    if (old) for (const l of old.listeners) l.dispose();
    const w: Watched = { session: s, listeners: [] };
    const changed = (): void => this.mark(s.id);
    w.listeners.push(
      s.on('state', (status) => {
        w.status = status;
        if (status.state === 'working') w.attention = undefined;
        changed();
      }),
      s.on('attention', (attention) => {
        w.attention = attention;
        changed();
      }),
      s.on('outcome', changed),
      s.on('operators', changed),
      s.on('exit', changed),
      s.on('lost', changed),
      s.on('closed', changed),
    );
    this.watched.set(s.id, w);
  }

  private mark(name: string): void {
    if (this.listeners.size === 0) return;
    this.dirty.add(name);
    if (this.flushArmed) return;
    this.flushArmed = true;
    // One message per turn: a burst of events on many drives is one update.
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushArmed = false;
    if (this.dirty.size === 0 || this.listeners.size === 0) return;
    const names = new Set(this.dirty);
    this.dirty.clear();
    const listed = new Map(this.driver.list().map((i) => [i.id, i]));
    const changed: DriveRow[] = [];
    const removed: string[] = [];
    for (const name of names) {
      const info = listed.get(name);
      if (info) changed.push(this.row(info));
      else removed.push(name);
    }
    for (const l of [...this.listeners]) {
      try {
        l(changed, removed);
      } catch {
        /* one table's failure (a socket going away) is its own */
      }
    }
  }

  private row(info: SessionInfo): DriveRow {
    const w = this.watched.get(info.id);
    const s = w?.session ?? this.sessionOf(info.id);
    const taker = this.takers.get(info.id);
    const attached = [...(s?.operators ?? []), ...(taker ? [`console:${taker}`] : [])];
    const base = {
      name: info.id,
      allowId: info.allowId,
      backend: info.backend,
      lifecycle: info.state,
      createdAt: info.createdAt,
      attached,
      ...(info.heldBy !== undefined ? { heldBy: info.heldBy } : {}),
    };
    if (!s) return { ...base, waiting: false, ...(info.reason ? { reason: info.reason } : {}) };
    let status = w?.status;
    if (!status) {
      try {
        status = s.status();
      } catch {
        status = undefined; // the mirror is gone (a closed drive): the row keeps what it knew
      }
      if (w && status) w.status = status;
    }
    const outcome = s.outcome;
    return {
      ...base,
      profile: s.profile.id,
      interactions: s.interactionCount,
      ...(status ? { state: status.state, confidence: status.confidence, reason: status.reason, ...(status.dialog ? { dialog: status.dialog.kind } : {}) } : {}),
      ...(w?.attention ? { attention: w.attention } : {}),
      ...(outcome ? { outcome: { outcome: outcome.outcome, reason: outcome.reason, ...(outcome.dialog ? { dialog: outcome.dialog } : {}) } } : {}),
      waiting: waitsForPerson(status, w?.attention, outcome),
    };
  }
}
