/**
 * The program's exit as tmux records it, read once the pane is reported dead (the pane_dead
 * subscription, or the pane-died hook's line). `remain-on-exit on` keeps the dead pane, so its
 * status stays readable until the server is killed.
 */
import type { Clock } from '../../lib/common/clock.js';
import type { ExitInfo } from '../../lib/common/exit-info.js';
import type { PaneId } from '../../lib/control/parser.js';
import { displayMessage, runShellTrue, type TmuxCommand } from '../../lib/control/tmux-commands.js';

const DEAD_FORMAT = '#{pane_dead}\t#{pane_dead_status}\t#{pane_dead_signal}';
/** The status is asked for again after 5, 10, … 320 ms: 635 ms in all, well inside one deadline. */
const FIRST_RETRY_MS = 5;
const LAST_RETRY_MS = 320;

/**
 * The exit of the program in `pane`, or undefined when the pane is not dead or `claim()` says
 * another reader got there first (claim is asked once the pane is seen dead, before any wait).
 * `command` sends one command on the drive's live client; a failure (the server went away)
 * rejects.
 */
export async function readPaneExit(command: (line: TmuxCommand) => Promise<string>, pane: PaneId, clock: Clock, claim: () => boolean): Promise<ExitInfo | undefined> {
  const query = displayMessage(pane, DEAD_FORMAT);
  let [dead, status, signal] = (await command(query)).split('\t');
  if (dead !== '1' || !claim()) return undefined;
  // pane_dead is the pty's EOF; the status comes with SIGCHLD, which tmux 3.3a may handle a
  // moment later, or miss (seen here under load: the pane's process a zombie of the server,
  // never reaped): a job's exit makes tmux reap every exited child. Ask again, briefly.
  if (!status && !signal) await command(runShellTrue(pane)).catch(() => undefined);
  for (let delay = FIRST_RETRY_MS; !status && !signal && delay <= LAST_RETRY_MS; delay *= 2) {
    await new Promise<void>((resolve) => clock.after(delay, resolve));
    [, status, signal] = (await command(query)).split('\t');
  }
  return { code: status ? Number(status) : null, signal: signal ? Number(signal) : null };
}
