/**
 * Bulk output into the mirror: `cat` of a file of base64 lines (76 characters, random bytes) in
 * bash, then `echo END-42`. Measured from pressing Enter to the point where the sentinel has
 * arrived and the mirror has parsed everything before it. Baselines, in the same run with the
 * same file and rounds interleaved:
 * - control mode with a null consumer: a bare ControlClient whose parser decodes %output and
 *   throws it away (the tmux limit: the server at ~100% of a core is the bottleneck);
 * - node-pty direct: bash on a pty, bytes counted and dropped;
 * - node-pty into the library's Mirror (@xterm/headless), with the same backpressure.
 * The library also runs the same file with a session.wait({ forText }) pending (a string, and a
 * RegExp), against the library without one: a caller waiting for a command's last line.
 * The file lives in the drive's workspace so the sandboxed bash can read it.
 */
import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import nodePty from 'node-pty';
import type { Session } from '../lib/index.js';
import { Mirror } from '../lib/emulator/mirror.js';
import { encodeSendKeys, encodeSendText, refreshClientPauseAfter } from '../lib/control/tmux-commands.js';
import { CURATED_PATH } from '../lib/policy/child-env.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { BaselineServer } from './baseline-server.js';
import { BenchDriver } from './bench-driver.js';
import { median } from './percentiles.js';
import { settleProcess } from './process-settle.js';
import { cpuMs } from './proc-usage.js';
import { SentinelScanner } from './sentinel-scanner.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';

const COLS = 120;
const ROWS = 40;
const SCROLLBACK = 1000;
/** 57 random bytes make one 76-character base64 line, as `base64` writes them. */
const RAW_PER_LINE = 57;
/**
 * A new sentinel per run, so an old one still on the screen never counts. Typed as a sum so the
 * echo of the command line never contains it.
 */
let runNumber = 0;
function nextSentinel(): { text: string; command: string } {
  runNumber += 1;
  return { text: `END-42-${runNumber}`, command: `echo END-$((6*7))-${runNumber}` };
}
const RUN_TIMEOUT_MS = 120_000;
const MB = 1e6;

interface RunFigures {
  readonly ms: number;
  /** Bytes of pane output seen up to the sentinel. */
  readonly bytes: number;
  readonly hostCpuMs: number;
  readonly serverCpuMs: number | null;
  /** Library runs: how the end was seen ('screen': after a pause and resync, the bytes never came as output). */
  readonly via?: 'stream' | 'screen' | 'wait';
}

/** Writes base64 of `rawBytes` random bytes in 76-character lines; returns the size and last line. */
export function writeBase64File(path: string, rawBytes: number): { size: number; lastLine: string } {
  const fd = openSync(path, 'w');
  let size = 0;
  let lastLine = '';
  try {
    const block = RAW_PER_LINE * 10_000;
    for (let done = 0; done < rawBytes; done += block) {
      const b64 = randomBytes(Math.min(block, rawBytes - done)).toString('base64');
      const lines: string[] = [];
      for (let at = 0; at < b64.length; at += 76) lines.push(b64.slice(at, at + 76));
      lastLine = lines[lines.length - 1] ?? lastLine;
      const text = `${lines.join('\n')}\n`;
      size += writeSync(fd, text);
    }
  } finally {
    closeSync(fd);
  }
  return { size, lastLine };
}

function timeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no sentinel within ${RUN_TIMEOUT_MS} ms`)), RUN_TIMEOUT_MS)))]).finally(() => clearTimeout(timer));
}

/** The mirror shows the sentinel line right under the file's last line: nothing lost, nothing reordered at the end. */
function checkScreen(lines: readonly string[], lastLine: string, sentinel: string, who: string): void {
  const at = lines.lastIndexOf(sentinel);
  if (at < 1 || lines[at - 1] !== lastLine) throw new Error(`${who}: the screen does not end with the file's last line then ${sentinel}`);
}

/**
 * `textWait`: a session.wait({ forText }) for the sentinel (as a string, or as a RegExp) is pending
 * during the run, as an agent waiting for a command's result would have it; the run ends when both
 * it and the parse are done.
 */
async function libraryRun(bench: BenchDriver, s: Session, name: string, file: string, lastLine: string, textWait?: 'string' | 'regexp'): Promise<RunFigures> {
  const sentinel = nextSentinel();
  await s.sendText(`cat ${file}; ${sentinel.command}`);
  await s.wait({ forIdleMs: 100 });
  const scanner = new SentinelScanner(sentinel.text);
  let found = false;
  let sub: { dispose(): void } | undefined;
  let screenCheck: NodeJS.Timeout | undefined;
  let lastOutput = performance.now();
  const seen = new Promise<'stream' | 'screen'>((resolve) => {
    sub = s.on('output', (data) => {
      lastOutput = performance.now();
      if (!found && scanner.push(data)) {
        found = true;
        resolve('stream');
      }
    });
    // If tmux paused the pane (pause-after) the library rebuilds the mirror from a capture and the
    // sentinel may never come as output: the screen shows it instead. Only a fallback (±100 ms),
    // and the screen is read only once output has stopped: a read() every 100 ms while output
    // flows cost the library path ~1 s of CPU in 50 MB that no baseline paid.
    screenCheck = setInterval(() => {
      if (performance.now() - lastOutput > 200 && s.read().content.split('\n').includes(sentinel.text)) resolve('screen');
    }, 100);
  });
  const serverPid = await bench.serverPid(name);
  const server0 = cpuMs([serverPid]);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let via: 'stream' | 'screen' | 'wait';
  try {
    const pattern = textWait === 'regexp' ? new RegExp(`^${sentinel.text}$`, 'm') : sentinel.text;
    const waited = textWait ? s.wait({ forText: pattern, timeoutMs: RUN_TIMEOUT_MS }) : undefined;
    await s.sendKeys('Enter');
    if (waited) {
      if ((await waited).outcome !== 'text') throw new Error(`library: the text wait did not see ${sentinel.text} within ${RUN_TIMEOUT_MS} ms`);
      via = 'wait';
    } else {
      via = await timeout(seen, 'library');
    }
    // forIdleMs 0: resolves once the mirror has parsed everything written so far.
    await s.wait({ forIdleMs: 0 });
  } finally {
    sub?.dispose();
    clearInterval(screenCheck);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const serverCpuMs = cpuMs([serverPid]) - server0;
  checkScreen(s.read().content.split('\n'), lastLine, sentinel.text, 'library');
  return { ms, bytes: scanner.bytes, hostCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs, via };
}

async function nullConsumerRun(file: string, lastLine: string): Promise<RunFigures> {
  const server = await BaselineServer.start({ cols: COLS, rows: ROWS, scrollback: SCROLLBACK });
  try {
    const sentinel = nextSentinel();
    const scanner = new SentinelScanner(sentinel.text);
    let found: (() => void) | undefined;
    const seen = new Promise<void>((resolve) => (found = resolve));
    const client = await server.attachControl((event) => {
      if (event.kind === 'output' && event.pane === server.pane && found && scanner.push(event.data)) {
        found();
        found = undefined;
      }
    });
    // As the library's backend does, so both paths see the same %extended-output stream.
    await client.command(refreshClientPauseAfter(5));
    await client.batch(encodeSendText(server.pane, `cat ${file}; ${sentinel.command}`));
    await sleep(100);
    scanner.bytes = 0;
    const server0 = cpuMs([server.serverPid]);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await client.command(encodeSendKeys(server.pane, ['Enter']));
    await timeout(seen, 'null consumer');
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    const serverCpuMs = cpuMs([server.serverPid]) - server0;
    await sleep(20);
    const screen = (await server.capture()).split('\n').map((l) => l.trimEnd());
    checkScreen(screen, lastLine, sentinel.text, 'null consumer (tmux grid)');
    await server.detachControl(client);
    return { ms, bytes: scanner.bytes, hostCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs };
  } finally {
    await server.close();
  }
}

async function ptyRun(file: string, lastLine: string, dir: string, withMirror: boolean): Promise<RunFigures> {
  const pty = nodePty.spawn('/bin/bash', ['--norc', '--noprofile'], {
    name: 'xterm-256color',
    cols: COLS,
    rows: ROWS,
    cwd: dir,
    env: { PATH: CURATED_PATH, HOME: dir, LANG: 'C.UTF-8', PS1: '$ ' },
    encoding: null,
  });
  const mirror = withMirror ? new Mirror({ cols: COLS, rows: ROWS, scrollback: SCROLLBACK }) : undefined;
  try {
    let paused = false;
    mirror?.onDrain(() => {
      if (paused) {
        paused = false;
        pty.resume();
      }
    });
    let prompt: (() => void) | undefined;
    const promptShown = new Promise<void>((resolve) => (prompt = resolve));
    let scanner: SentinelScanner | undefined;
    let found: (() => void) | undefined;
    const seen = new Promise<void>((resolve) => (found = resolve));
    // With encoding null node-pty hands out Buffers (its typings say string).
    pty.onData((chunk: string | Buffer) => {
      const data = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
      if (mirror) {
        mirror.write(bytes);
        if (mirror.needsDrain && !paused) {
          paused = true;
          pty.pause();
        }
      }
      if (!scanner) {
        if (data.includes('$ ')) prompt?.();
      } else if (found && scanner.push(bytes)) {
        found();
        found = undefined;
      }
    });
    await timeout(promptShown, 'node-pty prompt');
    await sleep(50);
    if (mirror) await mirror.whenParsed();
    const sentinel = nextSentinel();
    scanner = new SentinelScanner(sentinel.text);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    pty.write(`cat ${file}; ${sentinel.command}\r`);
    await timeout(seen, withMirror ? 'node-pty + mirror' : 'node-pty');
    if (mirror) await mirror.whenParsed();
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    if (mirror) {
      await sleep(20);
      await mirror.whenParsed();
      checkScreen(mirror.snapshot({ format: 'text' }).lines, lastLine, sentinel.text, 'node-pty + mirror');
    }
    return { ms, bytes: scanner.bytes, hostCpuMs: (cpu.user + cpu.system) / 1000, serverCpuMs: null };
  } finally {
    mirror?.dispose();
    const exited = new Promise<void>((resolve) => pty.onExit(() => resolve()));
    pty.kill('SIGKILL');
    await Promise.race([exited, sleep(2000)]);
  }
}

type Path = 'library' | 'textWait' | 'regexpWait' | 'null' | 'pty' | 'ptyMirror';
/**
 * A round's order: the paths a verdict compares run back to back (null and library, library and
 * the string wait, the two waits), reversed every other round, so whatever the machine does over
 * a few seconds meets both sides of a pair alike and no path always runs first.
 */
const ROUND_ORDER: readonly Path[] = ['null', 'library', 'textWait', 'regexpWait', 'pty', 'ptyMirror'];

export const throughput: Benchmark = {
  name: 'throughput',
  summary: 'cat of a base64 file into the mirror, vs control mode with a null consumer and node-pty',
  async run(opts: BenchOptions): Promise<BenchResult> {
    const rawBytes = Math.round(((opts.quick ? 10 : 50) * MB * 3) / 4 / RAW_PER_LINE) * RAW_PER_LINE;
    // Four rounds, judged on the median of each round's ratio: on this shared VM a slow spell can
    // hold one run (both the tmux server and this process then spend ~40% more CPU on the same
    // syscalls; docs/benchmarks.md, the runs of 2026-12-02 20:00 and 2026-12-03), and a ratio of
    // medians taken over the whole run paired runs a minute apart.
    const rounds = opts.quick ? 1 : 4;
    return withTeardown(opts.log, async (teardown) => {
      const bench = await BenchDriver.open();
      teardown.add('library driver', () => bench.close());
      const dir = join(bench.workspace, 'bench-throughput');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'big.txt');
      const { size, lastLine } = writeBase64File(file, rawBytes);
      const session = await bench.bash('throughput', COLS, ROWS);

      // Untimed warm-up of the two paths the verdict compares (a small file): the first big output in
      // a process otherwise runs on cold code, and it was always the library's (round 1 starts with it).
      const warmFile = join(dir, 'warm.txt');
      const warm = writeBase64File(warmFile, RAW_PER_LINE * 20_000);
      opts.log('throughput: warm-up');
      await libraryRun(bench, session, 'throughput', warmFile, warm.lastLine);
      await nullConsumerRun(warmFile, warm.lastLine);

      const runs: Record<Path, RunFigures[]> = { library: [], textWait: [], regexpWait: [], null: [], pty: [], ptyMirror: [] };
      for (let r = 0; r < rounds; r++) {
        const order = r % 2 === 0 ? ROUND_ORDER : [...ROUND_ORDER].reverse();
        for (const path of order) {
          await settleProcess();
          opts.log(`throughput: round ${r + 1}/${rounds}, ${path}`);
          if (path === 'library') runs.library.push(await libraryRun(bench, session, 'throughput', file, lastLine));
          else if (path === 'textWait') runs.textWait.push(await libraryRun(bench, session, 'throughput', file, lastLine, 'string'));
          else if (path === 'regexpWait') runs.regexpWait.push(await libraryRun(bench, session, 'throughput', file, lastLine, 'regexp'));
          else if (path === 'null') runs.null.push(await nullConsumerRun(file, lastLine));
          else runs[path].push(await ptyRun(file, lastLine, dir, path === 'ptyMirror'));
        }
      }

      const mbps = (f: RunFigures): number => size / MB / (f.ms / 1000);
      const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      const summary = (path: Path): { median: number; mean: number; best: number; seconds: number; host: number; server: number | null; bytes: number } => {
        const list = runs[path];
        const servers = list.map((f) => f.serverCpuMs).filter((v): v is number => v !== null);
        return {
          median: median(list.map(mbps)),
          mean: mean(list.map(mbps)),
          best: Math.max(...list.map(mbps)),
          seconds: mean(list.map((f) => f.ms)) / 1000,
          host: mean(list.map((f) => f.hostCpuMs)) / 1000,
          server: servers.length > 0 ? mean(servers) / 1000 : null,
          bytes: Math.min(...list.map((f) => f.bytes)),
        };
      };
      // Each round's ratio of a pair run back to back; the verdicts take their median.
      const perRound = (num: Path, den: Path): number[] => runs[num].map((f, i) => mbps(f) / mbps(runs[den][i] as RunFigures));
      const pairs = { libraryNull: perRound('library', 'null'), stringWait: perRound('textWait', 'library'), regexpWait: perRound('regexpWait', 'library') };
      const S = { library: summary('library'), textWait: summary('textWait'), regexpWait: summary('regexpWait'), null: summary('null'), pty: summary('pty'), ptyMirror: summary('ptyMirror') };
      // Host CPU per MB against the tmux server's per MB, run by run (the same drive, the same file).
      const cpuShare = mean(runs.library.map((f) => f.hostCpuMs / (f.serverCpuMs ?? Number.NaN)));
      const nullCpuShare = mean(runs.null.map((f) => f.hostCpuMs / (f.serverCpuMs ?? Number.NaN)));
      const values = (s: ReturnType<typeof summary>): (number | null)[] => [s.median, s.mean, s.best, s.seconds, s.host, s.server];
      // The tmux server's CPU per MB, run by run: it does the same work for either consumer (the same
      // reads and writes), so a run far above the others met a slow spell of the machine.
      const tmuxMsPerMb = (path: Path): string => runs[path].map((f) => (f.serverCpuMs === null ? '–' : ((f.serverCpuMs * MB) / size).toFixed(0))).join(', ');
      return {
        name: 'throughput',
        workload: `cat of ${(size / MB).toFixed(2)} MB (base64, 76-char lines) in bash, ${COLS}x${ROWS}, scrollback ${SCROLLBACK}; ${rounds} round(s), the compared paths back to back, the order reversed every other round`,
        columns: ['MB/s median', 'MB/s mean', 'MB/s best', 's', 'host CPU s', 'tmux CPU s'],
        rows: [
          { subject: 'tmux-drive: pane → mirror parsed', baseline: false, values: values(S.library) },
          { subject: 'control mode, null consumer (tmux limit)', baseline: true, values: values(S.null) },
          { subject: 'node-pty direct, bytes dropped', baseline: true, values: values(S.pty) },
          { subject: 'node-pty → Mirror (@xterm/headless)', baseline: true, values: values(S.ptyMirror) },
          { subject: "tmux-drive, wait({ forText: 'END-…' }) pending", baseline: false, values: values(S.textWait) },
          { subject: 'tmux-drive, wait({ forText: /^END-…$/m }) pending', baseline: false, values: values(S.regexpWait) },
        ],
        verdicts: [
          ratioVerdict(`library / null consumer (median of ${rounds} rounds' ratios)`, median(pairs.libraryNull), { text: '≥ 0.95', ok: (v) => v >= 0.95 }),
          ratioVerdict('library / null consumer (ratio of the medians)', S.library.median / S.null.median),
          ratioVerdict('library host CPU / tmux server CPU (per MB)', cpuShare, { text: '≤ 0.4', ok: (v) => v <= 0.4 }),
          ratioVerdict('null consumer host CPU / tmux server CPU (per MB)', nullCpuShare),
          ratioVerdict(`with a string text wait pending / without (median of ${rounds} rounds' ratios)`, median(pairs.stringWait), { text: '≥ 0.9', ok: (v) => v >= 0.9 }),
          ratioVerdict(`with a RegExp text wait pending / without (median of ${rounds} rounds' ratios)`, median(pairs.regexpWait), { text: '≥ 0.9', ok: (v) => v >= 0.9 }),
          ratioVerdict('library / node-pty direct', S.library.median / S.pty.median),
          ratioVerdict('library / node-pty → Mirror', S.library.median / S.ptyMirror.median),
        ],
        notes: [
          `MB = 10^6 bytes of the file (${size} bytes); pane output seen up to the sentinel: library ${S.library.bytes}, null consumer ${S.null.bytes}, node-pty ${S.pty.bytes} bytes (CRLF adds one byte per line)`,
          'every path\'s final screen is checked: the file\'s last line, then the sentinel',
          'host CPU is this Node process over the run; tmux CPU is the pane\'s tmux server (utime+stime from /proc)',
          `each round's ratios, in round order: library / null ${pairs.libraryNull.map((v) => v.toFixed(3)).join(', ')}; string wait / without ${pairs.stringWait.map((v) => v.toFixed(3)).join(', ')}; RegExp wait / without ${pairs.regexpWait.map((v) => v.toFixed(3)).join(', ')}`,
          `tmux server CPU ms per MB, run by run (a slow spell of the machine shows as one run far above the rest): library ${tmuxMsPerMb('library')}; null consumer ${tmuxMsPerMb('null')}`,
          `pane output delivered to on('output'): without a wait ${S.library.bytes}, with a string wait ${S.textWait.bytes}, with a RegExp wait ${S.regexpWait.bytes} bytes`,
          ...([...runs.library, ...runs.textWait, ...runs.regexpWait].some((f) => f.via === 'screen') ? ['a library run saw the sentinel only on the screen (tmux paused the pane and the mirror was rebuilt): its time is ±100 ms'] : []),
        ],
        detail: { fileBytes: size, runs, perRound: pairs },
      };
    });
  },
};
