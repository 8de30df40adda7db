/**
 * The keystroke path key by key, library against tmux's own round trip, for judging a cut.
 *
 * `node dist/bench/key-stages.js [--keys N] [--stages]`: one 'x' at a time into bash at '$ ', the
 * library's drive and a bare control client on a server of its own (the control-mode floor of
 * bench/echo-latency.ts) paired key by key in one process, the order alternating, 2 ms between
 * keys, C-u every 50. Whole bench runs swing with the machine's load (1.33–1.81x on one build);
 * paired keys meet the same load, so the ratio of their medians is what a cut is judged on.
 *
 * Prints call → echo p50/p90 for each side, their ratio, and this process's CPU per key (send →
 * echo seen). With `--stages`, wrappers around the methods on the way stamp each key
 * (`performance.now()`), and the stages between the stamps print as p50/p90 µs of each key's
 * difference. The wrappers cost a few µs each and change what they measure: stages are for
 * finding where time goes, the totals without `--stages` for judging.
 */
import { Socket } from 'node:net';
import { parseArgs } from 'node:util';
import { BaselineServer } from './baseline-server.js';
import { BenchDriver } from './bench-driver.js';
import { percentiles } from './percentiles.js';
import { sleep } from './sleep.js';
import { ControlParser, type ControlEvent } from '../lib/control/parser.js';
import { CommandQueue } from '../lib/control/command-queue.js';
import { encodeSendKeys, encodeSendText } from '../lib/control/tmux-commands.js';
import { LeaseBook } from '../lib/driver/lease-book.js';
import { Mirror } from '../lib/emulator/mirror.js';
import type { Session } from '../lib/index.js';
import { InputGate } from '../lib/session/input-gate.js';
import { Session as SessionClass } from '../lib/session/session.js';
import { Transcript } from '../lib/session/transcript.js';
import { WaitEngine } from '../lib/session/wait.js';
import { AuditLog } from '../journal/audit-log.js';
import type { ControlClient } from '../backends/tmux/control-client.js';

const COLS = 120;
const ROWS = 40;
const BLOCK_KEYS = 50;
const WARMUP_KEYS = 20;
const GAP_MS = 2;
const ECHO_TIMEOUT_MS = 3000;
const X = 0x78;

/** The stamps of the key in flight, by point name (a point may be passed several times). */
type Stamps = Map<string, number[]>;
let current: Stamps | undefined;

function stamp(point: string): void {
  if (!current) return;
  const at = performance.now();
  const list = current.get(point);
  if (list) list.push(at);
  else current.set(point, [at]);
}

/** Stamps `<name>0` before and `<name>1` after every call of `proto[method]`. */
function wrap(proto: object, method: string, name: string, when: (self: unknown) => boolean = () => true): void {
  const target = proto as Record<string, unknown>;
  const original = target[method] as (...args: unknown[]) => unknown;
  target[method] = function (this: unknown, ...args: unknown[]): unknown {
    const on = when(this);
    if (on) stamp(`${name}0`);
    try {
      return original.apply(this, args);
    } finally {
      if (on) stamp(`${name}1`);
    }
  };
}

function installStamps(): void {
  wrap(InputGate.prototype, 'deliver', 'gate');
  wrap(LeaseBook.prototype, 'check', 'lease');
  wrap(Socket.prototype, 'write', 'write');
  wrap(AuditLog.prototype, 'record', 'audit');
  wrap(WaitEngine.prototype, 'markInput', 'mark');
  wrap(WaitEngine.prototype, 'takeBaseline', 'base', (self) => (self as { baselineDue: boolean }).baselineDue);
  wrap(SessionClass.prototype, 'sendText', 'turn');
  wrap(ControlParser.prototype, 'push', 'chunk');
  wrap(CommandQueue.prototype, 'onReply', 'reply');
  wrap(Mirror.prototype, 'write', 'mirror');
  wrap(Transcript.prototype, 'append', 'transcript');
}

const first = (s: Stamps, point: string, after = -Infinity): number | undefined => s.get(point)?.find((t) => t >= after);
function last(s: Stamps, point: string, before = Infinity): number | undefined {
  const list = s.get(point) ?? [];
  for (let i = list.length - 1; i >= 0; i--) if ((list[i] as number) <= before) return list[i];
  return undefined;
}

/** A stage: its name and its length in one key's stamps (undefined when a stamp is missing). */
type Stage = readonly [string, (s: Stamps) => number | undefined];
const span = (from: number | undefined, to: number | undefined): number | undefined => (from === undefined || to === undefined ? undefined : to - from);

const LIBRARY_STAGES: readonly Stage[] = [
  ['call → input gate', (s) => span(first(s, 'call'), first(s, 'gate0'))],
  ['gate → lease check begins', (s) => span(first(s, 'gate0'), first(s, 'lease0'))],
  ['lease check', (s) => span(first(s, 'lease0'), first(s, 'lease1'))],
  ['lease passed → pipe write begins', (s) => span(first(s, 'lease1'), first(s, 'write0'))],
  ['call → pipe write begins', (s) => span(first(s, 'call'), first(s, 'write0'))],
  ['the pipe write', (s) => span(first(s, 'write0'), first(s, 'write1'))],
  ['  audit record', (s) => span(first(s, 'audit0'), first(s, 'audit1'))],
  ['  input mark', (s) => span(first(s, 'mark0'), first(s, 'mark1'))],
  ['  input transcribed', (s) => span(first(s, 'transcript0', first(s, 'write1')), first(s, 'transcript1', first(s, 'write1')))],
  ['after the write, same turn', (s) => span(first(s, 'write1'), first(s, 'turn1'))],
  ['write → first chunk read', (s) => span(first(s, 'write1'), first(s, 'chunk0', first(s, 'write1')))],
  ['write → reply parsed', (s) => span(first(s, 'write1'), first(s, 'reply0', first(s, 'write1')))],
  ['reply → caller settled', (s) => span(first(s, 'reply0', first(s, 'write1')), first(s, 'settled'))],
  ["echo's chunk → echo event", (s) => span(last(s, 'chunk0', first(s, 'echo')), first(s, 'echo'))],
  ['  chunk → output transcribed', (s) => span(last(s, 'chunk0', first(s, 'echo')), last(s, 'transcript0', first(s, 'echo')))],
  ['  baseline', (s) => span(last(s, 'base0', first(s, 'echo')), last(s, 'base1', first(s, 'echo')))],
  ['  mirror write', (s) => span(last(s, 'mirror0', first(s, 'echo')), last(s, 'mirror1', first(s, 'echo')))],
  ['  mirror written → echo event', (s) => span(last(s, 'mirror1', first(s, 'echo')), first(s, 'echo'))],
];
const FLOOR_STAGES: readonly Stage[] = [
  ['call → pipe write begins', (s) => span(first(s, 'call'), first(s, 'write0'))],
  ['the pipe write', (s) => span(first(s, 'write0'), first(s, 'write1'))],
  ['write → first chunk read', (s) => span(first(s, 'write1'), first(s, 'chunk0', first(s, 'write1')))],
  ['write → reply parsed', (s) => span(first(s, 'write1'), first(s, 'reply0', first(s, 'write1')))],
  ['reply → caller settled', (s) => span(first(s, 'reply0', first(s, 'write1')), first(s, 'settled'))],
  ["echo's chunk → echo event", (s) => span(last(s, 'chunk0', first(s, 'echo')), first(s, 'echo'))],
];

const cpuNow = (): number => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

interface Key {
  readonly us: number;
  readonly cpuUs: number;
  readonly stamps: Stamps;
}

function withTimeout<T>(p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`${what}: no echo within ${ECHO_TIMEOUT_MS} ms`)), ECHO_TIMEOUT_MS)));
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** When the echo was seen: taken as its event arrives, before the check that recognises it. */
interface Seen {
  readonly at: number;
  readonly cpu: number;
}
const seenNow = (): Seen => ({ at: performance.now(), cpu: cpuNow() });

/** Times one key: `send` starts it and resolves when its call settles; `echo` resolves at the echo. */
async function timeKey(send: () => Promise<unknown>, echo: Promise<Seen>, what: string): Promise<Key> {
  const stamps: Stamps = new Map();
  current = stamps;
  const cpu0 = cpuNow();
  const t0 = performance.now();
  stamp('call');
  const sent = send().then(() => stamp('settled'));
  const seen = await withTimeout(echo, what);
  stamps.set('echo', [seen.at]);
  await sent;
  current = undefined;
  return { us: (seen.at - t0) * 1000, cpuUs: seen.cpu - cpu0, stamps };
}

/** The library's key: the echo is seen at the first `output` event after which the cursor row shows it. */
function libraryKey(s: Session, i: number): Promise<Key> {
  const expected = `$ ${'x'.repeat(i)}`;
  const echo = new Promise<Seen>((resolve) => {
    const look = (): void => {
      const seen = seenNow();
      if (s.cursorLine().text !== expected) return;
      sub.dispose();
      resolve(seen);
    };
    const sub = s.on('output', look);
  });
  return timeKey(() => s.sendText('x'), echo, 'library');
}

class Floor {
  client: ControlClient | undefined;
  private waiter: ((seen: Seen) => void) | undefined;
  constructor(readonly server: BaselineServer) {}

  readonly onEvent = (event: ControlEvent): void => {
    if (event.kind !== 'output' || event.pane !== this.server.pane || !this.waiter || !event.data.includes(X)) return;
    const w = this.waiter;
    this.waiter = undefined;
    w(seenNow());
  };

  key(): Promise<Key> {
    const client = this.client as ControlClient;
    const echo = new Promise<Seen>((resolve) => (this.waiter = resolve));
    return timeKey(() => client.batch(encodeSendText(this.server.pane, 'x')), echo, 'floor');
  }
}

async function block(s: Session, floor: Floor, keys: number, lib: Key[], raw: Key[]): Promise<void> {
  for (let i = 1; i <= keys; i++) {
    const order = i % 2 === 1 ? ['lib', 'floor'] : ['floor', 'lib'];
    for (const side of order) {
      if (side === 'lib') lib.push(await libraryKey(s, i));
      else raw.push(await floor.key());
      await sleep(GAP_MS);
    }
  }
  await s.sendKeys('C-u');
  await s.wait({ forIdleMs: 30 });
  if (s.cursorLine().text !== '$') throw new Error(`library: the line did not clear (${JSON.stringify(s.cursorLine().text)})`);
  await (floor.client as ControlClient).command(encodeSendKeys(floor.server.pane, ['C-u']));
  await sleep(30);
}

const fmt = (v: number): string => v.toFixed(0).padStart(6);

function stageRows(stages: readonly Stage[], keys: readonly Key[]): Map<string, string> {
  const rows = new Map<string, string>();
  for (const [name, of] of stages) {
    const values = keys.map((k) => of(k.stamps)).filter((v): v is number => v !== undefined && v >= 0).map((ms) => ms * 1000);
    if (values.length === 0) continue;
    const p = percentiles(values);
    rows.set(name, `${fmt(p.p50)} ${fmt(p.p90)}  (${values.length})`);
  }
  return rows;
}

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { keys: { type: 'string', default: '600' }, stages: { type: 'boolean', default: false } } });
  const wanted = Math.max(BLOCK_KEYS, Number.parseInt(values.keys, 10) || 600);
  if (values.stages) installStamps();
  const bench = await BenchDriver.open();
  const floorServer = await BaselineServer.start({ cols: COLS, rows: ROWS });
  try {
    const session = await bench.bash('keys', COLS, ROWS);
    const floor = new Floor(floorServer);
    floor.client = await floorServer.attachControl(floor.onEvent);
    await block(session, floor, WARMUP_KEYS, [], []);
    const lib: Key[] = [];
    const raw: Key[] = [];
    while (lib.length < wanted) await block(session, floor, BLOCK_KEYS, lib, raw);
    const L = percentiles(lib.map((k) => k.us));
    const F = percentiles(raw.map((k) => k.us));
    const LC = percentiles(lib.map((k) => k.cpuUs));
    const FC = percentiles(raw.map((k) => k.cpuUs));
    const load = (await import('node:os')).loadavg()[0]?.toFixed(1) ?? '?';
    console.log(`${lib.length} keys each side, paired, load ${load}${values.stages ? ' (stages stamped: totals include the stamps)' : ''}`);
    console.log(`                                   library p50    p90 |   floor p50    p90`);
    console.log(`call → echo seen (µs)                   ${fmt(L.p50)} ${fmt(L.p90)} |      ${fmt(F.p50)} ${fmt(F.p90)}`);
    console.log(`CPU per key (µs)                        ${fmt(LC.p50)} ${fmt(LC.p90)} |      ${fmt(FC.p50)} ${fmt(FC.p90)}`);
    console.log(`ratio library / floor: p50 ${(L.p50 / F.p50).toFixed(2)}x, p90 ${(L.p90 / F.p90).toFixed(2)}x, p99 ${(L.p99 / F.p99).toFixed(2)}x; CPU p50 ${(LC.p50 / FC.p50).toFixed(2)}x`);
    if (values.stages) {
      const l = stageRows(LIBRARY_STAGES, lib);
      const f = stageRows(FLOOR_STAGES, raw);
      console.log('\nstage (µs, p50 p90 (keys))                library              floor');
      for (const [name] of LIBRARY_STAGES) console.log(`${name.padEnd(36)} ${(l.get(name) ?? '-').padEnd(20)} ${f.get(name) ?? ''}`);
    }
  } finally {
    await floorServer.close();
    await bench.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
