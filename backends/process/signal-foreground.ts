/**
 * Signals go where a keyboard sends them: to the foreground process group of the program's
 * terminal, never to the wrappers the launch put between the terminal and the program. One
 * function for both backends (tmux reads the tree through its host, spawn from the local /proc).
 */
import type { SignalName } from '../../lib/session/backend.js';
import type { ProcStat } from './process-tree.js';

export const SIGNALS: Readonly<Record<SignalName, NodeJS.Signals>> = { interrupt: 'SIGINT', terminate: 'SIGTERM', kill: 'SIGKILL', hangup: 'SIGHUP' };

/** Wrappers the launch may put between the terminal and the program (not the program's own processes). */
const WRAPPER_COMMS: ReadonlySet<string> = new Set(['bwrap']);

/**
 * Sends `name` to the foreground group of `tree` (root first, as processTree gives it). When the
 * tty's foreground group has no member in the tree (the root's tpgid names a group outside it),
 * the whole tree but its wrappers gets it, as before the group was known.
 */
export async function signalForeground(
  tree: readonly ProcStat[],
  name: SignalName,
  send: (pids: number[], signal: NodeJS.Signals) => void | Promise<void>,
): Promise<void> {
  const foreground = tree[0]?.tpgid; // the tty's foreground process group, as the host numbers it
  const program = tree.filter((p) => !WRAPPER_COMMS.has(p.comm));
  const group = program.filter((p) => p.pgrp === foreground);
  await send((group.length > 0 ? group : program).map((p) => p.pid), SIGNALS[name]);
}
