/**
 * Live tmux servers of this data dir whose drive the journal has no row for: the journal was
 * emptied, deleted or replaced while they ran. They are never forgotten silently: without `adopt`
 * the open is refused naming them; with it each gets a `detached` row and an incident, and is
 * re-attached like any other detached drive. A server that a live process drives (its control
 * client's parent) is never adopted: that process holds it, and a second driver would be a
 * double drive.
 */
import { readdirSync, statSync } from 'node:fs';
import { killServerArgv } from '../control/tmux-commands.js';
import { ADOPTED_ALLOW_ID } from '../policy/config-schema.js';
import { JournalError, hashOf, type Journal } from '../../journal/journal.js';
import type { BackendFactory } from './backend-factory.js';
import { DRIVE_NAME, type Logger } from './driver-options.js';

export interface OrphanContext {
  readonly journal: Journal;
  readonly backends: BackendFactory;
  readonly dataDir: string;
  readonly logger: Logger;
}

/** When the server on `socket` bound it (its mtime: tmux changes only the socket's mode later). */
function socketBirth(socket: string): number {
  try {
    return statSync(socket).mtimeMs;
  } catch {
    return Date.now();
  }
}

/** Refuses the open over unknown live servers (JOURNAL_ORPHANS), or adopts them when `adopt`. */
export async function reclaimOrphans(ctx: OrphanContext, adopt: boolean): Promise<void> {
  const { journal, backends, logger } = ctx;
  if (!backends.tmuxPath) return; // nothing local could have started one
  const unknown = readdirSync(backends.socketDir, { withFileTypes: true })
    .filter((f) => f.isSocket() && f.name.endsWith('.sock') && DRIVE_NAME.test(f.name.slice(0, -'.sock'.length)))
    .map((f) => f.name.slice(0, -'.sock'.length))
    .filter((name) => journal.getSession(name) === undefined);
  if (unknown.length === 0) return;
  const alive = await Promise.all(unknown.map((name) => backends.localServerAnswers(backends.socketPathFor(name))));
  const orphans = unknown
    .filter((_, i) => alive[i])
    .map((name) => ({ name, socket: backends.socketPathFor(name), heldBy: backends.localController(backends.socketPathFor(name)) }));
  if (orphans.length === 0) return;
  const held = orphans.filter((o) => o.heldBy !== undefined);
  if (!adopt || held.length > 0) {
    const list = orphans.map((o) => `${o.name} (${o.socket}${o.heldBy === undefined ? '' : `, driven by pid ${o.heldBy}`})`).join(', ');
    const how = held.length > 0
      ? 'a live process still drives some of them (its journal was replaced under it): stop that process first'
      : 'to re-attach them under their names, open with adoptOrphans: true (CLI: tmux-drive --adopt-orphans list)';
    throw new JournalError(
      'JOURNAL_ORPHANS',
      `the journal ${journal.file} does not know ${orphans.length} live drive(s) of this data dir: ${list}. It was emptied, deleted or replaced while they ran; nothing was changed. ${how}; or end one with: ${[backends.tmuxPath, ...killServerArgv('<socket>')].join(' ')}`,
      { orphans: orphans.map((o) => ({ name: o.name, socket: o.socket, ...(o.heldBy === undefined ? {} : { heldBy: o.heldBy }) })), dataDir: ctx.dataDir },
    );
  }
  for (const o of orphans) {
    const rec = journal.insertSessionIfAbsent({
      id: o.name,
      name: o.name,
      socketPath: o.socket,
      // What it runs is unknown: no allow entry applies (no entry limits, no auto-answer).
      allowId: ADOPTED_ALLOW_ID,
      argvHash: hashOf(['unknown']),
      backend: 'tmux',
      durable: true,
      state: 'detached',
      createdAt: Math.floor(socketBirth(o.socket)),
    });
    if (!rec) continue; // a peer adopted it first, or a create() wrote it meanwhile
    journal.recordIncident(o.name, 'orphan_adopted', {});
    logger.warn(`adopted drive "${o.name}": its tmux server was alive but unknown to the journal (allow entry unknown: "${ADOPTED_ALLOW_ID}")`, { name: o.name });
  }
}
