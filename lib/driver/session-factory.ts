/**
 * A Session made from the config and wired to this host: its allow entry's limits, profile and
 * auto-answer policy, the lease checked before every input, the audit log of every action, the
 * pane's process activity, and the journal binding that records its transitions.
 */
import type { Clock } from '../common/clock.js';
import { systemParseScheduler } from '../../backends/process/system-parse-scheduler.js';
import type { DriverConfig } from '../policy/config-schema.js';
import { redactTerminalText } from '../policy/redact.js';
import type { Profile, ProfileSet } from '../perceive/profile.js';
import { Session, type SessionInit } from '../session/session.js';
import type { Journal } from '../../journal/journal.js';
import type { AuditLog } from '../../journal/audit-log.js';
import type { BackendFactory } from './backend-factory.js';
import { JournalBinding, journalAnswers } from './journal-binding.js';
import type { LeaseBook } from './lease-book.js';

/** Which drive a session is, and where its evidence continues from. */
export interface DriveSpec {
  readonly id: string;
  readonly allowId: string;
  readonly cols: number;
  readonly rows: number;
  readonly createdAt: number;
  /** The first transcript seq (a re-attached drive continues its journal's numbering). */
  readonly firstSeq: number;
  /** Interactions an earlier host already made. */
  readonly interactions?: number;
  /** The journal's backend and durability of the drive (re-attach). */
  readonly recorded?: SessionInit['recorded'];
}

/** A new session and the journal binding that records it (disposed when the session is discarded). */
export interface WiredSession {
  readonly session: Session;
  readonly binding: JournalBinding;
}

export interface SessionFactoryDeps {
  readonly config: DriverConfig;
  readonly profiles: ProfileSet;
  readonly clock: Clock;
  readonly journal: Journal;
  readonly leases: LeaseBook;
  readonly audit: AuditLog | undefined;
  /** For the pane's process activity (this host's /proc). */
  readonly backends: BackendFactory;
}

/** Transcript seqs reserved per journal write: one small write per 4096 entries. */
const SEQ_BLOCK = 4096;

/** The profile a drive of allow entry `allowId` classifies with (the same object for every drive of it). */
export function profileOf(config: DriverConfig, profiles: ProfileSet, allowId: string): Profile {
  const entry = config.allow.find((e) => e.id === allowId);
  return profiles.select({ profile: entry?.profile, allowId, binary: entry?.match.path });
}

export class SessionFactory {
  constructor(private readonly deps: SessionFactoryDeps) {}

  make(spec: DriveSpec): WiredSession {
    const { config, profiles, clock, journal, leases, audit, backends } = this.deps;
    const { id, allowId } = spec;
    const entry = config.allow.find((e) => e.id === allowId);
    let backendRef: { panePid(): number | undefined } | undefined;
    const session = new Session({
      id,
      allowId,
      cols: spec.cols,
      rows: spec.rows,
      scrollback: config.defaults.scrollback,
      ringBytes: config.worker.ringBytes,
      clock,
      parseScheduler: systemParseScheduler,
      createdAt: spec.createdAt,
      firstSeq: spec.firstSeq,
      // The transcript's seqs come from the journal's counter in blocks written before use: a host
      // that takes over after a crash starts above every seq the dead one handed out.
      reserveSeqs: (from) => {
        const upTo = from + SEQ_BLOCK - 1;
        try {
          journal.reserveSeq(id, upTo);
        } catch {
          // No row (yet) or the journal failed: numbering goes on; the journal logs its own errors.
        }
        return upTo;
      },
      interactions: spec.interactions ?? 0,
      ...(spec.recorded ? { recorded: spec.recorded } : {}),
      redact: config.redactSecrets,
      limits: entry?.limits ?? {},
      profile: profileOf(config, profiles, allowId),
      stuckMs: config.worker.stuckMs,
      // 0 turns the reaper off.
      ...(config.worker.idleTtlMs > 0 ? { idleTtlMs: config.worker.idleTtlMs } : {}),
      // A drive whose entry is unknown (adopted, or removed from the config) answers nothing itself.
      autoAnswer: entry?.autoAnswer ?? 'none',
      readMode: config.drive.readMode,
      notify: config.drive.notify,
      heartbeatNotifyMs: config.drive.heartbeatNotifyMs,
      maxCostUsd: config.drive.maxCostUsd,
      sampleActivity: () => {
        const pid = backendRef?.panePid();
        return pid === undefined ? undefined : backends.sampleActivity(pid);
      },
      answers: journalAnswers(journal, id),
      onAction: (kind, payload, tags) => {
        // Typed text may carry escape sequences: matched as the text it draws.
        const text = config.redactSecrets ? redactTerminalText(payload).text : payload;
        audit?.record({ sessionId: id, kind, payload: text, tags });
      },
      beforeInput: () => leases.check(id),
    });
    session.on('bound', (backend) => {
      backendRef = backend;
    });
    return { session, binding: new JournalBinding(session, journal, leases) };
  }
}
