/**
 * What a Session is built from (SessionInit: the driver's wiring, the allow entry's caps and
 * policies, the config's drive options) and the evidence transcript it starts with, whose
 * overflow is reported as an event and, once per burst, an incident.
 */
import type { EventEmitter } from 'node:events';
import type { Clock } from '../common/clock.js';
import type { ParseScheduler } from '../emulator/parse-scheduler.js';
import type { ProcessActivitySample } from '../perceive/activity.js';
import type { AutoAnswerPolicy } from '../perceive/auto-answer.js';
import type { Profile } from '../perceive/profile.js';
import type { AnswerMemory } from './dialog-answerer.js';
import type { ActionTags } from './input-gate.js';
import type { ReadMode } from './read-modes.js';
import type { NotifyPolicy, SessionAction, SessionEvents } from './session-events.js';
import { Transcript } from './transcript.js';

export interface SessionInit {
  readonly id: string;
  readonly allowId: string;
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  readonly ringBytes: number;
  readonly clock: Clock;
  /** Where the mirror parses queued output (the process's shared scheduler); without it, xterm's own queue. */
  readonly parseScheduler?: ParseScheduler;
  readonly createdAt: number;
  /** Runs before any input reaches the program; throws when this process may not drive it (lease). */
  readonly beforeInput?: () => void;
  /** First transcript seq (continues a re-attached drive's numbering). */
  readonly firstSeq?: number;
  /** Reserves transcript seqs from `from` in durable storage; returns the last one reserved (Transcript). */
  readonly reserveSeqs?: (from: number) => number;
  /** Interactions a previous host already made (re-attach). */
  readonly interactions?: number;
  /** The backend and durability the journal records, for a drive with no backend bound (failed at re-attach). */
  readonly recorded?: { readonly backend: 'tmux' | 'spawn'; readonly durable: boolean };
  /** Redact secrets from reads and the transcript (config `redactSecrets`, default true). */
  readonly redact?: boolean;
  /** Every action that reaches the program, for the audit log (payload not yet redacted). */
  readonly onAction?: (kind: SessionAction, payload: string, tags: ActionTags) => void;
  /** Caps from the allow entry; a breach refuses the request with LIMIT_REACHED naming the cap. */
  readonly limits?: { readonly maxInteractions?: number; readonly maxRequestsPerSession?: number };
  /** How this program is perceived (markers, dialogs, ghost text, soft newline). Default: generic. */
  readonly profile?: Profile;
  /** No output and no CPU or I/O progress for this long ⇒ stuck (worker.stuckMs). */
  readonly stuckMs?: number;
  /** One sample of the pane's process tree (from /proc), or undefined once it is gone. */
  readonly sampleActivity?: () => ProcessActivitySample | undefined;
  /** Evict a drive idle this long: same screen digest, no output, no CPU or I/O (worker.idleTtlMs). */
  readonly idleTtlMs?: number;
  /** The allow entry's auto-answer policy (default safe-only). */
  readonly autoAnswer?: AutoAnswerPolicy;
  /** Answered-prompt memory (the journal): how often a dialog digest was answered; record one. */
  readonly answers?: AnswerMemory;
  /** The default read mode (config `drive.readMode`, default digest). */
  readonly readMode?: ReadMode;
  /** Which events reach the `notification` stream (config `drive.notify`, default terminal). */
  readonly notify?: NotifyPolicy;
  /** A content-free `heartbeat` every this many ms while the drive is live (config `drive.heartbeatNotifyMs`); absent/0 = none. */
  readonly heartbeatNotifyMs?: number;
  /** Spend ceiling (config `drive.maxCostUsd`), enforced through the profile's `cost` reading; null/absent = uncapped. */
  readonly maxCostUsd?: number | null;
}

/** The drive's transcript, continuing `init.firstSeq`; evidence about to be evicted is reported first. */
export function driveTranscript(init: SessionInit, events: EventEmitter<SessionEvents>): Transcript {
  let overflowRaised = false;
  return new Transcript(init.ringBytes, init.firstSeq ?? 1, Date.now, (loss) => {
    // Raised before the eviction, naming what will go: a listener may still read it now.
    events.emit('overflow', loss);
    // The incident (journaled) once per burst: a consumer that stopped acknowledging would
    // otherwise write one row per output chunk.
    if (overflowRaised) return;
    overflowRaised = true;
    events.emit('incident', 'evidence_overflow', { ringBytes: init.ringBytes, fromSeq: loss.fromSeq, toSeq: loss.toSeq, entries: loss.entries, bytes: loss.bytes });
    queueMicrotask(() => {
      overflowRaised = false;
    });
  }, init.reserveSeqs);
}
