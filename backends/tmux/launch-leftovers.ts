/**
 * What a host that died left of this machine's drives, found and ended when the next host opens
 * the data dir: a launch cut short (a tmux still starting, its generated config) and the paste
 * files older versions wrote. Local only: a remote launch cut short is not hunted down.
 */
import { readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isStartServerArgv } from '../../lib/control/tmux-commands.js';
import { findProcesses, processTree, signalAll } from '../process/process-tree.js';

/**
 * Ends what a launch interrupted by a host crash left behind: tmux processes naming the socket
 * (the `start-server` client and the server it forked, still starting), their trees, the socket and
 * the generated config. Returns true when there was something to end.
 */
export function endUnfinishedLaunch(socket: string, name: string): boolean {
  const owners = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const pids = owners.flatMap((pid) => processTree(pid).map((p) => p.pid));
  signalAll(pids, 'SIGKILL');
  rmSync(socket, { force: true });
  const dir = dirname(socket);
  for (const f of readdirSync(dir)) if (f.startsWith(`.${name}.`) && f.endsWith('.conf')) rmSync(join(dir, f), { force: true });
  return pids.length > 0;
}

/** How versions before the set-buffer paste named their paste files (`.td-<12 hex>`, typed text). */
const LEGACY_PASTE_FILE = /^\.td-[0-9a-f]{12}$/;

/**
 * Removes the paste files an older version left when its host died mid-paste: they hold typed text
 * unredacted. Pastes no longer touch the disk; this sweeps what an upgrade finds.
 */
export function removeLegacyPasteFiles(socketDir: string): void {
  for (const name of readdirSync(socketDir)) if (LEGACY_PASTE_FILE.test(name)) rmSync(join(socketDir, name), { force: true });
}
