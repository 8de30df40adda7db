/**
 * The table's WebSocket: the rows the token may see (its drives, or all), then the rows that
 * change, as they change. Opening it is one `list` through the gate: the token's observe class is
 * checked there, and the look is audited.
 */
import type { WebSocket } from 'ws';
import type { Gate } from '../serve/gate.js';
import type { Identity } from '../wire/protocol.js';
import type { Disposable } from '../common/disposable.js';
import { TmuxDriveError } from '../common/errors.js';
import { allowsClass, allowsDrive } from '../serve/capabilities.js';
import type { DriveRow, FleetView } from './fleet-view.js';
import { MAX_TIMER_MS } from './drive-socket.js';

export async function openFleetSocket(ws: WebSocket, gate: Gate, identity: Identity, fleet: FleetView): Promise<void> {
  const abort = new AbortController();
  let watch: Disposable | undefined;
  let expiry: NodeJS.Timeout | undefined;
  const gs = gate.open(identity, () => undefined, (reason) => end(4401, reason));
  const send = (m: Record<string, unknown>): void => {
    if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(m));
  };
  const dispose = (): void => {
    abort.abort();
    watch?.dispose();
    watch = undefined;
    clearTimeout(expiry);
    gs.dispose();
  };
  function end(code: number, reason: string): void {
    send({ type: 'ended', reason });
    ws.close(code, reason.slice(0, 100));
    dispose();
  }
  ws.on('close', dispose);
  ws.on('error', dispose);
  // The table only listens: anything it is sent is ignored.
  ws.on('message', () => undefined);
  const visible = (r: DriveRow): boolean => allowsDrive(identity.scope, r.name, r.allowId);
  try {
    await gs.call('list', {}, abort.signal);
  } catch (err) {
    send({ type: 'error', code: err instanceof TmuxDriveError ? err.code : 'INTERNAL', message: err instanceof Error ? err.message : String(err) });
    end(4403, 'refused');
    return;
  }
  if (ws.readyState !== ws.OPEN) return dispose();
  const expiresAt = identity.scope.expiresAt;
  if (expiresAt !== undefined && expiresAt - Date.now() < MAX_TIMER_MS) expiry = setTimeout(() => end(4401, 'token_expired'), Math.max(0, expiresAt - Date.now()));
  // Rows of drives outside the token's scope are never sent, removals included.
  watch = fleet.watch((changed, removed) => {
    const rows = changed.filter(visible);
    const gone = removed.filter((name) => allowsDrive(identity.scope, name, gate.allowIdOf(name)));
    if (rows.length > 0 || gone.length > 0) send({ type: 'rows', rows, removed: gone });
  });
  send({ type: 'fleet', tokenId: identity.tokenId, canDrive: allowsClass(identity.scope, 'drive'), rows: fleet.rows().filter(visible) });
}
