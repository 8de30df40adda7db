/**
 * The journal's records: the closed value sets (states, backends, incident kinds) and the shapes
 * the `Journal` facade takes and returns. Types only and constant tables; no SQLite here.
 */
import type { JournalError, LeaseHolder } from './journal-error.js';
import type { MachineTags } from './machine-values.js';

export const JOURNAL_FILE = 'journal.sqlite3';

export const SESSION_STATES = ['live', 'detached', 'exited', 'failed'] as const;
/** `live`: a host drives it; `detached`: nobody does, its server runs on; the rest are terminal. */
export type JournalSessionState = (typeof SESSION_STATES)[number];
/** The states a restarted host must reconcile (re-attach, or mark failed). */
export const NON_TERMINAL_STATES: readonly JournalSessionState[] = ['live', 'detached'];

export const CLASSIFIED_STATES = ['working', 'awaiting-input', 'exited', 'stuck'] as const;
export type ClassifiedState = (typeof CLASSIFIED_STATES)[number];

export const BACKENDS = ['tmux', 'spawn'] as const;
export type BackendKind = (typeof BACKENDS)[number];

/** A closed set: an incident a human should be able to find later. Details go in machine tags. */
export const INCIDENT_KINDS = [
  'malformed_stream',
  'evidence_overflow',
  'cleanup_failure',
  'nonzero_exit',
  'server_gone',
  'lease_lost',
  'lease_takeover',
  'control_lost',
  'resync_failed',
  'drift_detected',
  'kill_unverified',
  'pane_in_mode',
  /** A live tmux server of the data dir that the journal had lost (emptied, deleted), adopted on request. */
  'orphan_adopted',
] as const;
export type IncidentKind = (typeof INCIDENT_KINDS)[number];

export interface JournalOptions {
  /** Wall-clock milliseconds for the times stored (default Date.now). */
  readonly clock?: () => number;
  /** A buffered write that failed at the end of a tick (the rows stay buffered for the next flush). */
  readonly onError?: (error: JournalError) => void;
  /** How long a write waits for another process's transaction before failing (default 5000 ms). */
  readonly busyTimeoutMs?: number;
}

export interface ExitRecord {
  readonly code: number | null;
  readonly signal: number | null;
}

export interface Classification {
  readonly state: ClassifiedState;
  /** A machine reason token, e.g. `cursor_parked`. */
  readonly reason: string;
}

/** What upsertSession takes. `argvHash` and `objectiveHash` come from hashOf(). */
export interface SessionInput {
  readonly id: string;
  readonly name: string;
  /** Absolute; stored relative to the data dir when inside it. */
  readonly socketPath: string;
  readonly allowId: string;
  readonly argvHash: string;
  readonly objectiveHash?: string | null;
  readonly backend: BackendKind;
  readonly durable: boolean;
  readonly state: JournalSessionState;
  readonly classification?: Classification | null;
  readonly interactions?: number;
  readonly exit?: ExitRecord | null;
  /** A machine reason token, e.g. `server_gone`. */
  readonly failureReason?: string | null;
  /** Default: the journal's clock at the first upsert. */
  readonly createdAt?: number;
}

export type SessionPatch = Partial<Omit<SessionInput, 'id' | 'createdAt'>>;

export interface SessionRecord {
  readonly id: string;
  readonly name: string;
  readonly socketPath: string;
  readonly allowId: string;
  readonly argvHash: string;
  readonly objectiveHash: string | null;
  readonly backend: BackendKind;
  readonly durable: boolean;
  readonly state: JournalSessionState;
  readonly classification: Classification | null;
  readonly interactions: number;
  readonly exit: ExitRecord | null;
  readonly failureReason: string | null;
  /** The last event seq handed out for this session (buffered ones included). */
  readonly lastSeq: number;
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface JournalEvent {
  readonly sessionId: string;
  readonly seq: number;
  readonly at: number;
  readonly kind: string;
  readonly tags: MachineTags;
}

export interface IncidentRecord {
  readonly id: number;
  readonly sessionId: string | null;
  readonly kind: IncidentKind;
  readonly at: number;
  readonly tags: MachineTags;
}

export interface Lease {
  readonly token: number;
  /** Set when the lease was taken over from a holder that is no longer alive. */
  readonly takenOverFrom?: LeaseHolder;
}

export interface LeaseInfo {
  readonly sessionId: string;
  readonly token: number;
  /** null once released. */
  readonly holder: LeaseHolder | null;
  readonly acquiredAt: number;
  readonly releasedAt: number | null;
}

export interface JournalStats {
  /** Transactions committed by this instance. */
  readonly commits: number;
  readonly eventsWritten: number;
  readonly incidentsWritten: number;
  readonly pendingEvents: number;
  readonly pendingIncidents: number;
  /** The code of the last buffered write that failed, until a later flush succeeds. */
  readonly lastError: string | null;
  /**
   * The lease checks before input: answered from the WAL-index header alone, or by SQLite (a
   * commit since the last one, or no header to trust); `walIndexOff` says why the header is not
   * used at all (null when it is); `walIndexReadBy` how it is read: `mapped` (a memory read per
   * check) or `pread (<why not mapped>)` (null when it is not used).
   */
  readonly leaseChecks: { readonly viaWalIndex: number; readonly full: number; readonly walIndexOff: string | null; readonly walIndexReadBy: string | null };
}
