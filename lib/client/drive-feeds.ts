/**
 * The client's subscriptions, one per drive while a listener is on it: the listeners of the drive's
 * events, the last journal seq delivered (a subscription resumed on the next host starts after it,
 * so a journal listener sees every stored event exactly once across hosts), and the host's items
 * turned into those events. The Client (client.ts) owns the connection: it hands each item to
 * onItem(), calls lost() when the host goes, resume() once the next one serves, and close() at its end.
 */
import { EventEmitter } from 'node:events';
import type { Disposable } from '../common/disposable.js';
import { TmuxDriveError } from '../common/errors.js';
import { HostError } from '../wire/host-error.js';
import type { FeedItem, ItemParams } from '../wire/protocol.js';
import type { RemoteDriveEvents } from './remote-drive.js';

interface Feed {
  readonly emitter: EventEmitter<RemoteDriveEvents>;
  listeners: number;
  /** The last journal seq delivered: a resumed subscription starts after it. */
  lastSeq: number;
  output: boolean;
  subscribed: boolean;
  /** The host's id of the current subscription (a new one after each reconnect). */
  subscription?: number;
}

/** What the feeds need of the client. */
export interface FeedsPort {
  /** One call of the gate (it waits for a host while the client reconnects). */
  call(method: string, params: Readonly<Record<string, unknown>>): Promise<unknown>;
  /** Ends a subscription on the host, if the client is connected. */
  unsubscribe(subscription: number): void;
  /** A hold ended on the host (`since` tells which hold). */
  holdEnded(drive: string, since: number): void;
  /** A subscription could not be (re)made. */
  subscriptionError(drive: string, error: TmuxDriveError): void;
}

export class DriveFeeds {
  private readonly feeds = new Map<string, Feed>();

  constructor(private readonly port: FeedsPort) {}

  listen<E extends keyof RemoteDriveEvents>(drive: string, event: E, listener: (...args: RemoteDriveEvents[E]) => void): Disposable {
    let feed = this.feeds.get(drive);
    if (!feed) {
      feed = { emitter: new EventEmitter<RemoteDriveEvents>(), listeners: 0, lastSeq: 0, output: false, subscribed: false };
      this.feeds.set(drive, feed);
    }
    const f = feed;
    f.emitter.on(event, listener as never);
    f.listeners += 1;
    const wantsOutput = event === 'output' && !f.output;
    if (wantsOutput) f.output = true;
    if (!f.subscribed || wantsOutput) this.subscribe(drive, f);
    let disposed = false;
    return {
      dispose: () => {
        if (disposed) return;
        disposed = true;
        f.emitter.off(event, listener as never);
        f.listeners -= 1;
        if (f.listeners > 0 || this.feeds.get(drive) !== f) return;
        this.feeds.delete(drive);
        if (f.subscribed && f.subscription !== undefined) this.port.unsubscribe(f.subscription);
      },
    };
  }

  /** The host went: every subscription is to be made again on the next. */
  lost(): void {
    for (const f of this.feeds.values()) f.subscribed = false;
  }

  /** A host serves again: each drive still listened to resumes after its last journal seq. */
  resume(): void {
    for (const [drive, feed] of this.feeds) if (feed.listeners > 0) this.subscribe(drive, feed);
  }

  /** The client's end: every listener goes. */
  close(): void {
    for (const f of this.feeds.values()) f.emitter.removeAllListeners();
    this.feeds.clear();
  }

  private subscribe(drive: string, feed: Feed): void {
    feed.subscribed = true;
    this.port.call('subscribe', { id: drive, afterSeq: feed.lastSeq, output: feed.output }).then(
      (r) => {
        feed.subscription = (r as { subscription: number }).subscription;
      },
      (err: unknown) => {
        feed.subscribed = false;
        this.port.subscriptionError(drive, err instanceof TmuxDriveError ? err : new HostError('PROTOCOL_ERROR', String(err)));
      },
    );
  }

  onItem(p: ItemParams): void {
    const feed = this.feeds.get(p.drive);
    if (!feed) return;
    const item: FeedItem = p.item;
    const e = feed.emitter;
    switch (item.type) {
      case 'journal':
        // After a resume the host starts past lastSeq; a duplicate (a page raced a resubscribe) is dropped.
        if (item.seq <= feed.lastSeq) return;
        feed.lastSeq = item.seq;
        e.emit('journal', { seq: item.seq, at: item.at, kind: item.kind, tags: item.tags });
        return;
      case 'output':
        e.emit('output', { seq: item.seq, bytes: item.bytes });
        return;
      case 'state':
        e.emit('state', item.status as RemoteDriveEvents['state'][0]);
        return;
      case 'attention':
        e.emit('attention', item.attention as RemoteDriveEvents['attention'][0]);
        return;
      case 'exit':
        e.emit('exit', item.exit);
        return;
      case 'outcome':
        e.emit('outcome', item.outcome as RemoteDriveEvents['outcome'][0]);
        return;
      case 'operators':
        e.emit('operators', item.clients);
        return;
      case 'hold':
        // Our hold ended on the host (its own since, not an older hold's late item): not taken again.
        if (!item.held) this.port.holdEnded(p.drive, item.since);
        e.emit('hold', { held: item.held, by: item.by, how: item.how, since: item.since });
        return;
      case 'notification':
        e.emit('notification', item.notification as RemoteDriveEvents['notification'][0]);
        return;
      case 'lost':
        e.emit('lost', item.reason);
        return;
      case 'closed':
        e.emit('closed', item.how);
        return;
      case 'ended':
        // host_closing: the connection goes next, and the subscription resumes on the next host.
        if (item.reason !== 'host_closing') feed.subscribed = false;
        e.emit('ended', item.reason);
        return;
    }
  }
}
