/**
 * What a session tells its listeners, and the content-free shapes it tells them in: attention,
 * the drive's outcome, heartbeats, notifications. Types only; every room of lib/session emits
 * through the one emitter typed by `SessionEvents`.
 */
import type { EventEmitter } from 'node:events';
import type { DriveBackend, ExitInfo } from './backend.js';
import type { SessionStatus } from '../perceive/status.js';
import type { EvidenceLoss } from './transcript.js';

export type NotifyPolicy = 'terminal' | 'all' | 'none';

/**
 * A drive's verdict, emitted once per drive: `done` (exited 0), `needs-you` (an escalation: a
 * destructive/approval/auth dialog, the loop guard, a stuck program, the cost limit) or `failed`
 * (nonzero exit or signal, server gone, control lost, an eviction). Content-free: `reason` is a
 * machine token.
 */
export interface DriveOutcome {
  readonly outcome: 'done' | 'needs-you' | 'failed';
  readonly reason: string;
  /** Since the session object was created (this host). */
  readonly elapsedMs: number;
  readonly interactions: number;
  readonly exit?: ExitInfo;
  /** The dialog kind, for a dialog escalation. */
  readonly dialog?: string;
  /** The last cost reading (USD), when the profile reads one. */
  readonly costUsd?: number;
}

/** The periodic content-free digest of a long drive (config `drive.heartbeatNotifyMs`). */
export interface Heartbeat {
  readonly elapsedMs: number;
  /** Since the program last printed (or since the start, when it never did). */
  readonly lastActivityMs: number;
  readonly interactions: number;
  readonly state: SessionStatus['state'];
  readonly reason: string;
  readonly costUsd?: number;
}

/** What reaches a person, by the `notify` policy; content-free. An escalation always does. */
export type Notification =
  | ({ readonly kind: 'outcome' } & DriveOutcome)
  | { readonly kind: 'attention'; readonly escalation: boolean; readonly attention: Attention }
  | ({ readonly kind: 'heartbeat' } & Heartbeat);

/** Content-free: a state that needs a person or an end, with its confidence and machine reason. */
export interface Attention {
  readonly kind: 'input_needed' | 'stuck' | 'exited';
  readonly confidence: 'high' | 'medium';
  readonly reason: string;
  /** The dialog's kind, when a dialog asks. */
  readonly dialog?: string;
}

/** What reaches the program, for the audit log. */
export type SessionAction = 'sendText' | 'sendKeys' | 'signal' | 'resize' | 'kill';

export type SessionEvents = {
  /**
   * The pane's bytes as tmux sent them. `data` is a view of a 64 KiB slab the control parser
   * decodes into (lib/control/octal.ts): a listener that keeps a chunk for long keeps its slab too;
   * copy it (`data.slice()`) to keep a few bytes out of a flood.
   */
  output: [data: Uint8Array, seq: number];
  exit: [exit: ExitInfo];
  state: [status: SessionStatus];
  lost: [reason: string];
  incident: [code: string, detail: Record<string, unknown>];
  /**
   * The mirror was rebuilt from a capture of the pane (`reason`: `attach`, `pause` when tmux paused
   * the pane because the host fell behind and dropped its queued output, `resize`, …): what the
   * program printed in between reached no `output` event.
   */
  resync: [reason: string];
  /**
   * Evidence a consumer has not acknowledged (see `ack`) is about to be evicted from the
   * transcript ring: raised BEFORE it is, naming the seqs; they are still readable right now.
   */
  overflow: [loss: EvidenceLoss];
  /** kill() or detach() finished. */
  closed: [how: 'killed' | 'detached'];
  /** An operator attached or detached (the clients attached now). */
  operators: [clients: readonly string[]];
  /** The backend is connected (the driver's wiring). @internal */
  bound: [backend: DriveBackend];
  /** A person (or the caller) is needed: input, a stuck program, an exit. Content-free. */
  attention: [attention: Attention];
  /** A dialog was answered automatically (its structural digest and the keys sent). */
  answered: [digest: string, keys: readonly string[]];
  /** The drive's verdict: exactly once per drive (the first terminal verdict wins). */
  outcome: [outcome: DriveOutcome];
  /** Every `heartbeatNotifyMs` while the drive is live. */
  heartbeat: [heartbeat: Heartbeat];
  /** What the `notify` policy lets through (outcomes, attention, heartbeats). */
  notification: [notification: Notification];
};

export type SessionEmitter = EventEmitter<SessionEvents>;
