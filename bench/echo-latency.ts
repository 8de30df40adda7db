/**
 * Keystroke → mirrored echo. One 'x' at a time into bash at its prompt; the time from calling
 * session.sendText('x') to the mirror's grid showing it (the cursor row reads '$ xx…x'). Against,
 * in the same run: the floor key by key with the library (pairedBlock), the polling driver in
 * blocks between, so drift hits every path alike:
 * - the control-mode floor: `send-keys -l x` over a bare ControlClient to the first %output with
 *   the 'x' (tmux's own round trip, nothing parsed into a grid);
 * - a capture-pane polling driver, the way simpler tools work: a `tmux send-keys` subprocess,
 *   then a `tmux capture-pane -p` subprocess every 10 ms until the 'x' is on the screen.
 * After each block the line is cleared with C-u, so it never wraps.
 */
import type { Session } from '../lib/index.js';
import type { ControlClient } from '../backends/tmux/control-client.js';
import type { ControlEvent } from '../lib/control/parser.js';
import { encodeSendKeys, encodeSendText, sendKeysArgv, sendTextArgv } from '../lib/control/tmux-commands.js';
import { ratioVerdict, type Benchmark, type BenchOptions, type BenchResult } from './benchmark.js';
import { BaselineServer } from './baseline-server.js';
import { BenchDriver } from './bench-driver.js';
import { percentiles, type Percentiles } from './percentiles.js';
import { sleep } from './sleep.js';
import { withTeardown } from './teardown.js';

const COLS = 120;
const ROWS = 40;
/** Keys per block: the line stays far from the 120-column wrap. */
const BLOCK_KEYS = 50;
const WARMUP_KEYS = 20;
/** Polling keys per block (each takes ~10 ms: the baseline needs fewer samples than the ratio's two sides). */
const POLL_BLOCK_KEYS = 20;
/** Between polls of the polling baseline, as the brief's simple tool does. */
const POLL_INTERVAL_MS = 10;
const ECHO_TIMEOUT_MS = 3000;
const X = 0x78;
/** The gap before every key, either side's (see settle). */
const SETTLE_MS = 2;

/**
 * The line the cursor is on, as read() would show it (right-trimmed, redacted): cursorLine reads a
 * few rows, as the floor's check looks at one %output. read() (classification and redaction of
 * the whole screen, ~1 ms here) once ran after every key: after the clock stopped, but on the way
 * to the next key.
 */
function cursorRow(s: Session): string {
  return s.cursorLine().text;
}

/** The last prompt row of a capture-pane -p screen. */
function promptRow(screen: string): string {
  const rows = screen.split('\n').filter((l) => l.startsWith('$'));
  return (rows[rows.length - 1] ?? '').trimEnd();
}

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no echo within ${ECHO_TIMEOUT_MS} ms`)), ECHO_TIMEOUT_MS);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

interface LibraryStats {
  /** Echoes whose bytes reached the session before the grid (the mirror queued them). */
  queued: number;
}

/**
 * This process's CPU (user + system, µs) from just before a key is sent to the moment its echo is
 * seen, each side's check after it left out. Latency on two shared cores moves with the load; CPU
 * spent on the round trip much less, and CPU is what delays tmux, bash and the echo there.
 */
const cpuNow = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
interface Seen {
  readonly at: number;
  readonly cpu: number;
}

/** Resolves with the time (and CPU) the grid first shows `expected` on the cursor row. */
function gridShows(s: Session, expected: string, stats: LibraryStats): Promise<Seen> {
  return new Promise((resolve) => {
    let looking = false;
    const done = (seen: Seen): void => {
      sub.dispose();
      resolve(seen);
    };
    const look = (): void => {
      if (cursorRow(s) === expected) done({ at: performance.now(), cpu: cpuNow() });
      else setImmediate(look);
    };
    const sub = s.on('output', () => {
      // Before the check: its own cost is not the library's latency.
      const seen = { at: performance.now(), cpu: cpuNow() };
      if (looking) return;
      if (cursorRow(s) === expected) return done(seen);
      stats.queued += 1;
      looking = true;
      setImmediate(look);
    });
  });
}

/** One key into the library's drive: the time (and CPU) until its grid shows it (`i` x's on the line). */
async function libraryKey(s: Session, i: number, stats: LibraryStats): Promise<Seen> {
  const expected = `$ ${'x'.repeat(i)}`;
  const cpu0 = cpuNow();
  const t0 = performance.now();
  const shown = gridShows(s, expected, stats);
  const sent = s.sendText('x');
  const seen = await withTimeout(shown, 'library');
  await sent;
  return { at: seen.at - t0, cpu: seen.cpu - cpu0 };
}

async function libraryClear(s: Session): Promise<void> {
  await s.sendKeys('C-u');
  await s.wait({ forIdleMs: 30 });
  if (cursorRow(s) !== '$') throw new Error(`library: the line did not clear (${JSON.stringify(cursorRow(s))})`);
}

/** Between keys: whatever one side deferred (timers, queued work) runs before the other's clock starts. */
const settle = (): Promise<void> => sleep(SETTLE_MS);

/**
 * `keys` keys into each, paired: key i goes to the library and to the floor back to back, the
 * order alternating, so both meet the same machine state. Blocks of one side at a time did not:
 * the floor's own figure moved with what the process had done just before (0.19–0.32 ms p50 after
 * library blocks that read() the whole screen per key, 0.38–0.42 ms after light ones, 2026-12-02).
 */
async function pairedBlock(s: Session, floor: ControlFloor, keys: number, stats: LibraryStats, lib?: Seen[], raw?: Seen[]): Promise<void> {
  for (let i = 1; i <= keys; i++) {
    if (i % 2 === 1) {
      const l = await libraryKey(s, i, stats);
      await settle();
      const f = await floor.key();
      lib?.push(l);
      raw?.push(f);
    } else {
      const f = await floor.key();
      await settle();
      const l = await libraryKey(s, i, stats);
      raw?.push(f);
      lib?.push(l);
    }
    await settle();
  }
  await libraryClear(s);
  await floor.clear();
}

class ControlFloor {
  private waiter: ((seen: Seen) => void) | undefined;
  constructor(private readonly server: BaselineServer) {}
  client: ControlClient | undefined;

  onEvent = (event: ControlEvent): void => {
    if (event.kind !== 'output' || event.pane !== this.server.pane || !this.waiter) return;
    if (event.data.includes(X)) {
      const w = this.waiter;
      this.waiter = undefined;
      w({ at: performance.now(), cpu: cpuNow() });
    }
  };

  /** One key: the time (and CPU) until tmux's %output carries its echo. */
  async key(): Promise<Seen> {
    const client = this.client;
    if (!client) throw new Error('control floor: not attached');
    const seen = new Promise<Seen>((resolve) => (this.waiter = resolve));
    const cpu0 = cpuNow();
    const t0 = performance.now();
    const sent = client.batch(encodeSendText(this.server.pane, 'x'));
    const echo = await withTimeout(seen, 'control floor');
    await sent;
    return { at: echo.at - t0, cpu: echo.cpu - cpu0 };
  }

  async clear(): Promise<void> {
    if (!this.client) throw new Error('control floor: not attached');
    await this.client.command(encodeSendKeys(this.server.pane, ['C-u']));
    await sleep(30);
  }
}

async function pollingBlock(server: BaselineServer, keys: number, out: number[] | undefined): Promise<void> {
  for (let i = 1; i <= keys; i++) {
    const expected = `$ ${'x'.repeat(i)}`;
    const t0 = performance.now();
    await server.tmux(sendTextArgv(server.session, 'x'));
    for (;;) {
      if (promptRow(await server.capture()) === expected) break;
      if (performance.now() - t0 > ECHO_TIMEOUT_MS) throw new Error('polling: no echo');
      await sleep(POLL_INTERVAL_MS);
    }
    out?.push(performance.now() - t0);
  }
  await server.tmux(sendKeysArgv(server.session, ['C-u']));
  await sleep(30);
  if (promptRow(await server.capture()) !== '$') throw new Error('polling: the line did not clear');
}

const row = (p: Percentiles): number[] => [p.p50, p.p90, p.p99, p.max, p.n];

type LeaseChecks = { readonly viaWalIndex: number; readonly full: number; readonly walIndexOff: string | null };
/**
 * The driver's lease-check counts (journal stats; absent before the WAL-index check existed). The
 * journal is the driver's private member: read here for the note only, outside any measurement.
 */
function leaseChecks(bench: BenchDriver): LeaseChecks | undefined {
  const journal = (bench.driver as unknown as { journal?: { stats(): { leaseChecks?: LeaseChecks } } }).journal;
  return journal?.stats().leaseChecks;
}

export const echoLatency: Benchmark = {
  name: 'echo-latency',
  summary: 'keystroke → mirrored echo (bash prompt), vs control-mode floor and capture-pane polling',
  async run(opts: BenchOptions): Promise<BenchResult> {
    // 800 paired keys: a p99 of 300 was its 3rd-highest key, and moved 0.5x–2.2x between runs.
    const blocks = opts.quick ? 2 : 16;
    const pollKeys = opts.quick ? 15 : POLL_BLOCK_KEYS;
    return withTeardown(opts.log, async (teardown) => {
      const bench = await BenchDriver.open();
      teardown.add('library driver', () => bench.close());
      const session = await bench.bash('echo', COLS, ROWS);
      const floorServer = await BaselineServer.start({ cols: COLS, rows: ROWS });
      teardown.add('floor server', () => floorServer.close());
      const floor = new ControlFloor(floorServer);
      floor.client = await floorServer.attachControl(floor.onEvent);
      const pollServer = await BaselineServer.start({ cols: COLS, rows: ROWS });
      teardown.add('polling server', () => pollServer.close());

      const stats: LibraryStats = { queued: 0 };
      await pairedBlock(session, floor, WARMUP_KEYS, stats);
      await pollingBlock(pollServer, 5, undefined);
      stats.queued = 0;

      const checksBefore = leaseChecks(bench);
      const libSeen: Seen[] = [];
      const rawSeen: Seen[] = [];
      const poll: number[] = [];
      for (let b = 0; b < blocks; b++) {
        opts.log(`echo-latency: block ${b + 1}/${blocks}`);
        await pairedBlock(session, floor, BLOCK_KEYS, stats, libSeen, rawSeen);
        await pollingBlock(pollServer, pollKeys, poll);
      }
      const checksAfter = leaseChecks(bench);
      const checks = checksBefore && checksAfter ? { viaWalIndex: checksAfter.viaWalIndex - checksBefore.viaWalIndex, full: checksAfter.full - checksBefore.full, walIndexOff: checksAfter.walIndexOff } : undefined;
      const lib = libSeen.map((k) => k.at);
      const raw = rawSeen.map((k) => k.at);
      const L = percentiles(lib);
      const F = percentiles(raw);
      const libCpu = percentiles(libSeen.map((k) => k.cpu));
      const rawCpu = percentiles(rawSeen.map((k) => k.cpu));
      const P = percentiles(poll);
      return {
        name: 'echo-latency',
        workload: `${lib.length} keystrokes into bash --norc --noprofile at '$ ' (${COLS}x${ROWS}), ${blocks} blocks, library and floor paired key by key; polling baseline ${poll.length} keystrokes`,
        columns: ['p50 ms', 'p90 ms', 'p99 ms', 'max ms', 'n'],
        rows: [
          { subject: 'tmux-drive: sendText → mirror grid shows it', baseline: false, values: row(L) },
          { subject: 'control-mode floor: literal keys → %output', baseline: true, values: row(F) },
          { subject: `capture-pane polling (subprocesses, ${POLL_INTERVAL_MS} ms)`, baseline: true, values: row(P) },
        ],
        verdicts: [
          { label: 'library mirrored echo p50', value: L.p50, unit: 'ms', target: '≤ 1 ms', met: L.p50 <= 1 },
          ratioVerdict('library / control-mode floor, p50', L.p50 / F.p50, { text: '≤ 1.3', ok: (v) => v <= 1.3 }),
          ratioVerdict('library / control-mode floor, p99', L.p99 / F.p99, { text: '≤ 1.5', ok: (v) => v <= 1.5 }),
          ratioVerdict('library / capture-pane polling, p50', L.p50 / P.p50, { text: '< 1 (faster)', ok: (v) => v < 1 }),
          ratioVerdict('library / capture-pane polling, p99', L.p99 / P.p99, { text: '< 1 (faster)', ok: (v) => v < 1 }),
        ],
        notes: [
          `echoes whose bytes reached the session before the mirror's grid showed them (queued parse, not the sync path): ${stats.queued} of ${lib.length}`,
          `this process's CPU per key, send → echo seen (µs, p50 / p90): library ${libCpu.p50.toFixed(0)} / ${libCpu.p90.toFixed(0)}, floor ${rawCpu.p50.toFixed(0)} / ${rawCpu.p90.toFixed(0)} (less load-sensitive than the latency: the lever on two shared cores)`,
          checks
            ? `lease checks over the measured blocks (keys and C-u): ${checks.viaWalIndex} from the WAL-index header, ${checks.full} asked SQLite${checks.walIndexOff ? ` (header not used: ${checks.walIndexOff})` : ''}`
            : 'lease checks: this build does not count them',
          'the library figure includes sendText\'s own work before the send (screen snapshot for echo removal, transcript append)',
          'baselines run bash on their own tmux server with the same generated config, unsandboxed',
        ],
        detail: { library: L, floor: F, polling: P, cpuUs: { library: libCpu, floor: rawCpu }, leaseChecks: checks ?? null, samplesMs: { library: lib, floor: raw, polling: poll } },
      };
    });
  },
};
