/**
 * A tmux server for the baselines: the same generated config as a drive's (server-conf.ts, so the
 * same history-limit, escape-time, window-size and scroll-on-clear), running `bash --norc
 * --noprofile` with PS1='$ ', but no sandbox and no tmux-drive code on the path. Baselines talk to
 * it either as a simple tool would (a `tmux` subprocess per command) or through a bare
 * ControlClient (the control-mode floor).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ControlClient } from '../backends/tmux/control-client.js';
import { capturePaneArgv, displayMessageArgv, killServerArgv, serverConfig, startServerArgv } from '../lib/control/tmux-commands.js';
import { isAlive } from '../backends/process/process-tree.js';
import type { ControlEvent, PaneId } from '../lib/control/parser.js';
import { CURATED_PATH } from '../lib/policy/child-env.js';
import { systemClock } from '../backends/process/system-clock.js';
import { sleep } from './sleep.js';

export const TMUX = '/usr/bin/tmux';
const TIMEOUT_MS = 10_000;
const SESSION = 'bench';

export interface BaselineServerOptions {
  readonly cols: number;
  readonly rows: number;
  readonly scrollback?: number;
}

export class BaselineServer {
  readonly socket: string;
  readonly session = SESSION;
  /** Host pid of the tmux server (known after start). */
  serverPid = -1;
  /** Pane id of the one pane. */
  pane: PaneId = '%0';
  readonly env: Record<string, string>;
  private readonly clients = new Set<ControlClient>();

  private constructor(private readonly dir: string) {
    this.socket = join(dir, 's.sock');
    this.env = { PATH: CURATED_PATH, LANG: 'C.UTF-8', HOME: dir, TERM: 'tmux-256color', PS1: '$ ' };
  }

  static async start(opts: BaselineServerOptions): Promise<BaselineServer> {
    const server = new BaselineServer(mkdtempSync(join(tmpdir(), 'tdb-')));
    try {
      const conf = join(server.dir, 'tmux.conf');
      writeFileSync(conf, serverConfig({ session: SESSION, cols: opts.cols, rows: opts.rows, scrollback: opts.scrollback ?? 1000, argv: ['/bin/bash', '--norc', '--noprofile'] }));
      await server.run(startServerArgv(server.socket, conf));
      const [pid, pane] = (await server.tmux(displayMessageArgv(SESSION, '#{pid}\t#{pane_id}'))).trim().split('\t');
      server.serverPid = Number(pid);
      server.pane = (pane ?? '%0') as PaneId;
      await server.waitForPrompt();
      return server;
    } catch (err) {
      await server.close();
      throw err;
    }
  }

  /** One `tmux -S sock <command words>` subprocess, as a polling tool runs it; resolves with stdout. */
  tmux(command: readonly string[]): Promise<string> {
    return this.run(['-u', '-S', this.socket, ...command]);
  }

  /** One `tmux <argv>` subprocess (its cwd, the server's and the pane's: the baseline's directory). */
  run(argv: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(TMUX, [...argv], { env: this.env, cwd: this.dir, timeout: TIMEOUT_MS, killSignal: 'SIGKILL' }, (err, stdout, stderr) => {
        if (err) reject(new Error(`tmux ${argv.join(' ')}: ${String(stderr).trim() || err.message}`));
        else resolve(stdout);
      });
    });
  }

  /** capture-pane -p of the visible screen, through a subprocess. */
  capture(): Promise<string> {
    return this.tmux(capturePaneArgv(SESSION));
  }

  private async waitForPrompt(): Promise<void> {
    const deadline = performance.now() + TIMEOUT_MS;
    while (performance.now() < deadline) {
      // capture-pane -p trims the prompt's trailing space.
      if (/^\$/m.test(await this.capture())) return;
      await sleep(20);
    }
    throw new Error(`baseline bash did not show its prompt within ${TIMEOUT_MS} ms`);
  }

  /**
   * A bare control-mode client: the parser and command queue, no session, no mirror, and no read
   * pacer (every chunk handled as it is read: raw control mode).
   */
  async attachControl(onEvent: (event: ControlEvent) => void): Promise<ControlClient> {
    const client = await ControlClient.attach({
      pacer: null,
      tmuxPath: TMUX,
      socket: this.socket,
      session: SESSION,
      clock: systemClock,
      env: this.env,
      timeoutMs: TIMEOUT_MS,
      onEvent,
      onClosed: () => undefined,
    });
    this.clients.add(client);
    return client;
  }

  async detachControl(client: ControlClient): Promise<void> {
    this.clients.delete(client);
    await client.detach();
  }

  /** Kills the server, waits for its pid to go, removes the directory. Idempotent. */
  async close(): Promise<void> {
    for (const client of this.clients) client.terminate();
    this.clients.clear();
    await this.run(killServerArgv(this.socket)).catch(() => undefined);
    const deadline = performance.now() + TIMEOUT_MS;
    while (this.serverPid > 0 && isAlive(this.serverPid) && performance.now() < deadline) await sleep(10);
    if (this.serverPid > 0 && isAlive(this.serverPid)) process.kill(this.serverPid, 'SIGKILL');
    rmSync(this.dir, { recursive: true, force: true });
  }
}
