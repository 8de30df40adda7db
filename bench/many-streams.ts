/**
 * Many drives streaming at once: 20 bash drives each `cat` a 5 MB file (base64 lines) at the same
 * moment; the aggregate throughput until every drive has its sentinel and has parsed everything.
 * Baseline, in the same run: 20 tmux servers from the same generated config (bash unsandboxed),
 * each with a bare control client whose parser decodes %output and drops it (the tmux limit for
 * 20 panes on this machine). Meanwhile a 21st, idle drive is typed into (one key every 50 ms): its
 * keystroke → mirrored echo while the 20 stream, against its own echo measured idle just before.
 * Every path's byte count and final screen are checked.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Session } from '../lib/index.js';
import { encodeSendKeys, encodeSendText, refreshClientContinue, refreshClientPauseAfter } from '../lib/control/tmux-commands.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { BaselineServer } from './baseline-server.js';
import type { ControlClient } from '../backends/tmux/control-client.js';
import { BenchDriver } from './bench-driver.js';
import { percentiles } from './percentiles.js';
import { SentinelScanner } from './sentinel-scanner.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';
import { writeBase64File } from './throughput.js';

const COLS = 120;
const ROWS = 40;
const MB = 1e6;
const RUN_TIMEOUT_MS = 300_000;
/** Between keystrokes into the idle drive while the others stream. */
const KEY_EVERY_MS = 50;
/** Keys per line before it is cleared (the line never wraps). */
const LINE_KEYS = 40;
/** A key whose echo takes longer is counted as missed. */
const ECHO_TIMEOUT_MS = 3000;

let runNumber = 0;
function nextSentinel(): { text: string; command: string } {
  runNumber += 1;
  return { text: `END-42-${runNumber}`, command: `echo END-$((6*7))-${runNumber}` };
}

/** `stalled` says which drives had not finished, so a stall names its drives and their byte counts. */
function timeout<T>(p: Promise<T>, what: string, stalled: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: not done within ${RUN_TIMEOUT_MS} ms; ${stalled()}`)), RUN_TIMEOUT_MS)))]).finally(() => clearTimeout(timer));
}

function notFinished(done: readonly boolean[], scanners: readonly SentinelScanner[]): string {
  const left = done.flatMap((d, i) => (d ? [] : [`#${i} (${scanners[i]?.bytes ?? 0} bytes)`]));
  return `not finished: ${left.join(', ') || 'none (the final parse)'}`;
}

/** False once the session is gone (a teardown on SIGINT while a check was pending). */
function readable(s: Session): boolean {
  try {
    s.read();
    return true;
  } catch {
    return false;
  }
}

function checkScreen(lines: readonly string[], lastLine: string, sentinel: string, who: string): void {
  const at = lines.lastIndexOf(sentinel);
  if (at < 1 || lines[at - 1] !== lastLine) throw new Error(`${who}: the screen does not end with the file's last line then ${sentinel}`);
}

/** Types 'x' into an idle bash drive and times each echo into the mirror's grid (the cursor row). */
class EchoProbe {
  private keys = 0;
  /** Keys whose echo did not show within ECHO_TIMEOUT_MS (the line is cleared and typing goes on). */
  missed = 0;
  constructor(private readonly s: Session) {}

  private cursorRow(): string {
    const screen = this.s.read();
    return screen.content.split('\n')[screen.cursor.y] ?? '';
  }

  private async clearLine(): Promise<void> {
    await this.s.sendKeys('C-u');
    await this.s.wait({ forIdleMs: 30 });
    this.keys = 0;
  }

  /** One keystroke: ms from sendText to the grid showing it; undefined when it did not show in time. */
  async key(): Promise<number | undefined> {
    if (this.keys === LINE_KEYS) await this.clearLine();
    this.keys += 1;
    const expected = `$ ${'x'.repeat(this.keys)}`;
    const t0 = performance.now();
    let stop = false;
    const shown = new Promise<number | undefined>((resolve) => {
      const finish = (t: number | undefined): void => {
        stop = true;
        sub.dispose();
        clearTimeout(timer);
        resolve(t);
      };
      // The grid may lag the output event (a queued parse): then it is looked at every loop turn.
      const look = (): void => {
        if (stop) return;
        const t = performance.now();
        if (this.cursorRow() === expected) finish(t);
        else setImmediate(look);
      };
      const sub = this.s.on('output', look);
      const timer = setTimeout(() => finish(undefined), ECHO_TIMEOUT_MS);
    });
    await this.s.sendText('x');
    const t1 = await shown;
    if (t1 === undefined) {
      this.missed += 1;
      await this.clearLine();
      return undefined;
    }
    return t1 - t0;
  }

  /** Keys every KEY_EVERY_MS until `until` settles. */
  async during(until: Promise<unknown>): Promise<number[]> {
    let done = false;
    const stop = (): void => void (done = true);
    until.then(stop, stop);
    const out: number[] = [];
    while (!done) {
      const ms = await this.key();
      if (ms !== undefined) out.push(ms);
      await sleep(KEY_EVERY_MS);
    }
    return out;
  }
}

interface PhaseFigures {
  readonly ms: number;
  readonly bytes: number[];
  readonly hostCpuMs: number;
  /** Drives whose sentinel was seen only on the screen (tmux paused the pane and dropped output; ±250 ms). */
  readonly onScreenOnly: number;
  /** %pause notifications (tmux paused a pane: its output waited > pause-after 5 s for this host). */
  readonly pauses: number;
  /** Library: of those, pauses tmux did not announce, found by the continue probe (backends/tmux/pause-probe.ts). */
  readonly unannounced?: number;
}

export async function libraryPhase(sessions: readonly Session[], file: string, lastLine: string): Promise<PhaseFigures> {
  const sentinels = sessions.map(() => nextSentinel());
  await Promise.all(sessions.map((s, i) => s.sendText(`cat ${file}; ${sentinels[i]?.command ?? ''}`)));
  await Promise.all(sessions.map((s) => s.wait({ forIdleMs: 100 })));
  const scanners = sentinels.map((x) => new SentinelScanner(x.text));
  const subs: { dispose(): void }[] = [];
  const checks: NodeJS.Timeout[] = [];
  let onScreenOnly = 0;
  let pauses = 0;
  let unannounced = 0;
  const done = sessions.map(() => false);
  const seen = sessions.map(
    (s, i) =>
      new Promise<void>((resolve) => {
        const scanner = scanners[i] as SentinelScanner;
        const sentinel = sentinels[i]?.text ?? '';
        let lastOutput = performance.now();
        let paused = false;
        const finish = (): void => {
          done[i] = true;
          resolve();
        };
        subs.push(
          s.on('output', (data) => {
            lastOutput = performance.now();
            if (!done[i] && scanner.push(data)) finish();
          }),
          s.on('resync', (reason) => {
            if (reason !== 'pause') return;
            pauses += 1;
            paused = true;
          }),
          // A pause tmux left unannounced, found by the backend's continue probe (also counted above).
          s.on('incident', (code) => void (code === 'pause_unannounced' && (unannounced += 1))),
        );
        // A pane tmux paused (pause-after) is rebuilt from a capture: its sentinel may show only on
        // the screen. Read only for such a pane, once its output has stopped (as the null
        // consumers' check), so the check costs the library nothing otherwise.
        checks.push(
          setInterval(() => {
            if (!done[i] && paused && performance.now() - lastOutput > 200 && readable(s) && s.read().content.split('\n').includes(sentinel)) {
              onScreenOnly += 1;
              finish();
            }
          }, 250),
        );
      }),
  );
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  try {
    await Promise.all(sessions.map((s) => s.sendKeys('Enter')));
    await timeout(
      Promise.all(seen.map((p, i) => p.then(() => sessions[i]?.wait({ forIdleMs: 0 })))),
      'library drives',
      () => notFinished(done, scanners),
    );
  } finally {
    for (const sub of subs) sub.dispose();
    for (const check of checks) clearInterval(check);
  }
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  sessions.forEach((s, i) => checkScreen(s.read().content.split('\n'), lastLine, sentinels[i]?.text ?? '', `library drive ${i}`));
  return { ms, bytes: scanners.map((x) => x.bytes), hostCpuMs: (cpu.user + cpu.system) / 1000, onScreenOnly, pauses, unannounced };
}

async function nullPhase(servers: readonly BaselineServer[], file: string, lastLine: string): Promise<PhaseFigures> {
  const sentinels = servers.map(() => nextSentinel());
  const scanners = sentinels.map((x) => new SentinelScanner(x.text));
  const found: (() => void)[] = [];
  const done = servers.map(() => false);
  const seen = servers.map(
    (_, i) =>
      new Promise<void>(
        (resolve) =>
          (found[i] = () => {
            done[i] = true;
            resolve();
          }),
      ),
  );
  const clients: ControlClient[] = [];
  const lastOutput = servers.map(() => 0);
  const paused = servers.map(() => false);
  let pauses = 0;
  let onScreenOnly = 0;
  const attached = await Promise.all(
    servers.map((server, i) =>
      server.attachControl((event) => {
        const scanner = scanners[i] as SentinelScanner;
        if (event.kind === 'output' && event.pane === server.pane) {
          lastOutput[i] = performance.now();
          if (!done[i] && scanner.push(event.data)) found[i]?.();
        } else if (event.kind === 'notification' && event.name === 'pause' && event.pane === server.pane) {
          // As the library does (without its capture): resume the pane, whose queued output tmux
          // dropped. A consumer that never continues a paused pane waits forever (the 300 s
          // timeouts of the full run before 2026-12-02).
          pauses += 1;
          paused[i] = true;
          void clients[i]?.command(refreshClientContinue(server.pane)).catch(() => undefined);
        }
      }),
    ),
  );
  clients.push(...attached);
  const checks: NodeJS.Timeout[] = [];
  try {
    await Promise.all(clients.map((c) => c.command(refreshClientPauseAfter(5))));
    await Promise.all(clients.map((c, i) => c.batch(encodeSendText(servers[i]?.pane ?? '%0', `cat ${file}; ${sentinels[i]?.command ?? ''}`))));
    await sleep(150);
    for (const s of scanners) s.bytes = 0;
    // A paused pane's sentinel may have been dropped with its output: once its output stopped it
    // is looked for on tmux's screen (a capture subprocess), as the library's check reads its mirror.
    servers.forEach((server, i) => {
      const check = setInterval(() => {
        if (done[i] || !paused[i] || performance.now() - (lastOutput[i] ?? 0) < 200) return;
        void server.capture().then((text) => {
          if (done[i] || !text.split('\n').map((l) => l.trimEnd()).includes(sentinels[i]?.text ?? '')) return;
          onScreenOnly += 1;
          found[i]?.();
        }, () => undefined);
      }, 250);
      checks.push(check);
    });
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await Promise.all(clients.map((c, i) => c.command(encodeSendKeys(servers[i]?.pane ?? '%0', ['Enter']))));
    await timeout(Promise.all(seen), 'null consumers', () => notFinished(done, scanners));
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await sleep(50);
    for (const [i, server] of servers.entries()) checkScreen((await server.capture()).split('\n').map((l) => l.trimEnd()), lastLine, sentinels[i]?.text ?? '', `null consumer ${i} (tmux grid)`);
    return { ms, bytes: scanners.map((x) => x.bytes), hostCpuMs: (cpu.user + cpu.system) / 1000, onScreenOnly, pauses };
  } finally {
    for (const check of checks) clearInterval(check);
    await Promise.all(clients.map((c, i) => servers[i]?.detachControl(c)));
  }
}

export const manyStreams: Benchmark = {
  name: 'many-streams',
  summary: '20 drives each cat 5 MB at once, vs 20 null control-mode consumers; echo of a 21st idle drive meanwhile',
  async run(opts: BenchOptions): Promise<BenchResult> {
    const drives = opts.quick ? 8 : 20;
    const fileMb = opts.quick ? 2 : 5;
    // Two rounds in --quick too: with one, the library always ran first and the scatter between
    // runs (0.17x to 0.46x) could not be told from an order effect.
    const rounds = 2;
    return withTeardown(opts.log, async (teardown) => {
      const bench = await BenchDriver.open({ maxSessions: drives + 4 });
      teardown.add('library driver', () => bench.close());
      const dir = join(bench.workspace, 'bench-many');
      mkdirSync(dir, { recursive: true });
      const file = join(dir, 'five.txt');
      const { size, lastLine } = writeBase64File(file, Math.round((fileMb * MB * 3) / 4 / 57) * 57);
      const warmFile = join(dir, 'warm.txt');
      const warm = writeBase64File(warmFile, 57 * 4000);
      opts.log(`many-streams: ${drives} drives and ${drives} baseline servers`);
      const sessions: Session[] = [];
      for (let i = 0; i < drives; i += 4) sessions.push(...(await Promise.all(Array.from({ length: Math.min(4, drives - i) }, (_, k) => bench.bash(`ms${i + k}`, COLS, ROWS)))));
      const idle = await bench.bash('ms-idle', COLS, ROWS);
      const servers: BaselineServer[] = [];
      teardown.add('baseline servers', () => Promise.all(servers.map((s) => s.close())).then(() => undefined));
      for (let i = 0; i < drives; i += 4) servers.push(...(await Promise.all(Array.from({ length: Math.min(4, drives - i) }, () => BaselineServer.start({ cols: COLS, rows: ROWS, scrollback: 1000 })))));

      // Warm-up, untimed: each side streams a small file once (JIT, page cache, the servers' first
      // big output), so the first timed phase is not also the first one run.
      opts.log('many-streams: warm-up');
      await libraryPhase(sessions, warmFile, warm.lastLine);
      await nullPhase(servers, warmFile, warm.lastLine);
      const probe = new EchoProbe(idle);
      for (let k = 0; k < 10; k++) await probe.key();
      const idleEcho: number[] = [];
      const busyEcho: number[] = [];
      const nullEcho: number[] = [];
      const lib: PhaseFigures[] = [];
      const nul: PhaseFigures[] = [];
      for (let r = 0; r < rounds; r++) {
        opts.log(`many-streams: round ${r + 1}/${rounds}, idle echo`);
        for (let k = 0; k < 30; k++) {
          const ms = await probe.key();
          if (ms !== undefined) idleEcho.push(ms);
          await sleep(KEY_EVERY_MS);
        }
        const order = r % 2 === 0 ? ['library', 'null'] : ['null', 'library'];
        for (const path of order) {
          opts.log(`many-streams: round ${r + 1}/${rounds}, ${path}`);
          if (path === 'null') {
            // The same typing while the baseline servers stream: the tmux servers load the two
            // cores the same way, the library parses nothing.
            const phase = nullPhase(servers, file, lastLine);
            nullEcho.push(...(await probe.during(phase)));
            nul.push(await phase);
          } else {
            const phase = libraryPhase(sessions, file, lastLine);
            busyEcho.push(...(await probe.during(phase)));
            lib.push(await phase);
          }
        }
      }
      const mbps = (f: PhaseFigures): number => (drives * size) / MB / (f.ms / 1000);
      const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;
      const L = mean(lib.map(mbps));
      const N = mean(nul.map(mbps));
      // What reached on('output') (or the null consumer's parser): a paused pane's dropped output
      // ends the phase sooner without being delivered, so the file-based rate alone flatters the
      // side that fell behind.
      const delivered = (f: PhaseFigures): number => f.bytes.reduce((a, b) => a + b, 0) / MB / (f.ms / 1000);
      const LD = mean(lib.map(delivered));
      const ND = mean(nul.map(delivered));
      const I = percentiles(idleEcho);
      const B = percentiles(busyEcho);
      const NE = percentiles(nullEcho);
      const libBytes = Math.min(...lib.flatMap((f) => f.bytes));
      const nulBytes = Math.min(...nul.flatMap((f) => f.bytes));
      return {
        name: 'many-streams',
        workload: `${drives} bash drives each cat ${(size / MB).toFixed(2)} MB (base64, 76-char lines) at once, ${COLS}x${ROWS}; ${rounds} round(s), order rotated; a keystroke every ${KEY_EVERY_MS} ms into a ${drives + 1}st idle drive`,
        columns: ['aggregate MB/s', 's', 'host CPU s', 'echo p50 ms', 'echo p99 ms'],
        rows: [
          { subject: `tmux-drive: ${drives} drives → mirrors parsed`, baseline: false, values: [L, mean(lib.map((f) => f.ms)) / 1000, mean(lib.map((f) => f.hostCpuMs)) / 1000, null, null] },
          { subject: `control mode, ${drives} null consumers`, baseline: true, values: [N, mean(nul.map((f) => f.ms)) / 1000, mean(nul.map((f) => f.hostCpuMs)) / 1000, null, null] },
          { subject: 'idle drive echo, while they stream', baseline: false, values: [null, null, null, B.p50, B.p99] },
          { subject: 'idle drive echo, nothing streaming', baseline: true, values: [null, null, null, I.p50, I.p99] },
          { subject: 'idle drive echo, while the null consumers stream', baseline: true, values: [null, null, null, NE.p50, NE.p99] },
        ],
        verdicts: [
          ratioVerdict(`library / null consumers, aggregate (${drives} drives)`, L / N, { text: '≥ 0.9', ok: (v) => v >= 0.9 }),
          ratioVerdict(`library / null consumers, bytes delivered per second (paused output not counted)`, LD / ND, { text: '≥ 0.9', ok: (v) => v >= 0.9 }),
          // The figure; on two cores the tmux servers alone slow the echo 8-20x (the next row's baseline).
          ratioVerdict('idle drive echo p50, streaming / idle', B.p50 / I.p50, { text: '≤ 2', ok: (v) => v <= 2 }),
          ratioVerdict('idle drive echo p99, streaming / idle', B.p99 / I.p99),
          // The fair verdict: what the library's parsing adds over the same servers streaming to null consumers.
          ratioVerdict('idle drive echo p50, library streaming / null consumers streaming', B.p50 / NE.p50, { text: '≤ 2', ok: (v) => v <= 2 }),
          ratioVerdict('idle drive echo p99, library streaming / null consumers streaming', B.p99 / NE.p99),
        ],
        notes: [
          `pane bytes up to the sentinel, fewest and most of any drive: library ${libBytes}–${Math.max(...lib.flatMap((f) => f.bytes))}, null consumer ${nulBytes}–${Math.max(...nul.flatMap((f) => f.bytes))}; every final screen checked (the file's last line, then the sentinel)`,
          `echo samples: ${idleEcho.length} idle, ${busyEcho.length} while the library drives stream, ${nullEcho.length} while the null consumers stream; keys whose echo did not show within ${ECHO_TIMEOUT_MS} ms: ${probe.missed}`,
          `%pause (tmux paused a pane whose output waited > 5 s, dropping it), per phase: library ${lib.map((f) => f.pauses).join(', ')} (each rebuilt from a capture; unannounced, found by the continue probe: ${lib.map((f) => f.unannounced ?? 0).join(', ')}), null consumers ${nul.map((f) => f.pauses).join(', ')} (each continued); sentinel seen on the screen only (bytes short): library ${lib.map((f) => f.onScreenOnly).join(', ')}, null ${nul.map((f) => f.onScreenOnly).join(', ')} of ${drives}`,
          `seconds per phase, in run order: library ${lib.map((f) => (f.ms / 1000).toFixed(1)).join(', ')}; null ${nul.map((f) => (f.ms / 1000).toFixed(1)).join(', ')}`,
          'baselines run bash on their own tmux servers with the same generated config, unsandboxed',
        ],
        detail: { fileBytes: size, library: lib, null: nul, echoMs: { idle: idleEcho, busy: busyEcho, nullStreaming: nullEcho } },
      };
    });
  },
};
