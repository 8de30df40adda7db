/**
 * Crash torture: a host process drives K bash sessions and is killed with SIGKILL at a random
 * moment, over and over, on one data dir. After each kill a new host (this process) opens the data
 * dir and checks the durability invariants:
 *
 * - every drive the journal knows is either `live` (re-attached, mirror equal to tmux's grid) or
 *   `failed` with a reason; none is silently skipped (no lease left held by a dead host);
 * - every program exists exactly once: a live drive has one tmux server with one bash under it,
 *   a failed drive has no server at all (nothing relaunched, nothing orphaned);
 * - `journal.integrityCheck()` is `ok`;
 * - each drive's stored last seq never goes back, and no stored event is beyond it.
 *
 * Child hosts run the built library (dist/lib/index.js), as a daemon would:
 * `npm run build && node dist/tools/torture.js --iterations 100 [--sessions 3] [--seed N] [--keep]`.
 */
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { connect } from 'node:net';
import { Driver } from '../lib/index.js';
import { Journal, isRetiredSessionId } from '../journal/journal.js';
import { findProcesses, processTree } from '../backends/process/process-tree.js';
import { isStartServerArgv } from '../lib/control/tmux-commands.js';
import { mainOf, readFlags } from './tool-cli.js';

export interface TortureOptions {
  readonly iterations: number;
  /** K: sessions t0..t{K-1} (default 3). */
  readonly sessions?: number;
  /** Use (and keep) this data dir instead of a fresh temp dir. */
  readonly dataDir?: string;
  /** Keep the data dir (and leave nothing running either way). */
  readonly keep?: boolean;
  /** PRNG seed for the kill delays (default: time-based; printed in the report). */
  readonly seed?: number;
  readonly minDelayMs?: number;
  readonly maxDelayMs?: number;
  /**
   * Every Nth iteration (0: never; default 5), SIGKILL one drive's tmux server before the child
   * starts: the child must report it failed, and a later host recreates it (so kills also land in
   * create). Default 5.
   */
  readonly serverKillEvery?: number;
  /** One line per iteration (default: console.log). */
  readonly log?: (line: string) => void;
}

export interface IterationResult {
  readonly iteration: number;
  readonly delayMs: number;
  /** What the child was doing when it was killed: `open`, `create:tN`, `drive`, or `exited` (it died on its own). */
  readonly killedIn: string;
  /** The drive whose tmux server was SIGKILLed before this iteration's host started, if any. */
  readonly serverKilled?: string;
  /** Driving operations the child completed before the kill. */
  readonly ops: number;
  readonly live: number;
  readonly failed: readonly string[];
  readonly violations: readonly string[];
  readonly ms: number;
}

export interface TortureReport {
  readonly dataDir: string;
  readonly seed: number;
  readonly iterations: number;
  readonly sessions: number;
  readonly kills: number;
  /** Drives reported failed (name@iteration: reason). Not violations by themselves. */
  readonly failures: readonly string[];
  readonly violations: readonly string[];
  readonly results: readonly IterationResult[];
  readonly totalMs: number;
}

const CONSENT = { acknowledgedRisk: true as const, acknowledgedAt: '2026-11-30T00:00:00Z' };
const CONFIG = { allow: [{ id: 'bash', match: { path: '/bin/bash' }, env: { PS1: '$ ' }, consent: CONSENT }] };
const SIZES: readonly (readonly [number, number])[] = [[80, 24], [100, 30]];

/** The package root (holds package.json): tools/ in source, dist/tools/ when built. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'tmux-drive') return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error('torture: cannot find the tmux-drive package root');
    dir = up;
  }
}

/**
 * A private copy of dist/ for the child hosts, so that a rebuild of the working tree during a long
 * run (another tsc writing dist/ file by file) cannot hand a child half-old, half-new modules.
 * node_modules and profiles/ are linked, package.json gives the copy `"type": "module"`.
 */
function snapshotDist(root: string): string {
  const snap = mkdtempSync(join(tmpdir(), 'td-torture-dist-'));
  cpSync(join(root, 'dist'), join(snap, 'dist'), { recursive: true });
  writeFileSync(join(snap, 'package.json'), JSON.stringify({ name: 'tmux-drive-torture-snapshot', type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(snap, 'node_modules'));
  symlinkSync(join(root, 'profiles'), join(snap, 'profiles'));
  return snap;
}

/** mulberry32: reproducible kill delays for a given seed. */
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

/** Pids of live (non-zombie) processes whose command line contains `needle`. */
function processesMentioning(needle: string): number[] {
  return findProcesses((cmdline) => cmdline.includes(needle));
}

/** The tmux server processes of a socket (`tmux … start-server`), and the bash processes under them. */
function serverCensus(socket: string): { servers: number[]; bashes: number[] } {
  const servers = findProcesses((cmdline) => isStartServerArgv(cmdline.split('\0'), socket));
  const bashes = servers.flatMap((s) => processTree(s).filter((p) => p.comm === 'bash').map((p) => p.pid));
  return { servers, bashes };
}

/**
 * The child host: opens the data dir, makes sure t0..t{K-1} exist, then drives them until killed.
 * Phase lines on stdout (`P <phase>`, `OPS <n>`) tell the parent where the kill landed.
 */
function childScript(dist: string, dataDir: string, k: number): string {
  return `
    import { Driver } from ${JSON.stringify(dist)};
    const say = (l) => process.stdout.write(l + '\\n');
    say('P open');
    const d = await Driver.open({ dataDir: ${JSON.stringify(dataDir)}, config: ${JSON.stringify(CONFIG)} });
    say('STARTED');
    const sessions = [];
    for (let i = 0; i < ${k}; i++) {
      const name = 't' + i;
      const info = d.list().find((x) => x.id === name);
      if (info && info.state === 'live') { sessions.push(d.get(name)); continue; }
      // A drive this host found failed stays in its list under that name (a later host recreates it).
      if (info) continue;
      say('P create:' + name);
      try {
        const s = await d.create({ allowId: 'bash', args: ['--norc', '--noprofile'], name, cols: 80, rows: 24 });
        sessions.push(s);
      } catch (e) {
        process.stderr.write('create ' + name + ' failed: ' + (e && e.code) + ' ' + (e && e.message) + '\\n');
      }
    }
    say('P drive');
    const sizes = ${JSON.stringify(SIZES)};
    let counter = 0;
    for (;;) {
      if (sessions.length === 0) { await new Promise((r) => setTimeout(r, 50)); continue; }
      const s = sessions[counter % sessions.length];
      counter++;
      switch (counter % 4) {
        case 0: case 1:
          await s.sendText('echo ' + counter, { submit: true });
          await s.wait({ forText: new RegExp('^' + counter + '$', 'm'), timeoutMs: 2000 });
          break;
        case 2: {
          const [c, r] = sizes[(counter >> 2) % 2];
          await s.resize(c, r);
          break;
        }
        default:
          await s.sendKeys(counter % 8 === 3 ? ['C-c'] : ['Enter']);
          await s.wait({ forIdleMs: 10, timeoutMs: 500 });
      }
      say('OPS ' + counter);
    }
  `;
}

interface ChildRun {
  readonly killedIn: string;
  readonly ops: number;
  readonly violations: string[];
}

/** Runs one child host and kills it with SIGKILL `delayMs` after it reports STARTED. */
function runChild(dist: string, dataDir: string, k: number, delayMs: number): Promise<ChildRun> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', childScript(dist, dataDir, k)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let phase = 'spawn';
    let ops = 0;
    let killedByUs = false;
    let pending = '';
    let stderr = '';
    let timer: NodeJS.Timeout | undefined;
    // A child that never reports STARTED is a finding too: give up after 20 s.
    const watchdog = setTimeout(() => {
      stderr += '\n[torture] child never reported STARTED within 20 s';
      killedByUs = true;
      child.kill('SIGKILL');
    }, 20_000);
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        if (line.startsWith('P ')) phase = line.slice(2);
        else if (line.startsWith('OPS ')) ops = Number(line.slice(4));
        else if (line === 'STARTED' && timer === undefined) {
          clearTimeout(watchdog);
          timer = setTimeout(() => {
            killedByUs = true;
            child.kill('SIGKILL');
          }, delayMs);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => {
      if (stderr.length < 4000) stderr += chunk.toString();
    });
    child.on('exit', (code, signal) => {
      clearTimeout(watchdog);
      if (timer) clearTimeout(timer);
      const violations: string[] = [];
      if (!killedByUs || signal !== 'SIGKILL') violations.push(`child host ended on its own (code ${code}, signal ${signal}) in phase ${phase}: ${stderr.trim().slice(0, 500)}`);
      else if (stderr.trim()) violations.push(`child host reported errors before the kill (phase ${phase}): ${stderr.trim().slice(0, 500)}`);
      done({ killedIn: killedByUs ? phase : 'exited', ops, violations });
    });
  });
}

interface Verified {
  readonly live: number;
  readonly failed: string[];
  readonly violations: string[];
}

/** A new host on the data dir: re-attach, compare screens, count programs, then check the journal file. */
async function verify(dataDir: string, lastSeqs: Map<string, number>, reported: Set<string>): Promise<Verified> {
  const violations: string[] = [];
  const failed: string[] = [];
  let live = 0;
  const driver = await Driver.open({ dataDir, config: CONFIG });
  const infos = driver.list();
  try {
    for (const info of infos) {
      const socket = join(dataDir, 'tmux', `${info.id}.sock`);
      const census = serverCensus(socket);
      if (info.state === 'live') {
        live++;
        const s = driver.get(info.id);
        // Let output already in flight from the killed host land before comparing.
        await s.wait({ forIdleMs: 100, timeoutMs: 2000 });
        const f = await s.fidelity();
        if (!f.equal) violations.push(`${info.id}: re-attached mirror differs from tmux's grid (${f.mismatchCount} cells, cursor ${f.cursorMatches ? 'ok' : 'differs'})`);
        if (census.servers.length !== 1) violations.push(`${info.id}: live with ${census.servers.length} tmux servers (pids ${census.servers.join(',')})`);
        if (census.bashes.length !== 1) violations.push(`${info.id}: live with ${census.bashes.length} bash processes (pids ${census.bashes.join(',')})`);
      } else if (info.state === 'failed') {
        if (!info.reason) violations.push(`${info.id}: failed without a reason`);
        failed.push(`${info.id}:${info.reason ?? '?'}`);
        if (census.servers.length !== 0 || census.bashes.length !== 0) {
          // Look again a second later: a server still starting when the new host probed its socket.
          await new Promise((r) => setTimeout(r, 1000));
          const later = serverCensus(socket);
          const answers = await socketAnswersNow(socket);
          violations.push(
            `${info.id}: failed (${info.reason}) but ${census.servers.length} server(s) / ${census.bashes.length} bash still run (pids ${[...census.servers, ...census.bashes].join(',')}); ` +
              `1 s later: ${later.servers.length} server(s) / ${later.bashes.length} bash, socket ${answers ? 'answers' : 'does not answer'}`,
          );
        }
      } else {
        violations.push(`${info.id}: unexpected state ${info.state}${info.exit ? ` (exit ${JSON.stringify(info.exit)})` : ''}`);
      }
    }
  } finally {
    await driver.close();
  }

  const journal = Journal.open(dataDir);
  try {
    const integrity = journal.integrityCheck();
    if (integrity !== 'ok') violations.push(`journal integrity: ${integrity}`);
    const rows = journal.listSessions();
    const listed = new Set(infos.map((i) => i.id));
    for (const rec of rows) {
      // A non-terminal drive the new host did not take: a lease left held by a dead host.
      if ((rec.state === 'live' || rec.state === 'detached') && !listed.has(rec.id)) violations.push(`${rec.id}: journal says ${rec.state} but the new host did not reconcile it`);
      // Each failure is reported once (the row stays failed until a later host recreates the name,
      // which appends a 'create' event, so id@lastSeq names one incarnation).
      if (rec.state === 'failed' && listed.has(rec.id)) reported.add(`${rec.id}@${rec.lastSeq}`);
      if (rec.state === 'failed' && !listed.has(rec.id)) {
        if (!rec.failureReason) violations.push(`${rec.id}: failed in the journal without a reason`);
        const census = serverCensus(join(dataDir, 'tmux', `${rec.id}.sock`));
        if (census.servers.length !== 0) violations.push(`${rec.id}: failed (${rec.failureReason}) but ${census.servers.length} server(s) / ${census.bashes.length} bash still run`);
        const key = `${rec.id}@${rec.lastSeq}`;
        if (!reported.has(key)) failed.push(`${rec.id}:${rec.failureReason ?? '?'}`);
        reported.add(key);
      }
      if (rec.state === 'exited') violations.push(`${rec.id}: journal says exited (nothing here ends a bash)`);
      const prev = lastSeqs.get(rec.id);
      // A name recreated after its drive failed is a new drive: the old row was retired (moved to
      // `r<sid>-<name>` with its seqs) and the new one counts from 1.
      const retiredWithPrev = rows.some((r) => isRetiredSessionId(r.id) && r.id.slice(r.id.indexOf('-') + 1).replace(/-+$/, '') === rec.id && r.lastSeq === prev);
      if (prev !== undefined && rec.lastSeq < prev && !retiredWithPrev) violations.push(`${rec.id}: last seq went back from ${prev} to ${rec.lastSeq}`);
      const events = journal.events(rec.id, { limit: 1_000_000 });
      for (let i = 1; i < events.length; i++) {
        if (events[i]!.seq <= events[i - 1]!.seq) violations.push(`${rec.id}: stored event seqs out of order (${events[i - 1]!.seq} then ${events[i]!.seq})`);
      }
      const maxStored = events.at(-1)?.seq ?? 0;
      if (maxStored > rec.lastSeq) violations.push(`${rec.id}: stored event seq ${maxStored} beyond the row's last seq ${rec.lastSeq}`);
      lastSeqs.set(rec.id, rec.lastSeq);
    }
    for (const id of lastSeqs.keys()) if (!rows.some((r) => r.id === id)) violations.push(`${id}: session row disappeared from the journal`);
    // Every server under the data dir belongs to a drive the journal knows.
    for (const f of readdirSync(join(dataDir, 'tmux')).filter((n) => n.endsWith('.sock'))) {
      const id = f.slice(0, -'.sock'.length);
      if (!rows.some((r) => r.id === id) && serverCensus(join(dataDir, 'tmux', f)).servers.length > 0) violations.push(`${id}: a tmux server runs that the journal does not know`);
    }
  } finally {
    journal.close();
  }
  return { live, failed, violations };
}

/** Whether something accepts connections on the socket now. */
function socketAnswersNow(path: string): Promise<boolean> {
  return new Promise((ok) => {
    const sock = connect(path);
    sock.once('connect', () => {
      sock.destroy();
      ok(true);
    });
    sock.once('error', () => ok(false));
  });
}

/** Waits until a killed server and its programs are gone (SIGHUP reaches bash when the pty closes). */
async function waitGone(socket: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (processesMentioning(socket).length === 0) return;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Ends every drive left on the data dir (live ones through a driver, stray servers by signal). */
async function cleanup(dataDir: string): Promise<string[]> {
  const violations: string[] = [];
  const driver = await Driver.open({ dataDir, config: CONFIG });
  try {
    for (const info of driver.list()) if (info.state === 'live') await driver.get(info.id).kill();
  } finally {
    await driver.close();
  }
  const left = processesMentioning(dataDir);
  if (left.length > 0) {
    violations.push(`processes still mention the data dir after killing every drive: ${left.join(',')}`);
    for (const pid of left) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
  return violations;
}

export async function runTorture(opts: TortureOptions): Promise<TortureReport> {
  const started = Date.now();
  const k = opts.sessions ?? 3;
  const log = opts.log ?? ((l: string) => console.log(l));
  const seed = opts.seed ?? (Date.now() & 0x7fffffff);
  const rand = prng(seed);
  const minDelay = opts.minDelayMs ?? 50;
  const maxDelay = opts.maxDelayMs ?? 800;
  const serverKillEvery = opts.serverKillEvery ?? 5;
  const root = packageRoot();
  if (!existsSync(join(root, 'dist', 'lib', 'index.js'))) throw new Error(`torture: ${root}/dist/lib/index.js is missing; build first (npx tsc -p tsconfig.json)`);
  const snap = snapshotDist(root);
  const dist = join(snap, 'dist', 'lib', 'index.js');
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ? resolve(opts.dataDir) : mkdtempSync(join(tmpdir(), 'td-torture-'));
  const results: IterationResult[] = [];
  const violations: string[] = [];
  const failures: string[] = [];
  const lastSeqs = new Map<string, number>();
  const reported = new Set<string>();
  let kills = 0;
  log(`torture: ${opts.iterations} iterations, ${k} sessions, seed ${seed}, data dir ${dataDir}`);
  try {
    for (let it = 1; it <= opts.iterations; it++) {
      const t0 = Date.now();
      const delayMs = Math.round(minDelay + rand() * (maxDelay - minDelay));
      let serverKilled: string | undefined;
      if (serverKillEvery > 0 && it % serverKillEvery === 0) {
        const candidates = [...Array(k).keys()].map((i) => `t${i}`).filter((id) => serverCensus(join(dataDir, 'tmux', `${id}.sock`)).servers.length === 1);
        const victim = candidates[Math.floor(rand() * candidates.length)];
        if (victim !== undefined) {
          for (const pid of serverCensus(join(dataDir, 'tmux', `${victim}.sock`)).servers) process.kill(pid, 'SIGKILL');
          serverKilled = victim;
          await waitGone(join(dataDir, 'tmux', `${victim}.sock`));
        }
      }
      const child = await runChild(dist, dataDir, k, delayMs);
      if (child.killedIn !== 'exited') kills++;
      const v = await verify(dataDir, lastSeqs, reported);
      const iterViolations = [...child.violations, ...v.violations];
      const r: IterationResult = { iteration: it, delayMs, killedIn: child.killedIn, ...(serverKilled ? { serverKilled } : {}), ops: child.ops, live: v.live, failed: v.failed, violations: iterViolations, ms: Date.now() - t0 };
      results.push(r);
      for (const f of v.failed) failures.push(`${f}@${it}`);
      for (const x of iterViolations) violations.push(`#${it}: ${x}`);
      log(
        `#${String(it).padStart(3)} kill +${String(delayMs).padStart(3)}ms in ${child.killedIn.padEnd(9)}${serverKilled ? ` (server of ${serverKilled} killed first)` : ''} ops ${String(child.ops).padStart(4)}  live ${v.live}` +
          `${v.failed.length ? `  failed ${v.failed.join(' ')}` : ''}  ${iterViolations.length ? `VIOLATIONS ${iterViolations.length}` : 'ok'}  ${r.ms}ms`,
      );
      for (const x of iterViolations) log(`      ! ${x}`);
    }
  } finally {
    violations.push(...(await cleanup(dataDir)));
    if (ownDir && !opts.keep) rmSync(dataDir, { recursive: true, force: true });
    rmSync(snap, { recursive: true, force: true });
  }
  const report: TortureReport = { dataDir, seed, iterations: opts.iterations, sessions: k, kills, failures, violations, results, totalMs: Date.now() - started };
  const ms = results.map((r) => r.ms).sort((a, b) => a - b);
  const ops = results.reduce((n, r) => n + r.ops, 0);
  log(
    `torture: ${report.iterations} iterations, ${kills} SIGKILLs, ${ops} driving ops, ${failures.length} drives reported failed, ` +
      `${violations.length} violations; ${(report.totalMs / 1000).toFixed(1)} s total, iteration median ${ms[Math.floor(ms.length / 2)] ?? 0} ms, max ${ms.at(-1) ?? 0} ms` +
      `${opts.keep || !ownDir ? ` (data dir kept: ${dataDir})` : ''}`,
  );
  return report;
}

function parseArgs(argv: readonly string[]): TortureOptions {
  const f = readFlags(argv, {
    iterations: 'integer',
    sessions: 'integer',
    seed: 'integer',
    'server-kill-every': 'integer',
    'min-delay': 'integer',
    'max-delay': 'integer',
    'data-dir': 'string',
    keep: 'boolean',
  });
  return {
    iterations: f.iterations ?? 30,
    sessions: f.sessions ?? 3,
    keep: f.keep ?? false,
    serverKillEvery: f['server-kill-every'] ?? 5,
    minDelayMs: f['min-delay'] ?? 50,
    maxDelayMs: f['max-delay'] ?? 800,
    ...(f.seed === undefined ? {} : { seed: f.seed }),
    ...(f['data-dir'] === undefined ? {} : { dataDir: f['data-dir'] }),
  };
}

await mainOf(import.meta.url, () => runTorture(parseArgs(process.argv.slice(2))));
