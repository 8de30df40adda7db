/**
 * A standby's serving host, made while it waits, so that its takeover only switches it on. Measured
 * under load, starting to serve cost ≈ 95 ms between the lock and the first drive's re-attach: the
 * token store's open (its first sha256: crypto cold), the socket's listen, the host record. While
 * the standby waits this binds its socket at a private name in the serve dir (0600; it serves
 * nobody: a connection made to it is closed), reads the token store (noting which files it read)
 * and runs its verify once, opens the audit log and reads the process start time for the host
 * record. At takeover (the lock held): the socket is renamed over `serve/sock` (the dead host's
 * file goes in the same step), the token store is read again only if its files changed meanwhile
 * (a token the holder minted or revoked holds), the audit log's torn last line (a holder killed
 * mid-write) is ended. Nothing answers on `serve/sock` before the lock is taken. Once the lock wait
 * has begun, the first round's calls are decoded and checked once (gate-rehearsal.ts).
 *
 * Every step is an optimisation: one that fails leaves that part to the takeover, as before.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { AuditLog } from '../../journal/audit-log.js';
import { isPidAlive } from '../../journal/process-identity.js';
import type { HostInfo } from '../wire/protocol.js';
import type { Gate } from './gate.js';
import { rehearseGateCalls } from './gate-rehearsal.js';
import { hostRecordWriter } from './host-record.js';
import { PRIVATE_SOCKET, standbySocketPath, type ServePaths } from './serve-paths.js';
import { SocketServer, type ServerLog, type SocketLimits } from './socket-server.js';
import { TokenStore, type StoreStamp } from './token-store.js';

/** Private sockets left by a process that died before it served or closed (a SIGKILLed standby): removed. */
export function removeDeadPrivateSockets(paths: ServePaths): void {
  let names: string[];
  try {
    names = readdirSync(paths.dir);
  } catch {
    return;
  }
  for (const name of names) {
    const pid = Number(PRIVATE_SOCKET.exec(name)?.[1]);
    if (Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !isPidAlive(pid)) rmSync(join(paths.dir, name), { force: true });
  }
}

export class PreparedServing {
  /** Handed to the host at takeover: close() no longer closes them (the host does). */
  private serverTaken = false;
  private auditTaken = false;

  private constructor(
    private readonly paths: ServePaths,
    private readonly server: SocketServer | undefined,
    private readonly peeked: { readonly store: TokenStore; readonly stamp: StoreStamp } | undefined,
    private readonly audit: AuditLog | undefined,
    private readonly writeRecord: (startedAt: number) => void,
  ) {}

  /** Prepares what it can (see the header); `audit` when the config audits calls. */
  static async prepare(paths: ServePaths, audit: boolean, log: ServerLog, limits: SocketLimits): Promise<PreparedServing> {
    removeDeadPrivateSockets(paths);
    const server = await SocketServer.bind(standbySocketPath(paths, process.pid), log, limits).catch((err: Error) => {
      log.warn(`standby: the socket is bound at takeover (${err.message})`);
      return undefined;
    });
    let peeked: { store: TokenStore; stamp: StoreStamp } | undefined;
    try {
      TokenStore.rehearse(paths);
      const { store, stamp } = TokenStore.peek(paths);
      if (store) peeked = { store, stamp };
    } catch {
      // A store that cannot be read now is read at takeover, and its error told then.
    }
    let auditLog: AuditLog | undefined;
    try {
      auditLog = audit ? AuditLog.open(paths.dataDir, { deferTornLine: true }) : undefined;
    } catch {
      // Opened at takeover, where its error fails the start as it always did.
    }
    // Once the lock wait has begun (it starts when this resolves): a holder that dies meanwhile is
    // taken over a rehearsal later, ≈ 10–30 ms once at the standby's start.
    setImmediate(() => {
      try {
        rehearseGateCalls();
      } catch {
        // An optimisation: the takeover's first calls run it cold.
      }
    });
    return new PreparedServing(paths, server, peeked, auditLog, hostRecordWriter(paths, process.pid));
  }

  /** The token store: as read while waiting unless its files changed since. */
  tokens(): TokenStore {
    if (this.peeked && TokenStore.unchanged(this.paths, this.peeked.stamp)) return this.peeked.store;
    return TokenStore.open(this.paths);
  }

  /** The audit log opened while waiting (its torn last line ended now), or a new one. */
  takeAudit(): AuditLog {
    this.auditTaken = true;
    if (!this.audit) return AuditLog.open(this.paths.dataDir);
    this.audit.endTornLine();
    return this.audit;
  }

  writeHostRecord(info: HostInfo): void {
    this.writeRecord(info.startedAt);
  }

  /** Serves the gate on `serve/sock` through the socket bound while waiting (undefined when none was). */
  serve(gate: Gate, info: HostInfo): SocketServer | undefined {
    if (!this.server) return undefined;
    this.server.serveAt(this.paths.socket, gate, info);
    this.serverTaken = true;
    return this.server;
  }

  /** The wait is given up, or the takeover failed before serving: the private socket goes, the log closes. */
  async close(): Promise<void> {
    if (!this.auditTaken) this.audit?.close();
    if (!this.serverTaken) await this.server?.close();
  }
}
