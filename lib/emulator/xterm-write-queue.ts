/**
 * xterm's own write queue, as the mirror uses it when it does not parse queued bytes itself (no
 * scheduler or no private core) and for a rebuild without the core: ops handed to `term.write`
 * in order, at most XTERM_QUEUE_CAP bytes unparsed at once (xterm throws above 50 MB), the rest
 * held here. Each op has a ticket, completed in order as xterm's callbacks fire.
 */
import type { CreatedTerminal } from './headless.js';

const MiB = 1024 * 1024;
/** Bytes handed to xterm at once; the rest waits here. xterm throws above 50 MB unparsed. */
const XTERM_QUEUE_CAP = 16 * MiB;

type Op = { readonly kind: 'bytes'; readonly data: Uint8Array; readonly ticket: number } | { readonly kind: 'resize'; readonly cols: number; readonly rows: number; readonly ticket: number };

const EMPTY = new Uint8Array(0);

function opBytes(op: Op): number {
  return op.kind === 'bytes' ? op.data.length : 0;
}

/** The mirror's side, as the queue needs it. */
export interface XtermWriteQueueHost {
  /** The mirror's terminal now (a rebuild or reset replaces it, after `clear`). */
  terminal(): CreatedTerminal;
  /** An op reached the grid: the mirror's bookkeeping and listeners. */
  parsed(): void;
}

export class XtermWriteQueue {
  readonly #host: XtermWriteQueueHost;
  /** Bumped by clear: callbacks of a retired terminal are ignored. */
  #generation = 0;
  /** Bytes handed to term.write whose callback has not fired. */
  #inXterm = 0;
  /** Ops waiting for room under XTERM_QUEUE_CAP, in order. */
  #held: Op[] = [];
  #heldBytes = 0;
  /** Tickets of queued ops: issued on enqueue, completed in order as xterm parses them. */
  #issued = 0;
  #completed = 0;
  /** Inside one of xterm's write callbacks (listeners run there): the queue cannot be flushed. */
  #inCallback = 0;

  constructor(host: XtermWriteQueueHost) {
    this.#host = host;
  }

  /** Every op issued has been parsed. */
  get settled(): boolean {
    return this.#issued === this.#completed && this.#held.length === 0;
  }

  /** Bytes written here and not yet parsed. */
  get bytes(): number {
    return this.#inXterm + this.#heldBytes;
  }

  /** The last ticket issued: done once `doneUpTo` says so. */
  get lastTicket(): number {
    return this.#issued;
  }

  get inCallback(): boolean {
    return this.#inCallback > 0;
  }

  doneUpTo(ticket: number): boolean {
    return ticket <= this.#completed;
  }

  /** Queues `data` as one op (referenced, not copied). */
  write(data: Uint8Array): void {
    this.#enqueue({ kind: 'bytes', data, ticket: ++this.#issued });
  }

  /** A resize in stream order: applied between the ops around it. */
  resize(cols: number, rows: number): void {
    this.#enqueue({ kind: 'resize', cols, rows, ticket: ++this.#issued });
  }

  /** Forgets every op (superseded): all tickets count as done, pending callbacks are ignored. */
  clear(): void {
    this.#generation++;
    this.#held = [];
    this.#heldBytes = 0;
    this.#inXterm = 0;
    this.#completed = this.#issued;
  }

  #enqueue(op: Op): void {
    if (this.#held.length === 0 && (this.#inXterm === 0 || this.#inXterm + opBytes(op) <= XTERM_QUEUE_CAP)) {
      this.#hand(op);
    } else {
      this.#held.push(op);
      this.#heldBytes += opBytes(op);
    }
  }

  #hand(op: Op): void {
    const generation = this.#generation;
    const { term } = this.#host.terminal();
    this.#inXterm += opBytes(op);
    // An empty write keeps a resize in stream order: its callback runs between the chunks around it.
    term.write(op.kind === 'bytes' ? op.data : EMPTY, () => {
      if (generation !== this.#generation) return;
      this.#inXterm -= opBytes(op);
      this.#completed = op.ticket;
      this.#inCallback++;
      try {
        if (op.kind === 'resize') term.resize(op.cols, op.rows);
        this.#pump();
        this.#host.parsed();
      } finally {
        this.#inCallback--;
      }
    });
  }

  #pump(): void {
    while (this.#held.length > 0) {
      const next = this.#held[0] as Op;
      if (this.#inXterm > 0 && this.#inXterm + opBytes(next) > XTERM_QUEUE_CAP) return;
      this.#held.shift();
      this.#heldBytes -= opBytes(next);
      this.#hand(next);
    }
  }
}
