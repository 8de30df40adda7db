/**
 * The gate in this process, as a connection: for a command that hosts in-process because no host
 * serves the data dir. Calls go through the same gate, verb table and audit as the socket's, as
 * the `local` identity (the data dir's own user, who could open the Driver directly anyway); the
 * results make the same JSON round trip, so they have exactly the socket's shapes.
 */
import type { Gate, GateSession } from '../serve/gate.js';
import { OWNER_SCOPE } from '../serve/capabilities.js';
import { HostError } from '../wire/host-error.js';
import type { HelloResult, ItemParams } from '../wire/protocol.js';
import { PROTOCOL_VERSION } from '../wire/protocol.js';
import type { HostConnection } from './host-connection.js';

export class LocalConnection implements HostConnection {
  onItem: ((params: ItemParams) => void) | undefined;
  onClose: ((reason: string) => void) | undefined;
  readonly hello: HelloResult;
  private readonly session: GateSession;
  private closed = false;

  constructor(gate: Gate) {
    const identity = { tokenId: 'local', scope: OWNER_SCOPE };
    this.session = gate.open(
      identity,
      (subscription, drive, item) => this.onItem?.(JSON.parse(JSON.stringify({ subscription, drive, item })) as ItemParams),
      (reason) => this.onClose?.(`the gate ended the connection (${reason})`),
    );
    this.hello = { protocol: PROTOCOL_VERSION, host: { pid: process.pid, startedAt: Date.now(), dataDir: gate.driver.dataDir }, identity };
  }

  async call(method: string, params: Readonly<Record<string, unknown>>, signal?: AbortSignal): Promise<unknown> {
    if (this.closed) throw new HostError('HOST_LOST', 'this in-process connection was closed', { delivery: 'not-sent' });
    const result = await this.session.call(method, JSON.parse(JSON.stringify(params)) as unknown, signal ?? new AbortController().signal);
    return result === undefined ? null : (JSON.parse(JSON.stringify(result)) as unknown);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.session.dispose();
  }
}
