/**
 * A drive's tmux server at its two ends: started detached from a generated config (never left on
 * disk), and ended verified (the server and the program's whole recorded tree gone, the socket
 * removed). The facade (tmux-backend.ts) decides when; this file knows how.
 */
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { TmuxDriveError } from '../../lib/common/errors.js';
import { killServer, killServerArgv, serverConfig, startServerArgv } from '../../lib/control/tmux-commands.js';
import { waitGone } from '../process/wait-gone.js';
import type { ControlClient } from './control-client.js';
import { MAX_SOCKET_PATH, hostProcesses, runTmux, type TmuxHost, type TmuxTarget } from './tmux-host.js';

export interface ServerLaunch extends TmuxTarget {
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
  readonly argv: readonly string[];
}

/** Starts a new detached server at `socket` running `launch.argv`; refuses a name already running. */
export async function startServer(host: TmuxHost, launch: ServerLaunch, socket: string): Promise<void> {
  if (Buffer.byteLength(socket) > MAX_SOCKET_PATH) {
    throw new TmuxDriveError('BAD_ARGUMENT', `socket path ${socket} is longer than ${MAX_SOCKET_PATH} bytes: choose a shorter dataDir`, { socket });
  }
  await host.prepareDir(launch.socketDir);
  if (await host.socketAnswers(socket, launch.timeoutMs)) {
    throw new TmuxDriveError('NAME_IN_USE', `a drive named "${launch.name}" is already running; pick another name or re-attach to it`, { name: launch.name });
  }
  await host.removeFile(socket); // tmux 3.3a leaves its socket behind when it exits
  const conf = join(launch.socketDir, `.${launch.name}.${randomBytes(4).toString('hex')}.conf`);
  await host.writeFile(conf, serverConfig({ session: launch.name, cols: launch.cols, rows: launch.rows, scrollback: launch.scrollback, argv: launch.argv }));
  try {
    await runTmux(launch, startServerArgv(socket, conf));
  } finally {
    await host.removeFile(conf).catch(() => undefined); // it names the program's arguments: keep nothing on disk
  }
}

export interface ServerToEnd {
  readonly host: TmuxHost;
  readonly target: TmuxTarget;
  readonly socket: string;
  /** The control client, when one is still open: kill-server goes through it. */
  readonly client: ControlClient | undefined;
  readonly serverPid: number;
  /** The program's pid in the pane, if known: its whole tree is ended too. */
  readonly pid: number | undefined;
}

/** Ends the program, its tree and the server, verified; KILL_UNVERIFIED names what survived. */
export async function endServer(server: ServerToEnd): Promise<void> {
  const { host, target, socket, client } = server;
  const tree = server.pid === undefined ? [] : (await host.processTree(server.pid)).map((p) => p.pid);
  if (client && !client.isClosed) {
    await client.command(killServer(), target.timeoutMs).catch(() => undefined);
    await Promise.race([client.whenClosed(), new Promise<void>((resolve) => target.clock.after(target.timeoutMs, resolve))]);
    client.terminate();
  } else if (host.remote || existsSync(socket)) {
    await runTmux(target, killServerArgv(socket)).catch(() => undefined);
  }
  // Bounded, with backoff; survivors are SIGKILLed halfway.
  const gone = (pids: number[]): Promise<boolean> =>
    waitGone(pids, hostProcesses(host), { clock: target.clock, timeoutMs: target.timeoutMs, escalation: 'SIGKILL' });
  const serverGone = await gone([server.serverPid].filter((p) => p > 0));
  // Programs that daemonize leave children behind a dead server: end the whole recorded tree.
  await host.signal(tree, 'SIGKILL');
  const treeGone = await gone(tree);
  await host.removeFile(socket);
  if (!serverGone || !treeGone) {
    throw new TmuxDriveError('KILL_UNVERIFIED', `drive ${target.name} did not end: processes still alive`, {
      alive: await host.alive([server.serverPid, ...tree].filter((p) => p > 0)),
    });
  }
}
