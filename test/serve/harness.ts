/** Shared scaffolding of the serving-host tests: a private data dir with a config, a host, clean-up that leaves nothing running. */
import { afterAll, beforeAll } from 'vitest';
import { Journal } from '../../journal/journal.js';
import { Client, type ClientOptions } from '../../lib/client/client.js';
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allow, killGone, processesMentioning } from '../helpers.js';
import type { DriverConfigInput } from '../../lib/policy/config-schema.js';
import { CLI, ensureBuilt, testSetup } from '../cli/dist.js';

export const BASH = allow('bash', '/bin/bash', { env: { PS1: '$ ' } });
export const BASH_ARGS = ['--norc', '--noprofile'];

export function hostConfig(more: Partial<DriverConfigInput> = {}): DriverConfigInput {
  return { allow: [BASH, allow('python3', '/usr/bin/python3')], ...more };
}

export function tempDataDir(): string {
  return join(mkdtempSync(join(tmpdir(), 'tds-')), 'data');
}

/** Kills whatever still mentions the data dir (tmux servers, hosts), loudly, then removes it. */
export function sweep(dataDir: string): void {
  const left = processesMentioning(dataDir);
  if (left.length > 0) {
    console.warn(`serve test cleanup: ${left.length} process(es) still mention ${dataDir}; killing them`);
    killGone(left);
  }
  rmSync(join(dataDir, '..'), { recursive: true, force: true });
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the ready line's facts once it prints `serving …` (rejects if it exits first). */
  readonly ready: Promise<{ serving: string; socket: string; pid: number; drives: number }>;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** `tmux-drive serve` (the built CLI) as its own process, --json so its ready line is machine-read. */
export function startServe(globalArgs: readonly string[], extra: readonly string[] = []): ServeProcess {
  const child = spawn(process.execPath, [CLI, ...globalArgs, '--json', 'serve', ...extra], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const ready = new Promise<{ serving: string; socket: string; pid: number; drives: number }>((resolve, reject) => {
    child.stdout?.on('data', (d: Buffer) => {
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"serving"'));
      if (line) resolve(JSON.parse(line) as { serving: string; socket: string; pid: number; drives: number });
    });
    void exited.then(({ code, signal }) => reject(new Error(`serve exited (${code ?? signal}) before it served: ${err}`)));
  });
  ready.catch(() => undefined);
  return { child, pid: child.pid as number, ready, exited, stderr: () => err };
}

/** SIGKILLs a serve process (if alive) and waits for it to be gone. */
export async function killServe(s: ServeProcess, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill(signal);
  await s.exited;
}

/** Resolves once a `serve --standby` process says it waits on the serving host (rejects after `ms`). */
export function standbyWaiting(s: ServeProcess, ms = 20_000): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the standby never said it waits: ${s.stderr()}`)), ms);
    const check = (): void => {
      if (!/standby: pid \d+ serves; waiting/.test(s.stderr())) return;
      clearTimeout(timer);
      s.child.stderr?.off('data', check);
      resolve();
    };
    s.child.stderr?.on('data', check);
    check();
  });
}

/** After a suite of serve processes: clients closed, hosts killed, anything still naming the data dir killed, `dir` removed. */
export async function endServeSuite(o: { readonly clients: readonly { close(): Promise<void> }[]; readonly hosts: readonly ServeProcess[]; readonly dataDir: string; readonly dir: string }): Promise<void> {
  for (const c of o.clients) await c.close();
  for (const h of o.hosts) await killServe(h);
  killGone(processesMentioning(o.dataDir));
  // The killed drives' processes may still be writing as they go (ENOTEMPTY): rm retries.
  rmSync(o.dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 100 });
}

/** A serve suite's data dir (with an operator config), and the hosts and clients its tests start: all ended after the suite. */
export class ServeSuite {
  readonly hosts: ServeProcess[] = [];
  readonly clients: Client[] = [];
  /** @internal set before the suite's tests (serveSuite). */
  made: { readonly dir: string; readonly dataDir: string; readonly config: string } | undefined;

  private get setup(): { readonly dir: string; readonly dataDir: string; readonly config: string } {
    if (!this.made) throw new Error('a serve suite is made in its beforeAll: read it inside a test');
    return this.made;
  }

  get dir(): string {
    return this.setup.dir;
  }

  get dataDir(): string {
    return this.setup.dataDir;
  }

  get config(): string {
    return this.setup.config;
  }

  /** The global options naming the suite's data dir and config. */
  get args(): string[] {
    return ['--data-dir', this.dataDir, '--config', this.config];
  }

  /** `tmux-drive serve [extra]` on the suite's data dir (not awaited ready), SIGKILLed after the suite. */
  serve(extra: readonly string[] = []): ServeProcess {
    const host = startServe(this.args, extra);
    this.hosts.push(host);
    return host;
  }

  /** A client of the suite's serving host, closed after the suite. */
  async connect(opts: ClientOptions = {}): Promise<Client> {
    const client = await Client.connect(this.dataDir, opts);
    this.clients.push(client);
    return client;
  }
}

/**
 * A ServeSuite made before the file's tests (dist/ built) and ended after them (endServeSuite).
 * `moreConfig`: YAML appended to the config; `beforeEnd`: what the file ends first (a stopped server resumed, an in-process host closed).
 */
export function serveSuite(o: { readonly moreConfig?: string; readonly beforeEnd?: () => unknown } = {}): ServeSuite {
  const suite = new ServeSuite();
  beforeAll(() => {
    ensureBuilt();
    suite.made = testSetup();
    if (o.moreConfig !== undefined) appendFileSync(suite.made.config, o.moreConfig);
  });
  afterAll(async () => {
    await o.beforeEnd?.();
    if (suite.made) await endServeSuite({ clients: suite.clients, hosts: suite.hosts, ...suite.made });
  });
  return suite;
}

/** The pid holding `drive`'s lease in the journal of `dataDir`, read through a journal of its own. */
export function leaseHolder(dataDir: string, drive: string): number | undefined {
  const j = Journal.open(dataDir);
  try {
    return j.lease(drive)?.holder?.pid;
  } finally {
    j.close();
  }
}
