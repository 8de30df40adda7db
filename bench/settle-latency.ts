/**
 * How late "the screen has settled" is reported. A trial types `sleep 0.0NN; printf 'trial N\n'`
 * and presses Enter; the output arrives 50–99 ms later and stops. Measured: the moment the settle
 * is reported minus the moment of the last output byte, minus the 200 ms asked for.
 * - tmux-drive: session.wait({ forIdleMs: 200 }), called right after the command is sent; the last
 *   byte is the last 'output' event of the session.
 * - capture-pane polling at 50 ms and at 500 ms, the way simpler tools settle: a `tmux
 *   capture-pane -p` subprocess per poll until the screen is unchanged for 200 ms. Their last byte
 *   is observed by a passive control-mode client on the same server (it takes no part in the
 *   polling), stamped the same way as the library's.
 * Trials are interleaved (library, 50 ms, 500 ms, library, …).
 */
import type { Session } from '../lib/index.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { BaselineServer } from './baseline-server.js';
import { sendKeysArgv, sendTextArgv } from '../lib/control/tmux-commands.js';
import { BenchDriver } from './bench-driver.js';
import { percentiles, type Percentiles } from './percentiles.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';

const COLS = 120;
const ROWS = 40;
const IDLE_MS = 200;
const POLL_FAST_MS = 50;
const POLL_SLOW_MS = 500;
const TRIAL_TIMEOUT_MS = 10_000;

/** The trial's command: output 50–99 ms after Enter, so it never lands before the settle starts. */
function command(trial: number): string {
  const delayMs = 50 + ((trial * 37) % 50);
  return `sleep 0.${String(delayMs).padStart(3, '0')}; printf 'trial %d\\n' ${trial}`;
}

interface Trial {
  /** Settle reported − last byte − IDLE_MS. */
  readonly lateMs: number;
  /** Library trials: the same for a bare timer re-armed on every output event (the event-loop floor). */
  readonly floorLateMs?: number;
}

async function libraryTrial(s: Session, trial: number): Promise<Trial | undefined> {
  let lastByte = 0;
  let floorTimer: NodeJS.Timeout | undefined;
  let floorFired: (() => void) | undefined;
  let floorAt = 0;
  const sub = s.on('output', () => {
    lastByte = performance.now();
    clearTimeout(floorTimer);
    floorTimer = setTimeout(() => {
      floorAt = performance.now();
      floorFired?.();
    }, IDLE_MS);
  });
  try {
    await s.sendText(command(trial), { submit: true });
    const start = performance.now();
    const r = await s.wait({ forIdleMs: IDLE_MS, timeoutMs: TRIAL_TIMEOUT_MS });
    const settled = performance.now();
    if (r.outcome !== 'idle') throw new Error(`library settle: outcome ${r.outcome}`);
    if (!s.read().content.includes(`trial ${trial}`)) throw new Error(`library settle: trial ${trial} output not on screen`);
    // Output that ended before the wait began would make the settle look late through no fault of its own.
    if (lastByte <= start) return undefined;
    if (floorAt < lastByte) await new Promise<void>((resolve) => (floorFired = resolve));
    return { lateMs: settled - lastByte - IDLE_MS, floorLateMs: floorAt - lastByte - IDLE_MS };
  } finally {
    sub.dispose();
    clearTimeout(floorTimer);
  }
}

class PollingSettler {
  lastByte = 0;
  constructor(readonly server: BaselineServer) {}

  async trial(trial: number, intervalMs: number): Promise<Trial | undefined> {
    const { server } = this;
    await server.tmux(sendTextArgv(server.session, command(trial)));
    await server.tmux(sendKeysArgv(server.session, ['Enter']));
    const start = performance.now();
    let previous = await server.capture();
    let changedAt = performance.now();
    for (;;) {
      await sleep(intervalMs);
      const screen = await server.capture();
      const now = performance.now();
      if (now - start > TRIAL_TIMEOUT_MS) throw new Error(`polling settle (${intervalMs} ms): no settle`);
      if (screen !== previous) {
        previous = screen;
        changedAt = now;
      } else if (now - changedAt >= IDLE_MS) {
        if (!screen.includes(`trial ${trial}`)) continue; // settled before the output came: keep polling
        if (this.lastByte <= start) return undefined;
        return { lateMs: now - this.lastByte - IDLE_MS };
      }
    }
  }
}

const row = (p: Percentiles): number[] => [p.p50, p.p90, p.p99, p.max, p.n];

export const settleLatency: Benchmark = {
  name: 'settle-latency',
  summary: `wait({ forIdleMs: ${IDLE_MS} }) lateness after the last byte, vs capture-pane polling at ${POLL_FAST_MS} and ${POLL_SLOW_MS} ms`,
  async run(opts: BenchOptions): Promise<BenchResult> {
    const trials = opts.quick ? 8 : 30;
    return withTeardown(opts.log, async (teardown) => {
      const bench = await BenchDriver.open();
      teardown.add('library driver', () => bench.close());
      const session = await bench.bash('settle', COLS, ROWS);
      const fast = new PollingSettler(await BaselineServer.start({ cols: COLS, rows: ROWS }));
      teardown.add('polling server (fast)', () => fast.server.close());
      const slow = new PollingSettler(await BaselineServer.start({ cols: COLS, rows: ROWS }));
      teardown.add('polling server (slow)', () => slow.server.close());
      for (const p of [fast, slow]) {
        await p.server.attachControl((event) => {
          if (event.kind === 'output' && event.pane === p.server.pane) p.lastByte = performance.now();
        });
      }
      const lib: number[] = [];
      const floor: number[] = [];
      /** Per trial: library lateness − timer-floor lateness (the library's own share). */
      const own: number[] = [];
      const f: number[] = [];
      const sl: number[] = [];
      let discarded = 0;
      const keep = (out: number[], t: Trial | undefined): void => {
        if (t) out.push(t.lateMs);
        else discarded++;
      };
      // One untimed trial each: first-call costs (JIT, page faults) are not what is measured.
      await libraryTrial(session, 0);
      await fast.trial(0, POLL_FAST_MS);
      for (let i = 1; i <= trials; i++) {
        if (i % 10 === 1) opts.log(`settle-latency: trials ${i}–${Math.min(i + 9, trials)} of ${trials}`);
        const t = await libraryTrial(session, i);
        keep(lib, t);
        if (t?.floorLateMs !== undefined) {
          floor.push(t.floorLateMs);
          own.push(t.lateMs - t.floorLateMs);
        }
        keep(f, await fast.trial(i, POLL_FAST_MS));
        keep(sl, await slow.trial(i, POLL_SLOW_MS));
        if (i % 10 === 0) {
          // Keep the screens from scrolling the old trials away under the pollers: clear all three.
          await session.sendText('clear', { submit: true });
          await session.wait({ forIdleMs: 50 });
          for (const p of [fast, slow]) {
            await p.server.tmux(sendTextArgv(p.server.session, 'clear'));
            await p.server.tmux(sendKeysArgv(p.server.session, ['Enter']));
          }
          await sleep(50);
        }
      }
      const L = percentiles(lib);
      const B = percentiles(floor);
      const O = percentiles(own);
      const F = percentiles(f);
      const S = percentiles(sl);
      return {
        name: 'settle-latency',
        workload: `${trials} trials each, bash ${COLS}x${ROWS}: output 50–99 ms after Enter, then quiet; settle = ${IDLE_MS} ms without change`,
        columns: ['p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'n'],
        rows: [
          { subject: `tmux-drive: wait({ forIdleMs: ${IDLE_MS} }) − last byte − ${IDLE_MS}`, baseline: false, values: row(L) },
          { subject: `floor: bare setTimeout(${IDLE_MS}) re-armed per output event`, baseline: true, values: row(B) },
          { subject: `capture-pane polling every ${POLL_FAST_MS} ms`, baseline: true, values: row(F) },
          { subject: `capture-pane polling every ${POLL_SLOW_MS} ms`, baseline: true, values: row(S) },
        ],
        verdicts: [
          { label: 'library lateness p99', value: L.p99, unit: 'ms', target: '≤ 5 ms', met: L.p99 <= 5 },
          { label: 'library − timer floor (per trial), p50', value: O.p50, unit: 'ms' },
          { label: 'library − timer floor (per trial), p99', value: O.p99, unit: 'ms', target: '≤ 5 ms', met: O.p99 <= 5 },
          ratioVerdict(`library / polling ${POLL_FAST_MS} ms, p50`, L.p50 / F.p50, { text: '< 1', ok: (v) => v < 1 }),
          ratioVerdict(`library / polling ${POLL_FAST_MS} ms, p99`, L.p99 / F.p99, { text: '< 1', ok: (v) => v < 1 }),
          ratioVerdict(`library / polling ${POLL_SLOW_MS} ms, p50`, L.p50 / S.p50, { text: '< 1', ok: (v) => v < 1 }),
        ],
        notes: [
          'lateness = when the settle was reported − the last output byte − 200 ms (0 would be perfect)',
          `trials discarded because the output ended before the settle began: ${discarded}`,
          'the timer floor runs in the same trials as the library, so both see the same scheduling noise: it is what any event-driven settle in this process could do',
        ],
        detail: { library: L, timerFloor: B, libraryMinusFloor: O, poll50: F, poll500: S, samplesMs: { library: lib, timerFloor: floor, libraryMinusFloor: own, poll50: f, poll500: sl } },
      };
    });
  },
};
