/**
 * Scaffolding shared by the serving-host torture (tools/serve-torture.ts) and benchmarks
 * (bench/serve-*.ts): a private data dir with an operator config file, `tmux-drive serve` as its
 * own process (the built CLI, as a daemon runs it), and a census of one drive's processes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProcesses, processTree } from '../backends/process/process-tree.js';
import { isControlAttachArgv, isStartServerArgv } from '../lib/control/tmux-commands.js';

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };

/** The built CLI (this file runs from dist/tools). */
export const CLI = resolve(dirname(fileURLToPath(import.meta.url)), '..', 'lib', 'cli', 'main.js');

export interface ServeDir {
  readonly root: string;
  readonly dataDir: string;
  readonly config: string;
  /** The global CLI arguments naming both. */
  readonly args: readonly string[];
  remove(): void;
}

/** A fresh data dir and a config allowing bash (sandboxed) for up to `maxSessions` drives. */
export function serveDir(maxSessions: number): ServeDir {
  const root = mkdtempSync(join(tmpdir(), 'td-serve-'));
  const dataDir = join(root, 'data');
  const config = join(root, 'config.json');
  writeFileSync(config, JSON.stringify({ worker: { maxSessions }, allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }] }));
  return {
    root,
    dataDir,
    config,
    args: ['--data-dir', dataDir, '--config', config],
    remove: () => {
      for (const pid of findProcesses((cmdline) => cmdline.includes(dataDir))) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          /* gone */
        }
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}

export interface ServeProcess {
  readonly child: ChildProcess;
  readonly pid: number;
  /** When it printed its ready line (performance.now()), with the live drives it found. */
  readonly ready: Promise<{ at: number; drives: number }>;
  /** A standby said it waits, hot (every live drive's observer attached). */
  readonly waiting: Promise<void>;
  readonly exited: Promise<void>;
  stderr(): string;
  /** The takeover marks it wrote (lib/driver/takeover-marks.ts; only with `marks` at its start). */
  marks(): readonly TakeoverMark[];
  /** Its takeover's marks once written (they are written together, 3 s after the lock). */
  readonly marksFlushed: Promise<void>;
  kill(signal?: NodeJS.Signals): Promise<void>;
}

export interface TakeoverMark {
  readonly name: string;
  /** Wall clock, ms since the epoch (performance.timeOrigin + performance.now() in the host). */
  readonly wallMs: number;
  /** The host's monotonic clock, µs (a `--cpu-prof` profile's clock). */
  readonly monoUs: number;
}

export interface ServeStartOptions {
  /** Its takeover's timeline on stderr (TMUX_DRIVE_TAKEOVER_MARKS=1). */
  readonly marks?: boolean;
  /** Node flags before the CLI (e.g. `--cpu-prof`). */
  readonly nodeArgs?: readonly string[];
}

export function startServe(dir: ServeDir, standby: boolean, opts: ServeStartOptions = {}): ServeProcess {
  const env = opts.marks ? { ...process.env, TMUX_DRIVE_TAKEOVER_MARKS: '1' } : process.env;
  const child = spawn(process.execPath, [...(opts.nodeArgs ?? []), CLI, ...dir.args, '--json', 'serve', ...(standby ? ['--standby'] : [])], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let out = '';
  let err = '';
  let partial = '';
  const marks: TakeoverMark[] = [];
  let flushed: () => void = () => undefined;
  const marksFlushed = new Promise<void>((r) => {
    flushed = r;
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = new Promise<{ at: number; drives: number }>((ok, fail) => {
    child.stdout?.on('data', (d: Buffer) => {
      const at = performance.now();
      out += d.toString();
      const line = out.split('\n').find((l) => l.includes('"serving"'));
      if (line) ok({ at, drives: (JSON.parse(line) as { drives: number }).drives });
    });
    void exited.then(() => fail(new Error(`serve ${child.pid} exited before it served: ${err.slice(0, 500)}`)));
  });
  const waiting = new Promise<void>((ok, fail) => {
    child.stderr?.on('data', (d: Buffer) => {
      let text = d.toString();
      if (opts.marks) {
        const lines = (partial + text).split('\n');
        partial = lines.pop() ?? '';
        const rest: string[] = [];
        for (const line of lines) {
          const m = /^takeover-mark (\S+) ([\d.]+) (\d+)$/.exec(line);
          if (m) marks.push({ name: m[1] as string, wallMs: Number(m[2]), monoUs: Number(m[3]) });
          if (m?.[1] === 'flushed') flushed();
          else rest.push(line);
        }
        text = rest.map((l) => `${l}\n`).join('');
      }
      if (err.length < 8192) err += text;
      if (/standby: .*waiting/.test(err) && /standby: \d+ live drive\(s\) observed/.test(err)) ok();
    });
    void exited.then(() => fail(new Error(`serve ${child.pid} exited before it waited: ${err.slice(0, 500)}`)));
  });
  ready.catch(() => undefined);
  waiting.catch(() => undefined);
  return {
    child,
    pid: child.pid as number,
    ready,
    waiting,
    exited,
    stderr: () => err,
    marks: () => marks,
    marksFlushed,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

export interface Census {
  readonly servers: number;
  readonly bashes: number;
  readonly controlClients: number;
}

/** One drive's tmux servers, the bash under them, and the tmux control clients attached to it. */
export function census(dataDir: string, drive: string): Census {
  const socket = join(dataDir, 'tmux', `${drive}.sock`);
  const servers = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const bashes = servers.flatMap((s) => processTree(s).filter((p) => p.comm === 'bash'));
  const controlClients = findProcesses((cmdline) => isControlAttachArgv(cmdline.split('\0'), socket));
  return { servers: servers.length, bashes: bashes.length, controlClients: controlClients.length };
}
