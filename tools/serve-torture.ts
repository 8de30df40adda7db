/**
 * Serving-host torture: a `tmux-drive serve` process holds N bash drives while clients drive them
 * and an observer watches every drive's journal feed; a standby waits; the serving host is killed
 * with SIGKILL at a random moment, the standby takes over, a new standby starts, over and over.
 * After each takeover:
 *
 * - no double drive: each drive has one tmux server, one bash, one control client, and its lease
 *   names the new host (nothing relaunched, the dead host's control client gone);
 * - every drive is drivable again: through the reconnected client each one takes a key (C-u, which
 *   also clears a line a driver's cut-short submit left typed) and then an echo typed into it is
 *   seen on its screen (the drivers pause from just before the SIGKILL until then); the times from
 *   the SIGKILL to the standby's ready line, to every drive's key and to every drive's echo are
 *   the takeover figures;
 * - at the end, the observer received every stored journal event of every drive exactly once.
 *
 * Calls in flight when a host dies fail with HOST_LOST (delivery unknown); they are counted, not
 * violations. Run: `npm run build && node dist/tools/serve-torture.js --iterations 100 [--drives 20] [--history LINES]`.
 *
 * `--marks`: each takeover's timeline (ms after the SIGKILL) from the standby's marks
 * (lib/driver/takeover-marks.ts: lock, listening, leases, re-attaches, ready, accepts, hellos, each
 * gate call's start and end) and the clients' own times (connect, reconnected, key, sent, echo), one line per
 * takeover and their p50s at the end; each takeover waits 3 s for its marks. `--profile-dir DIR`: the
 * last takeover's standby runs under `--cpu-prof` (250 µs), its profile and marks written to DIR.
 */
import { subscribe } from 'node:diagnostics_channel';
import { writeFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Client } from '../lib/client/client.js';
import type { TmuxDriveError } from '../lib/common/errors.js';
import { Journal } from '../journal/journal.js';
import { readStat } from '../backends/process/process-tree.js';
import { census, serveDir, startServe, type ServeProcess, type TakeoverMark } from './serve-host.js';
import { mainOf, readFlags } from './tool-cli.js';

export interface ServeTortureOptions {
  readonly iterations: number;
  readonly drives?: number;
  /** Clients driving concurrently (each its own connection). */
  readonly drivers?: number;
  readonly seed?: number;
  /** Lines each drive prints before the first kill (its pane's history: a takeover's cost must not grow with it). */
  readonly history?: number;
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  readonly log?: (line: string) => void;
  /** Each takeover's timeline (the standby's marks, the clients' reconnects), logged and reported. */
  readonly marks?: boolean;
  /** A CPU profile (`--cpu-prof`, 250 µs) of the last takeover's standby, written here when it exits. */
  readonly profileDir?: string;
}

export interface ServeTortureReport {
  readonly iterations: number;
  readonly drives: number;
  readonly seed: number;
  /** Per takeover: SIGKILL → the standby's ready line, → every drive took a key, → every drive's echo was seen. */
  readonly readyMs: readonly number[];
  readonly keyMs: readonly number[];
  readonly drivableMs: readonly number[];
  /** Per takeover: the standby's own CPU (utime + stime, /proc, 10 ms ticks) from the SIGKILL to every drive's echo. */
  readonly standbyCpuMs: readonly number[];
  readonly ops: number;
  /** Calls that failed because their host died under them (HOST_LOST), by code. */
  readonly lostCalls: number;
  readonly waitTimeouts: number;
  /** A host started cold on the same drives after a clean stop: spawn → ready. */
  readonly coldStartMs: number;
  /** The same key-then-echo round on every drive of a steady host (no takeover): its own cost. */
  readonly steadyKeyMs: number;
  readonly steadyEchoMs: number;
  readonly violations: readonly string[];
  readonly totalMs: number;
  /** With `marks`: per takeover, each phase's ms after the SIGKILL. */
  readonly timelines?: readonly Timeline[];
}

/** A takeover's phases, ms after the SIGKILL (first and last where there are many). */
export type Timeline = Record<string, number>;

/** The phases of one takeover from the standby's marks and the clients' own times (wall ms). */
function timelineOf(marks: readonly TakeoverMark[], killedAt: number, client: Record<string, readonly number[]>): Timeline {
  const groups = new Map<string, number[]>();
  const add = (name: string, at: number): void => {
    const g = groups.get(name) ?? [];
    g.push(at - killedAt);
    groups.set(name, g);
  };
  for (const m of marks) {
    // `call:sendKeys:s3` → `call:sendKeys`; `reattached:s3` → `reattached`.
    const [kind, method] = m.name.split(':');
    add(kind === 'call' || kind === 'done' ? `${kind}:${method}` : (kind as string), m.wallMs);
  }
  for (const [name, times] of Object.entries(client)) for (const t of times) add(name, t);
  const t: Timeline = {};
  for (const [name, g] of groups) {
    if (g.length === 1) t[name] = g[0] as number;
    else {
      t[`${name}[0]`] = Math.min(...g);
      t[`${name}[-1]`] = Math.max(...g);
    }
  }
  return t;
}

function formatTimeline(t: Timeline): string {
  return Object.entries(t)
    .sort((a, b) => a[1] - b[1])
    .map(([k, v]) => `${k} ${v.toFixed(0)}`)
    .join('  ');
}

function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function leaseHolder(dataDir: string, drive: string): number | undefined {
  const j = Journal.open(dataDir);
  try {
    return j.lease(drive)?.holder?.pid;
  } finally {
    j.close();
  }
}

const wallNow = (): number => performance.timeOrigin + performance.now();
/** The clients' side of a takeover's timeline (wall ms), cleared before each SIGKILL when marking. */
const wallTimes = new Map<string, number[]>();

/**
 * Each client socket's `connect` (the kernel accepted it into the host's backlog), beside the
 * host's `accept` mark (its event loop took it): tells a late client from a host whose loop is
 * busy. Node publishes every client socket made (net.connect) on this channel; the clients of
 * this process are the only ones.
 */
let connectsMarked = false;
function markConnects(): void {
  if (connectsMarked) return;
  connectsMarked = true;
  subscribe('net.client.socket', (message) => {
    const socket = (message as { socket?: Socket }).socket;
    socket?.once('connect', () => void wallTimes.get('connect')?.push(wallNow()));
  });
}

/**
 * Every drive takes a key (C-u: also clears a line a cut-short submit left typed), then shows an
 * echo typed into it; when each step was done for all (performance.now()).
 */
async function driveEveryOne(owner: Client, names: readonly string[], tag: string, violations: string[]): Promise<{ keyAt: number; echoAt: number }> {
  await Promise.all(names.map((d) => owner.drive(d).sendKeys('C-u').then(() => void wallTimes.get('key')?.push(wallNow())).catch((err: unknown) => void violations.push(`${d}: took no key: ${(err as Error).message.slice(0, 200)}`))));
  const keyAt = performance.now();
  await Promise.all(
    names.map(async (d) => {
      try {
        await owner.drive(d).sendText(`echo ${tag}-$((6 * 7))`, { submit: true });
        wallTimes.get('sent')?.push(wallNow());
        const r = await owner.drive(d).wait({ forText: new RegExp(`^${tag}-42$`, 'm'), timeoutMs: 15_000 });
        wallTimes.get('echo')?.push(wallNow());
        if (r.outcome !== 'text') violations.push(`${d}: the echo typed was not seen (${r.outcome})`);
      } catch (err) {
        violations.push(`${d}: not drivable: ${(err as Error).message.slice(0, 200)}`);
      }
    }),
  );
  return { keyAt, echoAt: performance.now() };
}

export async function runServeTorture(opts: ServeTortureOptions): Promise<ServeTortureReport> {
  const started = performance.now();
  const n = opts.drives ?? 20;
  const log = opts.log ?? ((l: string) => console.log(l));
  const seed = opts.seed ?? (Date.now() & 0x7fffffff);
  const rand = prng(seed);
  const minDelay = opts.minDelayMs ?? 50;
  const maxDelay = opts.maxDelayMs ?? 600;
  const dir = serveDir(n + 1);
  const names = Array.from({ length: n }, (_, i) => `s${i}`);
  const violations: string[] = [];
  const readyMs: number[] = [];
  const keyMs: number[] = [];
  const drivableMs: number[] = [];
  const standbyCpuMs: number[] = [];
  /** A process's CPU so far, ms (clock ticks of 10 ms: USER_HZ is 100 on Linux). */
  const cpuMs = (pid: number): number => (readStat(pid)?.cpuTicks ?? Number.NaN) * 10;
  const clients: Client[] = [];
  /** Set from just before a SIGKILL until every drive's echo was seen: the drivers wait. */
  let hold: Promise<void> | undefined;
  let release: () => void = () => undefined;
  let ops = 0;
  let lostCalls = 0;
  /** Waits that ended without their echo (a send lost with its host shows up here). */
  let timeouts = 0;
  let coldStartMs = Number.NaN;
  let steadyKeyMs = Number.NaN;
  let steadyEchoMs = Number.NaN;
  let stop = false;
  let current: ServeProcess | undefined;
  let standby: ServeProcess | undefined;
  const serveOpts = { marks: opts.marks === true };
  const timelines: Timeline[] = [];
  log(`serve-torture: ${opts.iterations} takeovers, ${n} drives, seed ${seed}, data dir ${dir.dataDir}`);
  if (opts.marks) markConnects();
  try {
    current = startServe(dir, false, serveOpts);
    await current.ready;
    const owner = await Client.connect(dir.dataDir, { reconnectTimeoutMs: 30_000 });
    clients.push(owner);
    await Promise.all(names.map(async (name) => (await owner.create({ allowId: 'bash', name, args: ['--norc', '--noprofile'] })).wait({ forText: '$ ' })));
    if (opts.history) {
      const lines = opts.history;
      await Promise.all(
        names.map(async (name) => {
          await owner.drive(name).sendText(`seq 1 ${lines} | sed s/^/history-/`, { submit: true });
          await owner.drive(name).wait({ forText: new RegExp(`^history-${lines}$`, 'm'), timeoutMs: 15_000 });
        }),
      );
    }

    // The observer: every journal event of every drive, to check for gaps and repeats at the end.
    const observer = await Client.connect(dir.dataDir, { token: (await owner.mint({ classes: ['observe'] })).token, reconnectTimeoutMs: 30_000 });
    clients.push(observer);
    const seen = new Map<string, number[]>(names.map((d) => [d, []]));
    for (const d of names) observer.drive(d).on('journal', (e) => seen.get(d)?.push(e.seq));

    // Drivers: send a numbered echo to a random drive of their own and wait for it, until told to stop.
    // Never more drivers than drives: each driver types into drives of its own.
    const driverCount = Math.max(1, Math.min(opts.drivers ?? 2, names.length));
    const loops: Promise<void>[] = [];
    for (let k = 0; k < driverCount; k++) {
      const c = await Client.connect(dir.dataDir, { reconnectTimeoutMs: 30_000 });
      clients.push(c);
      loops.push(
        (async () => {
          let counter = k * 1_000_000;
          while (!stop) {
            if (hold) await hold;
            if (stop) break;
            // Each driver its own drives: two typing into one drive at once interleave their keys.
            const mine = names.filter((_, i) => i % driverCount === k);
            const d = c.drive(mine[Math.floor(rand() * mine.length)] as string);
            counter++;
            try {
              await d.sendText(`echo ${counter}`, { submit: true });
              const r = await d.wait({ forText: new RegExp(`^${counter}$`, 'm'), timeoutMs: 5000 });
              if (r.outcome === 'text') ops++;
              else timeouts++;
            } catch (err) {
              const code = (err as TmuxDriveError).code;
              if (code === 'HOST_LOST') lostCalls++;
              else if (!stop) violations.push(`driver ${k}: ${code ?? ''} ${(err as Error).message.slice(0, 200)}`);
            }
          }
        })(),
      );
    }

    // The baseline: the same round on a host that is not taking over (the drivers paused as in a takeover).
    hold = new Promise<void>((r) => {
      release = r;
    });
    await new Promise((r) => setTimeout(r, 300)); // the drivers' ops in flight finish
    const steadyStart = performance.now();
    const steadyRound = await driveEveryOne(owner, names, 'steady', violations);
    steadyKeyMs = steadyRound.keyAt - steadyStart;
    steadyEchoMs = steadyRound.echoAt - steadyStart;
    hold = undefined;
    release();
    log(`steady host: every drive took a key in ${steadyKeyMs.toFixed(0)} ms, showed its echo in ${steadyEchoMs.toFixed(0)} ms`);

    for (const c of clients) c.on('reconnected', () => void wallTimes.get('reconnected')?.push(wallNow()));
    for (let it = 1; it <= opts.iterations; it++) {
      const profiled = opts.profileDir !== undefined && it === opts.iterations;
      standby = startServe(dir, true, { ...serveOpts, ...(profiled ? { nodeArgs: ['--cpu-prof', '--cpu-prof-interval=250', `--cpu-prof-dir=${opts.profileDir}`] } : {}) });
      await standby.waiting;
      const delay = Math.round(minDelay + rand() * (maxDelay - minDelay));
      await new Promise((r) => setTimeout(r, delay));
      const back = new Promise<void>((r) => {
        const sub = owner.on('reconnected', () => {
          sub.dispose();
          r();
        });
      });
      hold = new Promise<void>((r) => {
        release = r;
      });
      wallTimes.clear();
      if (opts.marks) for (const k of ['connect', 'reconnected', 'key', 'sent', 'echo']) wallTimes.set(k, []);
      const cpuAtKill = cpuMs(standby.pid);
      const killedAt = wallNow();
      const t0 = performance.now();
      await (current as ServeProcess).kill('SIGKILL');
      const ready = await standby.ready;
      await back;
      const reconnectedAt = performance.now();
      const iterViolations: string[] = [];
      const round = await driveEveryOne(owner, names, `tk${it}`, iterViolations);
      const cpu = cpuMs(standby.pid) - cpuAtKill;
      standbyCpuMs.push(cpu);
      const keyed = round.keyAt - t0;
      const drivable = round.echoAt - t0;
      hold = undefined;
      release();
      readyMs.push(ready.at - t0);
      keyMs.push(keyed);
      drivableMs.push(drivable);
      current = standby;
      standby = undefined;
      if (ready.drives !== n) iterViolations.push(`the new host re-attached ${ready.drives} of ${n} drives`);
      for (const d of names) {
        const c = census(dir.dataDir, d);
        if (c.servers !== 1 || c.bashes !== 1 || c.controlClients !== 1) iterViolations.push(`${d}: ${c.servers} server(s), ${c.bashes} bash, ${c.controlClients} control client(s)`);
        const holder = leaseHolder(dir.dataDir, d);
        if (holder !== current.pid) iterViolations.push(`${d}: lease held by ${holder ?? 'nobody'}, not the new host ${current.pid}`);
      }
      for (const v of iterViolations) violations.push(`#${it}: ${v}`);
      log(`#${String(it).padStart(3)} kill +${String(delay).padStart(3)}ms  ready ${(ready.at - t0).toFixed(0)}ms  reconnected ${(reconnectedAt - t0).toFixed(0)}ms  key ${keyed.toFixed(0)}ms  echo ${drivable.toFixed(0)}ms  cpu ${cpu.toFixed(0)}ms  ops ${ops} lost ${lostCalls} timeouts ${timeouts}  ${iterViolations.length ? `VIOLATIONS ${iterViolations.length}` : 'ok'}`);
      for (const v of iterViolations) log(`      ! ${v}`);
      if (opts.marks) {
        await Promise.race([current.marksFlushed, new Promise((r) => setTimeout(r, 10_000))]);
        const t = timelineOf(current.marks(), killedAt, Object.fromEntries(wallTimes));
        timelines.push(t);
        log(`      timeline: ${formatTimeline(t)}`);
        // The profiled takeover's marks on the profile's clock: its window is lock → the last echo.
        if (opts.profileDir !== undefined && it === opts.iterations) writeFileSync(join(opts.profileDir, `marks-${current.pid}.json`), JSON.stringify({ killedAt, client: Object.fromEntries(wallTimes), marks: current.marks() }));
      }
    }

    stop = true;
    release();
    await Promise.all(loops);
    // Every stored journal event of every drive reached the observer once, in order.
    for (const d of names) {
      // Every stored event, page by page (a long run stores more than one page per drive).
      const stored: number[] = [];
      for (let page = await owner.drive(d).events({ limit: 1000 }); page.length > 0; page = await owner.drive(d).events({ afterSeq: stored.at(-1) as number, limit: 1000 })) {
        stored.push(...page.map((e) => e.seq));
        if (page.length < 1000) break;
      }
      const got = seen.get(d) ?? [];
      for (let wait = 0; wait < 50 && got.length < stored.length; wait++) await new Promise((r) => setTimeout(r, 100));
      if (got.join(',') !== stored.join(',')) violations.push(`${d}: the observer saw journal seqs ${got.length} [${got.slice(-5).join(',')}] vs stored ${stored.length} [${stored.slice(-5).join(',')}]`);
    }
    // The baseline: the same drives taken by a host started cold (node start, Driver.open, listen)
    // after a clean stop, against the standby that was already running when its host died.
    await (current as ServeProcess).kill('SIGTERM');
    const t0 = performance.now();
    current = startServe(dir, false);
    coldStartMs = (await current.ready).at - t0;
    for (const d of names) await owner.drive(d).kill();
  } finally {
    stop = true;
    release();
    for (const c of clients) await c.close();
    await standby?.kill();
    await current?.kill('SIGTERM');
    dir.remove();
  }
  const report: ServeTortureReport = { iterations: opts.iterations, drives: n, seed, readyMs, keyMs, drivableMs, standbyCpuMs, steadyKeyMs, steadyEchoMs, ops, lostCalls, waitTimeouts: timeouts, coldStartMs, violations, totalMs: performance.now() - started, ...(opts.marks ? { timelines } : {}) };
  if (timelines.length > 0) {
    const keys = [...new Set(timelines.flatMap((t) => Object.keys(t)))];
    const p50 = (k: string): number => {
      const v = timelines.map((t) => t[k]).filter((x): x is number => x !== undefined).sort((a, b) => a - b);
      return v[Math.floor(v.length / 2)] ?? Number.NaN;
    };
    log(`timeline p50 over ${timelines.length} takeovers: ${formatTimeline(Object.fromEntries(keys.map((k) => [k, p50(k)])))}`);
  }
  const sorted = [...drivableMs].sort((a, b) => a - b);
  log(
    `serve-torture: ${opts.iterations} SIGKILLs of the serving host, ${ops} driving ops, ${lostCalls} calls lost in flight, ${timeouts} waits timed out, ${violations.length} violations; ` +
      `drivable after takeover p50 ${sorted[Math.floor(sorted.length / 2)]?.toFixed(0) ?? '-'} ms, max ${sorted.at(-1)?.toFixed(0) ?? '-'} ms; ${(report.totalMs / 1000).toFixed(1)} s`,
  );
  return report;
}

function parseArgs(argv: readonly string[]): ServeTortureOptions {
  const f = readFlags(argv, { iterations: 'integer', drives: 'integer', drivers: 'integer', seed: 'integer', history: 'integer', marks: 'boolean', 'profile-dir': 'string' });
  return {
    iterations: f.iterations ?? 30,
    drives: f.drives ?? 20,
    drivers: f.drivers ?? 2,
    ...(f.seed === undefined ? {} : { seed: f.seed }),
    ...(f.history === undefined ? {} : { history: f.history }),
    ...(f.marks ? { marks: true } : {}),
    ...(f['profile-dir'] === undefined ? {} : { profileDir: f['profile-dir'] }),
  };
}

await mainOf(import.meta.url, () => runServeTorture(parseArgs(process.argv.slice(2))));
