/**
 * A private tmux 3.3a server that shows a byte stream to real tmux and to the library's mirror
 * at once, and compares the two grids: the harness of the differential fuzzer.
 *
 * Each case runs in a fresh window (a fresh pane: fresh grid, modes and parser state) of a
 * session of the case's size, one control client per session (control clients receive %output
 * only for their own session's windows). The pane's program puts its tty in raw mode (no ONLCR,
 * no echo of tmux's answers to terminal queries), then `cat`s the case's bytes and sleeps: the
 * pane stays alive, because tmux 3.3a may drop a dying pane's last %output. Raw mode makes the
 * bytes tmux reads exactly the case's bytes, so "all of them arrived as %output" is a byte count,
 * and a command sent after that count sees a grid that has parsed them all (reference §5: tmux
 * queues output to control clients before parsing it, in the same callback).
 *
 * The mirror is fed the %output bytes as the tmux backend feeds it (ControlClient, the control
 * parser, Mirror.write), then compared with `capture-pane -p -e -N` and tmux's cursor, as
 * `compareWithCapture` does, plus the cursor's visibility, the alternate screen and the history.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ControlClient } from '../backends/tmux/control-client.js';
import type { PaneId } from '../lib/control/ids.js';
import { screenAndHistory, type ScreenAndHistoryParts } from '../lib/control/pane-snapshot.js';
import { displayMessageArgv, fuzzLabConfig, killServerArgv, killWindow, newWindow, startServerArgv } from '../lib/control/tmux-commands.js';
import type { Reply } from '../lib/control/command-queue.js';
import { captureReplay, splitCaptureRows } from '../lib/emulator/capture-replay.js';
import { compareWithCapture, type CellMismatch } from '../lib/emulator/fidelity.js';
import { createTerminal } from '../lib/emulator/headless.js';
import { Mirror } from '../lib/emulator/mirror.js';
import { systemClock } from '../backends/process/system-clock.js';
import { systemParseScheduler } from '../backends/process/system-parse-scheduler.js';

const run = promisify(execFile);

const ENV = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', TERM: 'xterm-256color' };
/** A case whose bytes have not all arrived by then is an infrastructure failure, not a divergence. */
const CASE_DEADLINE_MS = 20_000;
const COMMAND_TIMEOUT_MS = 10_000;

export interface LabCase {
  readonly cols: number;
  readonly rows: number;
  readonly bytes: Uint8Array;
}

export interface Divergence {
  readonly equal: boolean;
  readonly cellMismatches: readonly CellMismatch[];
  readonly cellMismatchCount: number;
  readonly cursor: { readonly tmux: { x: number; y: number; visible: boolean }; readonly mirror: { x: number; y: number; visible: boolean } };
  readonly alternate: { readonly tmux: boolean; readonly mirror: boolean };
  /** History rows as text, tmux's and the mirror's, when they differ (not compared on the alternate screen). */
  readonly history?: { readonly tmux: readonly string[]; readonly mirror: readonly string[] };
  /** The mirror threw while parsing (in the backend that exception would reach the control client's reader). */
  readonly thrown?: string;
  /**
   * The same bytes written at once to a mirror that fast-forwards (PendingOutput): how many times
   * it skipped, and, when it differs from the same mirror parsing every byte (buffer with history,
   * attributes, cursor), what differed. It is compared with tmux too (the fields above).
   */
  readonly fastForward?: { readonly skips: number; readonly skippedBytes: number; readonly differs?: string };
}

interface Lane {
  readonly session: string;
  readonly client: ControlClient;
  /** Output per pane id, routed as it arrives; a pane's entry exists from the moment we know its id or see its first byte. */
  readonly panes: Map<string, PaneSink>;
}

class PaneSink {
  received = 0;
  mirror: Mirror | null = null;
  /** Chunks that came before the case's mirror was attached (the new-window reply can trail the first %output). */
  early: Uint8Array[] = [];
  wake: (() => void) | null = null;
  thrown: string | undefined;

  push(data: Uint8Array): void {
    this.received += data.length;
    if (this.mirror) this.#write(this.mirror, data);
    else this.early.push(data);
    this.wake?.();
  }

  attach(mirror: Mirror): void {
    this.mirror = mirror;
    for (const chunk of this.early) this.#write(mirror, chunk);
    this.early = [];
  }

  #write(mirror: Mirror, data: Uint8Array): void {
    try {
      mirror.write(data);
    } catch (err) {
      this.thrown ??= err instanceof Error ? err.message : String(err);
    }
  }
}

export interface TmuxLabOptions {
  /**
   * The pane sizes cases will use: one session (and control client) each, all made at start. tmux
   * 3.3a segfaulted (NULL + 0x20) when sessions were created while other control clients were
   * creating and killing windows, so nothing is created once cases run.
   */
  readonly sizes: readonly (readonly [cols: number, rows: number])[];
  /** history-limit of every pane (the mirror's scrollback). */
  readonly historyLimit?: number;
  /** Where to keep the socket and case files (default: a fresh temp dir, removed on close). */
  readonly dir?: string;
}

export class TmuxLab {
  readonly #dir: string;
  readonly #ownsDir: boolean;
  readonly #socket: string;
  readonly #historyLimit: number;
  readonly #lanes = new Map<string, Promise<Lane>>();
  #caseNumber = 0;
  #closed = false;
  #serverPid = 0;
  /**
   * A run that dies (an exception, Ctrl-C, a test runner's timeout) must not leave the server behind:
   * its control clients would keep it (and their own output) alive. Synchronous, as 'exit' requires.
   */
  readonly #onExit = (): void => {
    for (const lane of this.#attached) kill(lane.client.pid);
    kill(this.#serverPid);
    if (this.#ownsDir) rmSync(this.#dir, { recursive: true, force: true });
  };
  readonly #attached: Lane[] = [];

  private constructor(dir: string, ownsDir: boolean, historyLimit: number) {
    this.#dir = dir;
    this.#ownsDir = ownsDir;
    this.#socket = join(dir, 'sock');
    this.#historyLimit = historyLimit;
  }

  static async start(options: TmuxLabOptions): Promise<TmuxLab> {
    const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'td-fuzz-'));
    const lab = new TmuxLab(dir, options.dir === undefined, options.historyLimit ?? 200);
    const conf = join(dir, 'tmux.conf');
    const sizes = [...new Map(options.sizes.map(([c, r]) => [`L${c}x${r}`, [c, r] as const])).entries()];
    writeFileSync(conf, fuzzLabConfig(lab.#historyLimit, sizes.map(([name, [cols, rows]]) => ({ name, cols, rows }))));
    await run('tmux', startServerArgv(lab.#socket, conf), { env: ENV, timeout: COMMAND_TIMEOUT_MS });
    const first = sizes[0]?.[0];
    if (first === undefined) throw new Error('TmuxLab.start needs at least one pane size');
    lab.#serverPid = Number((await run('tmux', ['-S', lab.#socket, ...displayMessageArgv(first, '#{pid}')], { env: ENV, timeout: COMMAND_TIMEOUT_MS })).stdout.trim());
    process.once('exit', lab.#onExit);
    try {
      for (const [name] of sizes) {
        const lane = await lab.#attach(name);
        lab.#attached.push(lane);
        lab.#lanes.set(name, Promise.resolve(lane));
      }
    } catch (err) {
      await lab.close();
      throw err;
    }
    return lab;
  }

  get historyLimit(): number {
    return this.#historyLimit;
  }

  /** Shows `c.bytes` to a fresh tmux pane and a fresh mirror, and compares the two. */
  async runCase(c: LabCase): Promise<Divergence> {
    if (this.#closed) throw new Error('the lab is closed');
    const lane = await this.#lane(c.cols, c.rows);
    const file = join(this.#dir, `case-${++this.#caseNumber}.bin`);
    writeFileSync(file, c.bytes);
    const mirror = new Mirror({ cols: c.cols, rows: c.rows, scrollback: this.#historyLimit });
    let pane: string | undefined;
    try {
      const reply = await lane.client.command(
        // `sh` only sets the tty mode and execs; the case's bytes are in a file, never on a command line.
        newWindow(lane.session, ['sh', '-c', 'stty raw -echo && cat "$1" && exec sleep 1000000', 'sh', file]),
        COMMAND_TIMEOUT_MS,
      );
      pane = replyText(reply).trim();
      const sink = sinkOf(lane, pane);
      sink.attach(mirror);
      await arrival(sink, c.bytes.length);
      await mirror.whenParsed();
      if (sink.thrown !== undefined) {
        const cursor = { x: 0, y: 0, visible: true };
        return { equal: false, cellMismatches: [], cellMismatchCount: 0, cursor: { tmux: cursor, mirror: cursor }, alternate: { tmux: false, mirror: false }, thrown: sink.thrown };
      }
      // Framed by size, as the backend's snapshots are: the fuzzer's bytes may print any protocol line.
      const batch = screenAndHistory(pane as PaneId, '#{cursor_x}\t#{cursor_y}\t#{cursor_flag}\t#{alternate_on}\t#{history_size}');
      const parts = batch.read(await lane.client.batch(batch.commands, COMMAND_TIMEOUT_MS));
      const primary = compare(mirror, parts, this.#historyLimit);
      if (!primary.equal) return primary;
      return await this.#fastForwardCheck(c, parts);
    } finally {
      mirror.dispose();
      if (pane !== undefined) {
        lane.panes.delete(pane);
        await lane.client.command(killWindow(pane as PaneId), COMMAND_TIMEOUT_MS).catch(() => undefined);
      }
      rmSync(file, { force: true });
    }
  }

  /**
   * The case's bytes in one write to a mirror on the process's parse scheduler (so they are parsed
   * as one batch and a long plain run is fast-forwarded), against tmux and against the same mirror
   * parsing every byte.
   */
  async #fastForwardCheck(c: LabCase, parts: ScreenAndHistoryParts): Promise<Divergence> {
    const options = { cols: c.cols, rows: c.rows, scrollback: this.#historyLimit, scheduler: systemParseScheduler, syncWriteMaxBytes: 0 };
    const fast = new Mirror(options);
    const full = new Mirror({ ...options, fastForward: false });
    try {
      fast.write(c.bytes);
      full.write(c.bytes);
      await Promise.all([fast.whenParsed(), full.whenParsed()]);
      const { skips, skippedBytes } = fast.fastForwardStats;
      const differs = bufferDifference(fast, full);
      const vsTmux = compare(fast, parts, this.#historyLimit);
      return { ...vsTmux, equal: vsTmux.equal && differs === undefined, fastForward: { skips, skippedBytes, ...(differs ? { differs } : {}) } };
    } finally {
      fast.dispose();
      full.dispose();
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const lanes = await Promise.allSettled([...this.#lanes.values()]);
    await run('tmux', killServerArgv(this.#socket), { env: ENV, timeout: COMMAND_TIMEOUT_MS }).catch(() => undefined);
    for (const l of lanes) if (l.status === 'fulfilled') await l.value.client.detach().catch(() => undefined);
    this.#onExit();
    process.removeListener('exit', this.#onExit);
  }

  #lane(cols: number, rows: number): Promise<Lane> {
    const lane = this.#lanes.get(`L${cols}x${rows}`);
    if (!lane) throw new Error(`the lab has no ${cols}x${rows} session (TmuxLab.start({ sizes }))`);
    return lane;
  }

  async #attach(session: string): Promise<Lane> {
    const panes = new Map<string, PaneSink>();
    const lane: Lane = {
      session,
      panes,
      client: await ControlClient.attach({
        tmuxPath: 'tmux',
        socket: this.#socket,
        session,
        clock: systemClock,
        env: ENV,
        timeoutMs: COMMAND_TIMEOUT_MS,
        onEvent: (event) => {
          if (event.kind === 'output') sinkOf(lane, event.pane).push(event.data);
        },
        onClosed: () => undefined,
      }),
    };
    return lane;
  }
}

function kill(pid: number): void {
  if (pid <= 0) return;
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* already gone */
  }
}

function sinkOf(lane: Lane, pane: string): PaneSink {
  let sink = lane.panes.get(pane);
  if (!sink) {
    sink = new PaneSink();
    lane.panes.set(pane, sink);
  }
  return sink;
}

function arrival(sink: PaneSink, bytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sink.wake = null;
      reject(new Error(`only ${sink.received} of ${bytes} bytes arrived as %output within ${CASE_DEADLINE_MS} ms`));
    }, CASE_DEADLINE_MS);
    const check = (): void => {
      if (sink.received < bytes) return;
      clearTimeout(timer);
      sink.wake = null;
      resolve();
    };
    sink.wake = check;
    check();
  });
}

function replyBytes(reply: Reply): Uint8Array {
  const total = reply.lines.reduce((n, l) => n + l.length + 1, 0);
  const out = new Uint8Array(Math.max(0, total - 1));
  let at = 0;
  reply.lines.forEach((line, i) => {
    if (i > 0) out[at++] = 0x0a;
    out.set(line, at);
    at += line.length;
  });
  return out;
}

function replyText(reply: Reply): string {
  return new TextDecoder().decode(replyBytes(reply));
}

/** The text of capture rows as the mirror shows them (`-e` keeps line drawing, which plain text shows as ASCII). */
function captureText(capture: Uint8Array, cols: number): string[] {
  const rows = splitCaptureRows(capture);
  // Twice as wide: a row holding a cut wide character is longer than the pane and must not wrap.
  const { term, internals } = createTerminal(cols * 2 + 2, rows.length, 0);
  try {
    internals?.writeSync(captureReplay(rows).build());
    const out: string[] = [];
    for (let y = 0; y < rows.length; y++) out.push((term.buffer.active.getLine(y)?.translateToString(true) ?? '').replace(/ +$/, ''));
    return out;
  } finally {
    term.dispose();
  }
}

/** What differs between two mirrors' whole buffers (history and screen, with attributes), cursors and screens. */
function bufferDifference(a: Mirror, b: Mirror): string | undefined {
  const cursor = (m: Mirror): string => `${m.cursor.x},${m.cursor.y},${m.cursorVisible},${m.alternate}`;
  if (cursor(a) !== cursor(b)) return `cursor/screen ${cursor(a)} vs ${cursor(b)}`;
  const text = (m: Mirror): string[] => m.snapshot({ format: 'ansi', scrollback: 'all' }).content.split('\n');
  const [x, y] = [text(a), text(b)];
  if (x.length !== y.length) return `${x.length} rows vs ${y.length}`;
  const row = x.findIndex((r, i) => r !== y[i]);
  if (row !== -1) return `row ${row}: ${JSON.stringify(x[row])} vs ${JSON.stringify(y[row])}`;
  return a.digest() === b.digest() ? undefined : 'grid digest';
}

/**
 * At history-limit tmux drops a tenth of the history at once (grid_collect_history), xterm one
 * line at a time (docs/emulator.md, "History trimming"): once the mirror's history is full, tmux's
 * shorter history is compared with the mirror's last rows.
 */
function compare(mirror: Mirror, parts: ScreenAndHistoryParts, historyLimit: number): Divergence {
  const [x, y, flag, alt, historySize] = parts.cursor.trim().split('\t').map(Number) as [number, number, number, number, number];
  const report = compareWithCapture(mirror, parts.capture, { x, y });
  const tmuxCursor = { x, y, visible: flag === 1 };
  const mirrorCursor = mirror.cursor;
  const tmuxAlternate = alt === 1;
  let historyDiff: Divergence['history'];
  if (!tmuxAlternate && !mirror.alternate) {
    const tmuxRows = historySize === 0 ? [] : captureText(parts.history, mirror.cols);
    const snap = mirror.snapshot({ format: 'text', scrollback: 'all' });
    const all = snap.content.split('\n').slice(0, snap.scrollbackLines);
    const trimmed = historyLimit > 0 && all.length === historyLimit && tmuxRows.length < all.length && tmuxRows.length >= historyLimit - Math.max(1, Math.floor(historyLimit / 10));
    const mirrorRows = trimmed ? all.slice(all.length - tmuxRows.length) : all;
    if (tmuxRows.length !== mirrorRows.length || tmuxRows.some((r, i) => r !== mirrorRows[i])) historyDiff = { tmux: tmuxRows, mirror: mirrorRows };
  }
  const equal = report.equal && tmuxCursor.visible === mirrorCursor.visible && tmuxAlternate === mirror.alternate && historyDiff === undefined;
  return {
    equal,
    cellMismatches: report.mismatches,
    cellMismatchCount: report.mismatchCount,
    cursor: { tmux: tmuxCursor, mirror: { x: mirrorCursor.x, y: mirrorCursor.y, visible: mirrorCursor.visible } },
    alternate: { tmux: tmuxAlternate, mirror: mirror.alternate },
    ...(historyDiff ? { history: historyDiff } : {}),
  };
}
