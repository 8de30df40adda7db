/**
 * Spawn drives for tests, wired the way lib/driver/driver.ts wires a backend: a Session, its listener
 * passed to SpawnBackend.launch, then bind(). Each drive gets a private directory, removed on
 * close. `withModes` also feeds the output to a second emulator and gives the backend its modes
 * (DECCKM, DECKPAM, bracketed paste), standing in for the wiring the driver does with the
 * session's own mirror.
 */
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import xtermHeadless from '@xterm/headless';
import { Session } from '../../../lib/session/session.js';
import { systemClock } from '../../../lib/driver/system-clock.js';
import type { BackendListener, ExitInfo, PaneGeometry } from '../../../lib/session/backend.js';
import { Mirror } from '../../../lib/emulator/mirror.js';
import type { PaneCapture } from '../../../lib/control/pane-capture.js';
import { CURATED_PATH } from '../../../lib/policy/child-env.js';
import { SpawnBackend, type SpawnLaunch, type TerminalModes } from '../../../backends/spawn/spawn-backend.js';

const { Terminal } = xtermHeadless;

export const BASH = ['/usr/bin/env', '--', '/bin/bash', '--norc', '--noprofile'];

export function childEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PATH: CURATED_PATH, HOME: home, LANG: 'C.UTF-8', TERM: 'tmux-256color', ...extra };
}

export interface SpawnDrive {
  readonly session: Session;
  readonly backend: SpawnBackend;
  /** The drive's private directory (its cwd and HOME). */
  readonly dir: string;
  close(): Promise<void>;
}

export interface SpawnDriveOptions {
  readonly cols?: number;
  readonly rows?: number;
  readonly env?: Record<string, string>;
  readonly withModes?: boolean;
  /** Builds the argv once the directory exists (a sandbox needs it). */
  readonly argvFor?: (dir: string) => readonly string[];
}

let counter = 0;

export async function openSpawn(argv: readonly string[], opts: SpawnDriveOptions = {}): Promise<SpawnDrive> {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'td-spawn-')));
  const cols = opts.cols ?? 80;
  const rows = opts.rows ?? 24;
  const id = `spawn-${process.pid}-${++counter}`;
  const session = new Session({ id, allowId: 'test', cols, rows, scrollback: 1000, ringBytes: 4 << 20, clock: systemClock, createdAt: Date.now() });
  let listener: BackendListener = session.listener;
  let terminalModes: SpawnLaunch['terminalModes'];
  if (opts.withModes) {
    const term = new Terminal({ cols, rows });
    const inner = session.listener;
    listener = { ...inner, output: (data) => (inner.output(data), term.write(data)) };
    terminalModes = () =>
      new Promise<TerminalModes>((resolve) =>
        term.write(new Uint8Array(0), () =>
          resolve({ applicationCursorKeys: term.modes.applicationCursorKeysMode, applicationKeypad: term.modes.applicationKeypadMode, bracketedPaste: term.modes.bracketedPasteMode }),
        ),
      );
  }
  const backend = await SpawnBackend.launch(
    { argv: opts.argvFor ? opts.argvFor(dir) : argv, env: childEnv(dir, opts.env), cwd: dir, cols, rows, name: id, ...(terminalModes ? { terminalModes } : {}) },
    listener,
  );
  session.bind(backend);
  return {
    session,
    backend,
    dir,
    async close() {
      try {
        await session.kill();
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/** A listener that feeds a Mirror directly (no Session) and follows resizes: the port as a backend sees it. */
export class MirrorListener implements BackendListener {
  readonly mirror: Mirror;
  readonly incidents: Array<{ code: string; detail: Record<string, unknown> }> = [];
  exitInfo: ExitInfo | undefined;
  bytes = 0;
  private readonly chunks: Uint8Array[] = [];
  private waiters: Array<() => void> = [];

  constructor(cols: number, rows: number) {
    this.mirror = new Mirror({ cols, rows, scrollback: 1000 });
  }

  output(data: Uint8Array): void {
    this.bytes += data.length;
    this.chunks.push(data);
    this.mirror.write(data);
    this.wake();
  }

  resync(_capture: PaneCapture, _reason: string): void {
    throw new Error('a spawn backend never resyncs');
  }

  resized(geometry: PaneGeometry): void {
    this.mirror.resize(geometry.cols, geometry.rows);
  }

  exit(info: ExitInfo): void {
    this.exitInfo = info;
    this.wake();
  }

  lost(reason: string): void {
    this.incidents.push({ code: 'lost', detail: { reason } });
  }

  incident(code: string, detail: Record<string, unknown>): void {
    this.incidents.push({ code, detail });
  }

  operators(): void {}

  received(): Buffer {
    return Buffer.concat(this.chunks);
  }

  /** Resolves once `ready()` holds (checked on each output and exit), or rejects after `timeoutMs`. */
  until(ready: () => boolean, timeoutMs = 10_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out; output so far ends with: ${JSON.stringify(this.received().subarray(-300).toString('latin1'))}`)), timeoutMs);
      const check = (): void => {
        if (ready()) {
          clearTimeout(timer);
          resolve();
        } else this.waiters.push(check);
      };
      check();
    });
  }

  /** Resolves once `needle` has arrived in the output (searched in what came since the last look). */
  untilText(needle: string, timeoutMs = 10_000): Promise<void> {
    let from = 0;
    return this.until(() => {
      const all = this.received();
      const found = all.indexOf(needle, Math.max(0, from - needle.length), 'latin1') >= 0;
      from = all.length;
      return found;
    }, timeoutMs);
  }

  whenExited(timeoutMs = 10_000): Promise<ExitInfo> {
    return this.until(() => this.exitInfo !== undefined, timeoutMs).then(() => this.exitInfo as ExitInfo);
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w();
  }
}
