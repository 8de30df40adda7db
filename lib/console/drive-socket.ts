/**
 * A drive page's WebSocket: the live screen, and take-over.
 *
 * The screen goes out as frames: the mirror's serialized screen (read() in ansi format, redacted
 * unless the token is admin), sent at once and again after output, at most one per FRAME_MS and
 * never more than one in flight (a slow browser gets the latest screen, not a backlog). Frames
 * carry no terminal queries, so the browser's terminal never answers the program.
 *
 * Watching is one `subscribe` through the gate (the token's class and drives are checked, and it
 * is audited); typed input is `sendText` / `sendKeys` through the gate, each audited with the
 * token's id. Take-over is an operator hold in the gate (lib/serve/operator-holds.ts): while this
 * page holds the drive, every other caller's input (agents, other pages) is refused with
 * OPERATOR_HOLD; release, closing the page or a dropped socket ends the hold.
 */
import type { WebSocket } from 'ws';
import type { Gate, GateSession } from '../serve/gate.js';
import type { Session } from '../session/session.js';
import type { FeedEndReason, FeedItem, Identity } from '../wire/protocol.js';
import { TmuxDriveError } from '../common/errors.js';
import { allowsClass } from '../serve/capabilities.js';
import { mapInput } from './key-map.js';
import type { FleetView } from './fleet-view.js';

/** At most one frame per this many ms per page (a flood of output is ~60 screens a second). */
const FRAME_MS = 16;
/** After a frame, the screen is looked at once more this much later: a chunk the mirror parsed late still shows. */
const TRAILING_MS = 50;
/** A frame's content cap (a 1000×1000 screen with colours fits). */
const FRAME_MAX_BYTES = 4 * 1024 * 1024;
/** Typed input waiting for the gate; a paste larger than this is refused. */
const MAX_PENDING_INPUT = 64 * 1024;
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface DriveSocketOptions {
  readonly ws: WebSocket;
  readonly gate: Gate;
  readonly identity: Identity;
  readonly drive: string;
  readonly fleet: FleetView;
  /** The token's identity still stands (not revoked or expired). */
  readonly stillValid: () => boolean;
}

type ClientMessage = { type: 'takeover' } | { type: 'release' } | { type: 'input'; data: string };

function parseMessage(raw: string): ClientMessage | undefined {
  let m: unknown;
  try {
    m = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof m !== 'object' || m === null) return undefined;
  const t = (m as { type?: unknown }).type;
  if (t === 'takeover' || t === 'release') return { type: t };
  const data = (m as { data?: unknown }).data;
  if (t === 'input' && typeof data === 'string') return { type: 'input', data };
  return undefined;
}

export class DriveSocket {
  private readonly gs: GateSession;
  private readonly admin: boolean;
  private readonly canDrive: boolean;
  private readonly abort = new AbortController();
  private session: Session | undefined;
  private driving = false;
  private closed = false;
  private frameInFlight = false;
  private frameWanted = false;
  private frameTimer: NodeJS.Timeout | undefined;
  private trailingTimer: NodeJS.Timeout | undefined;
  private expiryTimer: NodeJS.Timeout | undefined;
  private lastFrameAt = 0;
  private lastDigest = '';
  private pendingInput = '';
  private sendingInput = false;

  constructor(private readonly o: DriveSocketOptions) {
    this.admin = allowsClass(o.identity.scope, 'admin');
    this.canDrive = allowsClass(o.identity.scope, 'drive');
    this.gs = o.gate.open(o.identity, (_sub, _drive, item) => this.onItem(item), (reason) => this.end(4401, reason));
    o.ws.on('message', (data, isBinary) => {
      if (isBinary) return this.end(1003, 'text frames only');
      this.onMessage(data.toString());
    });
    o.ws.on('close', () => this.dispose());
    o.ws.on('error', () => this.dispose());
    const expiresAt = o.identity.scope.expiresAt;
    // Past a timer's range (24.8 days) the socket is checked at each message instead.
    if (expiresAt !== undefined && expiresAt - Date.now() < MAX_TIMER_MS) this.expiryTimer = setTimeout(() => this.end(4401, 'token_expired'), Math.max(0, expiresAt - Date.now()));
  }

  /** Subscribes through the gate (NOT_PERMITTED, SESSION_NOT_FOUND end the socket), then the first frame. */
  async start(): Promise<void> {
    try {
      await this.gs.call('subscribe', { id: this.o.drive, output: true }, this.abort.signal);
      this.session = this.o.gate.driver.get(this.o.drive);
    } catch (err) {
      this.send({ type: 'error', code: err instanceof TmuxDriveError ? err.code : 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
      this.end(4403, 'refused');
      return;
    }
    const taker = this.o.fleet.taker(this.o.drive);
    this.send({ type: 'hello', drive: this.o.drive, tokenId: this.o.identity.tokenId, canDrive: this.canDrive, redacted: !this.admin, ...(taker ? { takenBy: taker } : {}) });
    this.sendStatus();
    this.frame();
  }

  private onItem(item: FeedItem): void {
    switch (item.type) {
      case 'output':
        this.frameSoon();
        return;
      case 'ended':
        this.end(4000, item.reason);
        return;
      case 'journal':
      case 'notification':
        return;
      case 'hold':
        // Another operator's take-over (or its end): this page says so; its own is told by 'control'.
        if (!this.driving) this.send({ type: 'hold', held: item.held, by: item.by, how: item.how });
        return;
      default:
        this.sendStatus();
        this.frameSoon();
    }
  }

  private sendStatus(): void {
    const s = this.session;
    if (!s) return;
    let status: ReturnType<Session['status']> | undefined;
    try {
      status = s.status();
    } catch {
      status = undefined;
    }
    const outcome = s.outcome;
    this.send({
      type: 'status',
      lifecycle: s.lifecycle,
      ...(status ? { state: status.state, confidence: status.confidence, reason: status.reason, ...(status.dialog ? { dialog: status.dialog.kind } : {}) } : {}),
      ...(outcome ? { outcome: outcome.outcome, outcomeReason: outcome.reason } : {}),
      interactions: s.interactionCount,
    });
  }

  private frameSoon(): void {
    if (this.closed) return;
    if (this.frameInFlight) {
      this.frameWanted = true;
      return;
    }
    if (this.frameTimer) return;
    const wait = this.lastFrameAt + FRAME_MS - Date.now();
    if (wait <= 0) this.frame();
    else this.frameTimer = setTimeout(() => this.frame(), wait);
  }

  private frame(): void {
    this.frameTimer = undefined;
    this.frameWanted = false;
    const s = this.session;
    if (this.closed || !s || s.disposed) return;
    let read: ReturnType<Session['read']>;
    try {
      read = s.read({ mode: 'full', format: 'ansi', maxBytes: FRAME_MAX_BYTES, caller: 'console', ...(this.admin ? { redact: false } : {}) });
      this.lastDigest = s.digest();
    } catch {
      return; // the drive closed meanwhile: its end comes as a feed item
    }
    this.lastFrameAt = Date.now();
    this.frameInFlight = true;
    const message = { type: 'frame', cols: read.cols, rows: read.rows, cursor: read.cursor, alternate: read.alternate, seq: read.seq, redactions: read.redactions, content: read.content };
    this.o.ws.send(JSON.stringify(message), () => {
      this.frameInFlight = false;
      if (this.frameWanted) this.frameSoon();
    });
    clearTimeout(this.trailingTimer);
    this.trailingTimer = setTimeout(() => {
      this.trailingTimer = undefined;
      try {
        if (!this.closed && s.digest() !== this.lastDigest) this.frameSoon();
      } catch {
        /* the mirror is gone */
      }
    }, TRAILING_MS);
  }

  private onMessage(raw: string): void {
    if (!this.o.stillValid()) return this.end(4401, 'token_invalid');
    const m = parseMessage(raw);
    if (!m) return this.send({ type: 'error', code: 'BAD_ARGUMENT', message: 'unknown message' });
    if (m.type === 'takeover') return this.takeOver();
    if (m.type === 'release') return this.release();
    if (!this.driving) return this.send({ type: 'error', code: 'NOT_DRIVING', message: 'take over first' });
    if (this.pendingInput.length + m.data.length > MAX_PENDING_INPUT) return this.send({ type: 'error', code: 'LIMIT_REACHED', message: 'input arrives faster than the drive takes it' });
    this.pendingInput += m.data;
    void this.pumpInput();
  }

  private takeOver(): void {
    if (!this.canDrive) return this.send({ type: 'error', code: 'NOT_PERMITTED', message: `token ${this.o.identity.tokenId} may not drive (it needs the drive capability)` });
    const taker = this.o.fleet.taker(this.o.drive);
    if (taker !== undefined && !this.driving) return this.send({ type: 'error', code: 'TAKEN', message: `console:${taker} drives it now` });
    try {
      this.gs.takeOver(this.o.drive, 'console');
    } catch (err) {
      // Held by an operator at a terminal (tmux-drive attach), or the token may not.
      return this.send({ type: 'error', code: err instanceof TmuxDriveError ? err.code : 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
    }
    this.driving = true;
    this.o.fleet.setTaker(this.o.drive, this.o.identity.tokenId);
    this.send({ type: 'control', driving: true });
  }

  private release(): void {
    if (!this.driving) return;
    this.driving = false;
    this.pendingInput = '';
    this.gs.releaseHold(this.o.drive);
    this.o.fleet.setTaker(this.o.drive, undefined);
    this.send({ type: 'control', driving: false });
  }

  /** Sends what was typed, in order, one gate call per run of text or keys; typing meanwhile is batched. */
  private async pumpInput(): Promise<void> {
    if (this.sendingInput) return;
    this.sendingInput = true;
    try {
      while (this.pendingInput && this.driving && !this.closed) {
        const data = this.pendingInput;
        this.pendingInput = '';
        for (const action of mapInput(data)) {
          const params = action.kind === 'text' ? { id: this.o.drive, text: action.text, paste: 'never' } : { id: this.o.drive, keys: action.keys };
          await this.gs.call(action.kind === 'text' ? 'sendText' : 'sendKeys', params, this.abort.signal);
        }
      }
      this.sendStatus(); // the interaction count moved
    } catch (err) {
      this.pendingInput = '';
      this.send({ type: 'error', code: err instanceof TmuxDriveError ? err.code : 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
    } finally {
      this.sendingInput = false;
    }
  }

  private send(message: Record<string, unknown>): void {
    if (this.closed || this.o.ws.readyState !== this.o.ws.OPEN) return;
    this.o.ws.send(JSON.stringify(message));
  }

  private end(code: number, reason: FeedEndReason | string): void {
    if (this.closed) return;
    this.send({ type: 'ended', reason });
    this.o.ws.close(code, reason.slice(0, 100));
    this.dispose();
  }

  private dispose(): void {
    if (this.closed) return;
    this.closed = true;
    this.abort.abort();
    clearTimeout(this.frameTimer);
    clearTimeout(this.trailingTimer);
    clearTimeout(this.expiryTimer);
    if (this.driving) this.o.fleet.setTaker(this.o.drive, undefined);
    this.driving = false;
    this.gs.dispose();
  }
}
