/**
 * A hot standby's drives: while another host drives a data dir, one observer (a read-only control
 * client sent no pane output, backends/tmux/tmux-observer.ts) per live local drive, so that the
 * takeover only takes the leases and adopts these clients (reconcile.ts) instead of starting a
 * `tmux -C` per drive and waiting for each attach. Drives the holder creates later are learnt from
 * the kernel: an inotify watch on the socket directory (a new server binds `<name>.sock`); a drive
 * that ends closes its observer's client. Nothing polls; an idle standby costs no CPU. A drive
 * without an observer at takeover (created in the last moment, or its attach failed) is
 * re-attached cold, as Driver.open always did. The start does not wait for any attach (one drive
 * whose server does not answer must not hold the lock wait up to the tmux deadline): each observer
 * attaches on its own, and a takeover that comes meanwhile waits, per drive, for that drive's attach
 * alone (`pending`). Observing takes no lease and writes nothing: the
 * journal is read once, at start, and kept open for the takeover (it opens in ~40–130 ms here, and a
 * database still open needs no WAL recovery after its writer was SIGKILLed); what the takeover
 * would otherwise do on its own clock is done while waiting: the options and profiles checked,
 * each drive's journal searched for an earlier outcome (the takeover reads only what came after).
 */
import { existsSync, statSync, watch, type FSWatcher } from 'node:fs';
import { NON_TERMINAL_STATES, type Journal } from '../../journal/journal.js';
import { SessionError } from '../common/errors.js';
import type { BackendFactory } from './backend-factory.js';
import { findOutcome, type EarlierOutcome } from './reconcile.js';
import { dropTerminals, prepareTerminals, rehearseTakeover, type RehearsalSize, type RehearsalWork } from './standby-rehearsal.js';

/** An observer as the backend factory makes it (backends/ is imported by backend-factory.ts alone). */
type TmuxObserver = Awaited<ReturnType<BackendFactory['observeLocal']>>;

/** A socket's name as a drive name (the session name rules of tmux-commands, checked again there). */
const SOCKET_FILE = /^([A-Za-z0-9][A-Za-z0-9_-]{0,47})\.sock$/;
/** A server that has bound its socket may not have its session yet: one retry, armed by the event. */
const RETRY_AFTER_MS = 100;
/** Observers attached at once at start (in the background: the start returns before any is attached). */
const START_CONCURRENCY = 4;

/** The socket file's inode (a new server binds a new one), or undefined when there is none. */
function socketInode(path: string): number | undefined {
  try {
    return statSync(path).ino;
  } catch {
    return undefined;
  }
}

export class StandbyObservers {
  private readonly observers = new Map<string, TmuxObserver>();
  /** Attaches under way, by drive name (a watch event and the start list may name the same one). */
  private readonly attaching = new Map<string, Promise<void>>();
  private watcher: FSWatcher | undefined;
  private stopped = false;
  private readonly timers = new Set<NodeJS.Timeout>();
  /** Each drive's journal as read at start (the takeover reads only the events after). */
  readonly earlier = new Map<string, EarlierOutcome>();
  private readonly observedListeners = new Set<() => void>();
  /** Settles once every attach the start began is done (attached or not). */
  startAttaches: Promise<void> = Promise.resolve();

  /** The standby's backends (tmux found, its deadline): the takeover's Driver uses them too. */
  private constructor(readonly backends: BackendFactory) {}

  /**
   * Watches the socket directory, then starts observing every live local drive the journal lists:
   * returns once the attaches are started, not done.
   */
  static start(journal: Journal, backends: BackendFactory): StandbyObservers {
    const standby = new StandbyObservers(backends);
    try {
      // The watch first: a drive created while the list is read is seen by one or the other.
      standby.watcher = watch(backends.socketDir, { persistent: false }, (event, file) => {
        // A server binding its socket creates it ('rename'); a 'change' is tmux's chmod of a socket
        // whose server gained or lost its attached clients (the holder's, when it dies): the same
        // server, whose observer, if it ended, is not made again (that drive is re-attached cold).
        if (event !== 'rename') return;
        const name = typeof file === 'string' ? SOCKET_FILE.exec(file)?.[1] : undefined;
        // A removed socket is an event too (a drive ended): only a bound one is observed.
        if (name !== undefined && existsSync(backends.socketPathFor(name))) standby.observe(name, true);
      });
      standby.watcher.on('error', () => standby.stopWatching());
    } catch {
      // No socket directory yet (no drive was ever made here): drives made later are re-attached
      // cold at takeover.
    }
    const live = journal.listSessions({ states: NON_TERMINAL_STATES });
    for (const r of live) standby.earlier.set(r.id, findOutcome(journal, r.id));
    const names = live.filter((r) => r.backend === 'tmux' && backends.remoteHostOf(r.socketPath) === undefined).map((r) => r.id);
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let name = names[next++]; name !== undefined; name = names[next++]) await standby.attach(name, false);
    };
    // attach() never rejects: a drive not observed is re-attached cold.
    standby.startAttaches = Promise.all(Array.from({ length: Math.min(START_CONCURRENCY, names.length) }, worker)).then(() => undefined);
    return standby;
  }

  /** The observers attached now, by drive name (reconcile adopts them). */
  get ready(): ReadonlyMap<string, TmuxObserver> {
    return this.observers;
  }

  /** The drive's observer, attached now. */
  get(name: string): TmuxObserver | undefined {
    return this.observers.get(name);
  }

  /**
   * Settles once the drive's attach under way (if any) is done, attached or not: a takeover waits
   * for it rather than start a second control client beside it. The start's attaches not begun yet
   * are not waited for (the takeover re-attaches those cold).
   */
  pending(name: string): Promise<void> | undefined {
    return this.attaching.get(name);
  }

  /** Drives the takeover will re-attach as known now: the journal's live ones at start, and those observed since. */
  get expected(): number {
    let later = 0;
    for (const name of this.observers.keys()) if (!this.earlier.has(name)) later++;
    return this.earlier.size + later;
  }

  /** Tells `listener` each time a drive is observed. */
  onObserved(listener: () => void): void {
    this.observedListeners.add(listener);
  }

  /** The takeover begins: no new observers from here on (a drive created now is re-attached cold). */
  stopWatching(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  /** Detaches every observer not adopted (the standby stops, or the takeover is done). */
  async close(): Promise<void> {
    this.stopped = true;
    this.stopWatching();
    const all = [...this.observers.values()];
    this.observers.clear();
    await Promise.all(all.map((o) => o.detach().catch(() => undefined)));
  }

  private observe(name: string, retry: boolean): void {
    if (this.stopped || this.observers.has(name) || this.attaching.has(name)) return;
    void this.attach(name, retry);
  }

  private attach(name: string, retry: boolean): Promise<void> {
    const under = this.attaching.get(name);
    if (under) return under;
    if (this.stopped || this.observers.has(name)) return Promise.resolve();
    const attached = this.attachNow(name, retry).finally(() => this.attaching.delete(name));
    this.attaching.set(name, attached);
    return attached;
  }

  private async attachNow(name: string, retry: boolean): Promise<void> {
    try {
      const observer = await this.backends.observeLocal(name);
      if (this.stopped) return void (await observer.detach());
      this.observers.set(name, observer);
      for (const listener of this.observedListeners) listener();
      const socketAtAttach = socketInode(this.backends.socketPathFor(name));
      observer.onEnded(() => {
        if (this.observers.get(name) === observer) this.observers.delete(name);
        // A drive killed and made again under its name: the new server's socket event may have
        // come while this observer was still listed. (The same server's socket: the observer
        // alone ended; that drive is re-attached cold at takeover.)
        const now = socketInode(this.backends.socketPathFor(name));
        if (now !== undefined && now !== socketAtAttach) this.observe(name, true);
      });
    } catch {
      // Not observed: its server is gone, or not ready yet (one retry). Either way the takeover
      // re-attaches it cold if the journal still lists it live.
      if (retry && !this.stopped) {
        const timer = setTimeout(() => {
          this.timers.delete(timer);
          this.observe(name, false);
        }, RETRY_AFTER_MS);
        this.timers.add(timer);
      }
    }
  }
}

/** What a standby hands Driver.open at takeover. */
export interface PreparedTakeover<D> {
  /** Its observers: those attached, and those still attaching (reconcile.ts waits for a drive's own). */
  readonly observers: Pick<StandbyObservers, 'get' | 'pending'>;
  readonly journal: Journal;
  readonly earlier: ReadonlyMap<string, EarlierOutcome>;
  /** Made while waiting, for the same options (tmux and bwrap looked up once, not on the takeover's clock). */
  readonly backends: BackendFactory;
  /**
   * Called with the Driver once its drives' leases are about to be taken, before any is
   * re-attached (serve listens here; a call for a drive waits for that drive: Driver.adoption).
   */
  readonly serving?: (driver: D) => Promise<void>;
}

/**
 * `Driver.standby()`: a Driver not opened yet whose drives are already observed. `takeOver()` is
 * Driver.open with those observers (call it once the data dir is this process's: the host lock);
 * a drive's lease is taken before its observer is adopted, as for any re-attach.
 */
export class PreparedStandby<D> {
  private used = false;
  /** Spare terminals are being made (one per turn) for the drives known now. */
  private preparing = false;
  /** The size the takeover's mirrors start at (set by rehearse()). */
  private spareSize: RehearsalSize | undefined;

  /** @internal */
  constructor(
    private readonly observers: StandbyObservers,
    private readonly journal: Journal,
    /** Driver.open with the observers (D is the Driver: this file does not import it, which imports this). */
    private readonly open: (prepared: PreparedTakeover<D>) => Promise<D>,
  ) {}

  /**
   * Makes the terminals the takeover's drives' mirrors will take (one per drive known now, and one
   * more for each drive observed later), then runs the takeover's emulator code on scratch mirrors
   * (standby-rehearsal.ts). Spares first: a holder may die a moment after the standby started.
   */
  rehearse(size: RehearsalSize, work?: RehearsalWork): void {
    this.spareSize = size;
    this.observers.onObserved(() => void this.prepareSpares().catch(() => undefined));
    // An optimisation: its failure changes nothing.
    void this.prepareSpares()
      .then(() => rehearseTakeover(size, () => this.used, work))
      .catch(() => undefined);
  }

  private async prepareSpares(): Promise<void> {
    const size = this.spareSize;
    if (!size || this.preparing || this.used) return;
    this.preparing = true;
    try {
      await prepareTerminals(size, () => this.observers.expected, () => this.used);
    } finally {
      this.preparing = false;
    }
  }

  /** Drives observed now (each one's takeover skips starting a control client). */
  get observed(): number {
    return this.observers.ready.size;
  }

  /**
   * Settles with the drives observed once the attaches begun at start are done (a drive whose
   * server does not answer holds this until the tmux deadline; the takeover does not wait for it).
   */
  get hot(): Promise<number> {
    return this.observers.startAttaches.then(() => this.observed);
  }

  /**
   * Opens the Driver, adopting every observer still attached; the others are let go. Once.
   * `serving` is given the Driver before its drives are re-attached (see PreparedTakeover).
   */
  async takeOver(serving?: (driver: D) => Promise<void>): Promise<D> {
    if (this.used) throw new SessionError('DRIVER_CLOSED', 'this standby has already taken over or been closed');
    this.used = true;
    this.observers.stopWatching();
    try {
      // The journal is the Driver's from here on (closed by it, or by open() when it fails).
      return await this.open({ observers: this.observers, journal: this.journal, earlier: this.observers.earlier, backends: this.observers.backends, ...(serving ? { serving } : {}) });
    } catch (err) {
      this.journal.close(); // idempotent: a Driver that was made closed it already
      throw err;
    } finally {
      dropTerminals();
      await this.observers.close();
    }
  }

  /** Stops observing (the wait was given up). Idempotent. */
  async close(): Promise<void> {
    if (this.used) return;
    this.used = true;
    dropTerminals();
    await this.observers.close();
    this.journal.close();
  }
}
