/**
 * A drive's feed: what its subscribers receive, from one set of listeners on the Session however
 * many subscribe. Two kinds of items (lib/wire/protocol.ts, FeedItem):
 *
 * - journal items: the drive's stored journal events, read back from the journal after each
 *   session event (the journal writes them at the end of the turn; reading flushes them), so a
 *   seq a subscriber saw is stored, and never handed out again by a later host. Each subscriber
 *   has a cursor; a resumed subscription starts after the seq it gives and misses nothing.
 * - live items: output marks (transcript seq and byte count, coalesced per turn; never the bytes:
 *   a secret split across two chunks cannot be redacted chunk by chunk, `transcript` redacts with
 *   context), state (redacted), attention, exit, outcome, operators, notification, lost, closed.
 *
 * Nothing here runs unless the session emits: one setImmediate per burst of events, no timer.
 */
import type { Session } from '../session/session.js';
import type { Disposable } from '../common/disposable.js';
import { redactStrings } from '../policy/redact-values.js';
import type { FeedEndReason, FeedItem } from '../wire/protocol.js';

export type FeedSink = (item: FeedItem) => void;

export interface JournalEventRow {
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: Readonly<Record<string, unknown>>;
}

/** Journal events are read in pages of this many; a longer replay continues on the next turn. */
const JOURNAL_PAGE = 1000;

interface Subscriber {
  readonly id: number;
  readonly sink: FeedSink;
  cursor: number;
  output: boolean;
}

export interface DriveFeedOptions {
  readonly drive: string;
  readonly session: Session;
  /** Stored journal events of the drive after `afterSeq` (Driver.events). */
  readonly journalEvents: (afterSeq: number, limit: number) => readonly JournalEventRow[];
  readonly redact: boolean;
  /** The last subscriber left, or the drive closed: the owner forgets this feed. */
  readonly onIdle: () => void;
}

export class DriveFeed {
  private readonly subscribers = new Map<number, Subscriber>();
  private listeners: Disposable[] = [];
  private pumpArmed = false;
  private outputArmed = false;
  private outputBytes = 0;
  private outputSeq = 0;
  private ended = false;

  constructor(private readonly opts: DriveFeedOptions) {}

  get drive(): string {
    return this.opts.drive;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** Adds (or, for the same id, updates) a subscriber; its journal items start after `afterSeq`. */
  add(id: number, sink: FeedSink, afterSeq: number, output: boolean): void {
    const existing = this.subscribers.get(id);
    if (existing) {
      existing.output = output;
      return;
    }
    this.subscribers.set(id, { id, sink, cursor: afterSeq, output });
    if (this.listeners.length === 0) this.listen();
    this.armPump();
  }

  remove(id: number, reason?: FeedEndReason): void {
    const sub = this.subscribers.get(id);
    if (!sub) return;
    this.subscribers.delete(id);
    if (reason) safeSend(sub.sink, { type: 'ended', reason });
    if (this.subscribers.size === 0) this.stop();
  }

  /** Ends every subscription with `reason`. */
  close(reason: FeedEndReason): void {
    for (const id of [...this.subscribers.keys()]) this.remove(id, reason);
    this.stop();
  }

  private stop(): void {
    for (const l of this.listeners) l.dispose();
    this.listeners = [];
    if (!this.ended) {
      this.ended = true;
      this.opts.onIdle();
    }
  }

  private listen(): void {
    const s = this.opts.session;
    const redact = this.opts.redact;
    this.listeners = [
      s.on('output', (data, seq) => this.onOutput(data.byteLength, seq)),
      s.on('state', (status) => this.live({ type: 'state', status: redactStrings(status, redact) }, true)),
      s.on('attention', (attention) => this.live({ type: 'attention', attention }, true)),
      s.on('exit', (exit) => this.live({ type: 'exit', exit }, true)),
      s.on('outcome', (outcome) => this.live({ type: 'outcome', outcome }, true)),
      s.on('operators', (clients) => this.live({ type: 'operators', clients: [...clients] }, false)),
      s.on('notification', (notification) => this.live({ type: 'notification', notification }, false)),
      s.on('lost', (reason) => this.live({ type: 'lost', reason }, true)),
      s.on('closed', (how) => {
        this.live({ type: 'closed', how }, true);
        // The journal's last events of the drive (killed, evicted) go out before the end.
        if (how === 'killed') setImmediate(() => {
          this.pump();
          this.close('drive_closed');
        });
      }),
    ];
  }

  /** An item the gate tells of (an operator hold), live to every subscriber. */
  announce(item: FeedItem): void {
    if (!this.ended) this.live(item, false);
  }

  private live(item: FeedItem, journaled: boolean): void {
    this.flushOutput();
    for (const sub of this.subscribers.values()) safeSend(sub.sink, item);
    if (journaled) this.armPump();
  }

  private onOutput(bytes: number, seq: number): void {
    if (![...this.subscribers.values()].some((s) => s.output)) return;
    this.outputBytes += bytes;
    this.outputSeq = seq;
    if (this.outputArmed) return;
    this.outputArmed = true;
    // One mark per turn of the event loop: a flood of small chunks is not a flood of lines.
    setImmediate(() => this.flushOutput());
  }

  private flushOutput(): void {
    this.outputArmed = false;
    if (this.outputBytes === 0) return;
    const item: FeedItem = { type: 'output', seq: this.outputSeq, bytes: this.outputBytes };
    this.outputBytes = 0;
    for (const sub of this.subscribers.values()) if (sub.output) safeSend(sub.sink, item);
  }

  private armPump(): void {
    if (this.pumpArmed) return;
    this.pumpArmed = true;
    setImmediate(() => this.pump());
  }

  /** Sends each subscriber the stored journal events past its cursor, one page per turn. */
  private pump(): void {
    this.pumpArmed = false;
    const byCursor = new Map<number, Subscriber[]>();
    for (const sub of this.subscribers.values()) {
      const group = byCursor.get(sub.cursor);
      if (group) group.push(sub);
      else byCursor.set(sub.cursor, [sub]);
    }
    let more = false;
    for (const [cursor, group] of byCursor) {
      let rows: readonly JournalEventRow[];
      try {
        rows = this.opts.journalEvents(cursor, JOURNAL_PAGE);
      } catch {
        continue; // the journal is closing (host shutdown): nothing more to send
      }
      if (rows.length === JOURNAL_PAGE) more = true;
      for (const row of rows) {
        const item: FeedItem = { type: 'journal', seq: row.seq, at: row.at, kind: row.kind, tags: row.tags };
        for (const sub of group) safeSend(sub.sink, item);
      }
      const last = rows[rows.length - 1];
      if (last) for (const sub of group) sub.cursor = last.seq;
    }
    if (more) this.armPump();
  }
}

/** A sink that throws (a connection going away) never stops the others or the session. */
function safeSend(sink: FeedSink, item: FeedItem): void {
  try {
    sink(item);
  } catch {
    /* the connection handles its own failure */
  }
}
