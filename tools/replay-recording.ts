/**
 * Replays a window of a recording (test/fixtures/cli-recordings) into a REAL tmux pane: a Driver
 * drive runs test/fixtures/replay/replay.py under a python3 allow entry with the recorded
 * program's profile; the script writes the recorded bytes on the recorded clock and, between
 * writes, reads its terminal where a person saw the program waiting for input, burns CPU where
 * the recorded tree was CPU-busy, and otherwise sleeps without reading. The inputs the recorder
 * sent are sent again at their times (the replay reads and drops them), so waits and echoes see
 * what they saw live. Meanwhile `status()` is sampled every SAMPLE_MS and the `state`,
 * `attention` and `answered` events are kept; `compareWithLabels` sets them against the labels.
 *
 *   npm run build && node dist/tools/replay-recording.js <recording> [--from s | --situation name]
 *     [--seconds n] [--auto-answer none|safe-only|all] [--gate-keys timeoutS]
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Driver, type Session, type WaitResult } from '../lib/index.js';
import type { AutoAnswerPolicy } from '../lib/perceive/auto-answer.js';
import type { SessionState } from '../lib/perceive/classify-screen.js';
import type { Attention } from '../lib/session/session.js';
import { packageRoot } from './record/capture.js';
import { judgeAgainstLabels, loadRecording, planWindow, type Agreement, type ObservedPoint, type Recording, type TimedLabel } from './record/recording-format.js';

export type { Agreement };
import type { Situation } from './fixture-format.js';

/** The replay's first write: changes nothing on the screen, marks time 0 (SGR reset). */
const MARKER = new Uint8Array([0x1b, 0x5b, 0x30, 0x6d]);
/** Without any output this long after create(), the replay's clock is taken to start at create(). */
const NO_OUTPUT_START_MS = 1500;
/** How often the harness samples status() during a replay (a test's observer, not the library). */
const SAMPLE_MS = 50;
/** Samples this soon after a label change are not judged (see judgeAgainstLabels). */
const AFTER_CHANGE_S = 0.6;
/** State events come when output has been quiet 250 ms (the session's quiet watch): a little more slack after a change. */
const EVENTS_AFTER_CHANGE_S = 1.0;

export interface ReplayWindowSpec {
  readonly id: string;
  readonly recording: string;
  /** The window starts where this situation is first labelled (the `occurrence`-th time, from 0)… */
  readonly situation?: Situation;
  /** …whose `why` contains this (when the situation occurs more than once)… */
  readonly whyIncludes?: string;
  readonly occurrence?: number;
  /** …or at this recording second. */
  readonly from?: number;
  /** Window length in recording seconds (quiet gaps shortened to `maxGapS`). Default 4. */
  readonly seconds?: number;
  readonly maxGapS?: number;
  /** The drive's auto-answer policy (default safe-only, as the config's default). */
  readonly autoAnswer?: AutoAnswerPolicy;
  /**
   * The recorded keys become gates of this many seconds: the replay waits there for a key (the
   * session's own auto-answer) instead of the harness sending it. Labels after a gate move by the
   * wait, so only the event checks (attention, answers) are meaningful in such a window.
   */
  readonly gateKeysS?: number;
  /** Wait for this text right after the input step named `afterStep` is replayed (the echo case). */
  readonly waitForText?: { readonly afterStep: string; readonly text: string };
  /** Ask `wait({ forIdleMs })` this long into the window and compare it with `status()` (one notion of settled). */
  readonly idleVersusStatus?: { readonly atS: number; readonly forIdleMs: number };
  /**
   * A caller that waits for idle from the window's start (or `atS` into it) and then types `text`:
   * when did it type, and what did the labels say the program was doing then.
   */
  readonly idleThenType?: {
    readonly atS?: number;
    readonly forIdleMs: number;
    readonly text: string;
    /** `idle` (default): the window reaches a screen that waits for input; `no-idle`: it never does. */
    readonly expect?: 'idle' | 'no-idle';
  };
}

export interface ReplayObservation {
  readonly spec: ReplayWindowSpec;
  /** Labels on the replay's clock (seconds since its first write). */
  readonly labels: readonly TimedLabel[];
  /** The window on the replay's clock: judged from `from` (the target label; the lead-in before it is not judged) to `to`. */
  readonly from: number;
  readonly to: number;
  readonly status: readonly ObservedPoint[];
  readonly events: readonly ObservedPoint[];
  readonly attention: readonly (readonly [t: number, attention: Attention])[];
  readonly answered: readonly (readonly [t: number, keys: string])[];
  /** The session's own keys (auto-answers) as its transcript has them: when sent, which. */
  readonly autoKeys: readonly (readonly [t: number, keys: string])[];
  /** When the harness's listeners were attached (create() had returned), on the replay's clock. */
  readonly subscribedAt: number;
  readonly waitForText?: WaitResult['outcome'];
  readonly idleVersusStatus?: { readonly wait: WaitResult['outcome']; readonly producing: boolean; readonly state: SessionState; readonly reason: string };
  /**
   * When the drive saw each planned write: [planned, seen] on the replay's clock, in order (a
   * write that went into the attach capture is not listed). `compareWithLabels` judges a sample
   * as of the replay time the drive had caught up to (see `driveTime`).
   */
  readonly seen: readonly (readonly [planned: number, seen: number])[];
  /** The idle-then-type caller: when its wait ended (replay clock), how, and the status it saw. */
  readonly idleThenType?: { readonly t: number; readonly wait: WaitResult['outcome']; readonly state: SessionState; readonly reason: string };
}

/** The recording seconds a spec covers, and where its target label starts. */
export function windowOf(rec: Recording, spec: ReplayWindowSpec): { from: number; to: number; target: number } {
  let from = spec.from;
  if (from === undefined) {
    const hits = rec.timeline.labels.filter((l) => l.situation === spec.situation && (spec.whyIncludes === undefined || l.why.includes(spec.whyIncludes)));
    const hit = hits[spec.occurrence ?? 0];
    if (!hit) throw new Error(`${spec.id}: ${spec.recording} has no ${String(spec.situation)} label #${spec.occurrence ?? 0}`);
    from = hit.t;
  }
  // Start a little before the label, so its beginning is replayed too.
  const start = Math.max(0, from - 0.5);
  return { from: start, to: Math.min(rec.timeline.durationS, from + (spec.seconds ?? 4)), target: from };
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One replay in its own driver and data dir. */
export async function replayWindow(spec: ReplayWindowSpec, recordingsDir: string): Promise<ReplayObservation> {
  const rec = loadRecording(recordingsDir, spec.recording);
  const { from, to, target } = windowOf(rec, spec);
  const planned = planWindow(rec, { from, to, ...(spec.maxGapS !== undefined ? { maxGapS: spec.maxGapS } : {}), ...(spec.gateKeysS !== undefined ? { gateKeysS: spec.gateKeysS } : {}) });
  // A first write that changes nothing on the screen marks the replay's time 0 in the session.
  const plan = { ...planned.plan, writes: [[0, Buffer.from(MARKER).toString('base64')] as const, ...planned.plan.writes] };
  const firstWriteAt = planned.plan.writes[0]?.[0];
  const dataDir = mkdtempSync(join(tmpdir(), 'td-replay-'));
  const project = join(dataDir, 'workspace', 'projects', 'replay');
  mkdirSync(project, { recursive: true });
  // The script and its plan live in the drive's own workspace: the jail shows it, whatever the checkout's path.
  copyFileSync(join(packageRoot(), 'test', 'fixtures', 'replay', 'replay.py'), join(project, 'replay.py'));
  writeFileSync(join(project, 'plan.json'), JSON.stringify(plan));
  const driver = await Driver.open({
    dataDir,
    config: {
      allow: [{ id: 'replay', match: { path: '/usr/bin/python3' }, consent: { acknowledgedRisk: true, acknowledgedAt: '2026-12-01T00:00:00Z' }, profile: rec.timeline.profile, autoAnswer: spec.autoAnswer ?? 'safe-only' }],
      redactSecrets: false,
    },
  });
  const status: ObservedPoint[] = [];
  const events: ObservedPoint[] = [];
  const attention: [number, Attention][] = [];
  const answered: [number, string][] = [];
  let waitForText: WaitResult['outcome'] | undefined;
  let idleVersusStatus: ReplayObservation['idleVersusStatus'];
  let idleThenType: ReplayObservation['idleThenType'];
  let s: Session | undefined;
  try {
    const session = await driver.create({ allowId: 'replay', project: 'replay', args: ['replay.py', 'plan.json'], cols: rec.timeline.cols, rows: rec.timeline.rows });
    s = session;
    let t0: number | undefined;
    const at = (): number => (t0 === undefined ? 0 : round3((performance.now() - t0) / 1000));
    const started = new Promise<void>((resolve) => {
      // The marker may have arrived before create() returned: its transcript entry has the time.
      // Which write it was is told by its bytes: on a loaded machine the marker and the first
      // writes can all go into the attach capture, and the first output seen is a later write.
      const first = session.transcript({ limit: 50 }).find((e) => e.kind === 'output');
      if (first) {
        t0 = performance.now() - (Date.now() - first.time) - (first.data instanceof Uint8Array ? (plannedAtStart(plan.writes, first.data) ?? 0) : 0) * 1000;
        resolve();
      }
      session.on('output', (data) => {
        if (t0 !== undefined) return;
        // The marker can reach tmux before the control client attaches (it is then in the attach
        // capture, not in any %output), and so can the first writes: the first output seen is the
        // planned write its bytes begin (the first recorded write when none matches).
        t0 = performance.now() - (plannedAtStart(plan.writes, data) ?? firstWriteAt ?? 0) * 1000;
        resolve();
      });
    });
    session.on('state', (st) => void events.push([at(), st.state, st.reason]));
    // States published while create() was still returning: the replay writes from its first
    // instant, and on a loaded machine the first quiet window can close before create() resolves
    // (a window that stays in one state then has no event at all). Events are not replayed to a
    // listener added later; the transcript's `state` entries have them, with their times. Read in
    // the same turn as the subscription, so none is missed or counted twice.
    const before = session.transcript();
    const publishedBefore = before.filter((e) => e.kind === 'state' && typeof e.tags?.state === 'string');
    // The bytes the drive saw, with when: those of the transcript so far (wall time) and the
    // later ones as they come, to tell when each planned write reached the drive.
    const outputBefore = before.filter((e) => e.kind === 'output' && e.data instanceof Uint8Array);
    const outputLive: [number, Uint8Array][] = [];
    const subscribed = performance.now();
    session.on('output', (data) => void outputLive.push([at(), Uint8Array.from(data)]));
    session.on('attention', (a) => void attention.push([at(), a]));
    session.on('answered', (_digest, keys) => void answered.push([at(), keys.join(' ')]));
    // A window whose program prints nothing for a while (cat, a blank loading screen) gives no
    // output to start the clock when the marker went into the attach capture: the replay started
    // about when create() returned (within the attach time, under the checks' slack).
    const created = performance.now();
    await Promise.race([
      started,
      sleep(NO_OUTPUT_START_MS).then(() => {
        t0 ??= created;
      }),
    ]);
    const start = t0 as unknown as number;
    const now = (): number => (performance.now() - start) / 1000;
    const startWall = Date.now() - (performance.now() - start);
    // On the replay's clock; one from before it started is stamped 0, as at() stamps an event then.
    events.unshift(...publishedBefore.map((e): ObservedPoint => [Math.max(0, round3((e.time - startWall) / 1000)), e.tags?.state as SessionState, String(e.tags?.reason)]));
    // With gates, the keys are the session's to send; typed text is still sent as recorded.
    const inputs = spec.gateKeysS === undefined ? planned.inputs : planned.inputs.filter((x) => !x.step.startsWith('keys '));
    // Gates may hold the replay: the observer stays until it has ended (or the gates' worst case).
    const gateSlack = (planned.plan.gates ?? []).reduce((sum, [, timeout]) => sum + timeout, 0);
    const end = planned.to + 0.3 + gateSlack;
    const jobs: Promise<void>[] = [];
    if (spec.idleVersusStatus) {
      const ivs = spec.idleVersusStatus;
      jobs.push(
        (async () => {
          await sleep(Math.max(0, planned.mapTime(target) + ivs.atS - now()) * 1000);
          const w = await session.wait({ forIdleMs: ivs.forIdleMs, timeoutMs: Math.max(1000, (end - now()) * 1000) });
          const st = session.status();
          idleVersusStatus = { wait: w.outcome, producing: w.producing, state: st.state, reason: st.reason };
        })(),
      );
    }
    if (spec.idleThenType) {
      const itt = spec.idleThenType;
      jobs.push(
        (async () => {
          await sleep(Math.max(0, (itt.atS ?? 0) - now()) * 1000);
          const w = await session.wait({ forIdleMs: itt.forIdleMs, timeoutMs: Math.max(1000, (end - now()) * 1000) });
          idleThenType = { t: round3(now()), wait: w.outcome, state: w.status.state, reason: w.status.reason };
          if (w.outcome === 'idle') await session.sendText(itt.text);
        })(),
      );
    }
    jobs.push(
      (async () => {
        for (const input of inputs) {
          await sleep(Math.max(0, input.at - now()) * 1000);
          if (session.exit !== undefined) return;
          const typed = /^type (".*")$/.exec(input.step);
          // The wait is pending before the step is sent: a replay does not wait for our keys, so
          // on a loaded machine its answer may come before the send has returned (with a real
          // program it cannot). A caller may wait first and then type; the echo rule is the same.
          const pending = spec.waitForText && input.step === spec.waitForText.afterStep && waitForText === undefined ? session.wait({ forText: spec.waitForText.text, timeoutMs: 2000 }) : undefined;
          if (typed) await session.sendText(JSON.parse(typed[1] as string) as string);
          else await session.sendKeys(input.step.slice('keys '.length).split(' '));
          if (pending) waitForText = (await pending).outcome;
        }
      })(),
    );
    // The observer: status() every SAMPLE_MS until the window has played.
    while (now() < end && session.exit === undefined) {
      const st = session.status();
      status.push([round3(now()), st.state, st.reason]);
      await sleep(SAMPLE_MS);
    }
    await Promise.all(jobs);
    const output = [...outputBefore.map((e): [number, Uint8Array] => [Math.max(0, round3((e.time - startWall) / 1000)), e.data as Uint8Array]), ...outputLive];
    return {
      spec,
      labels: planned.labels,
      from: planned.mapTime(target),
      to: planned.to,
      status,
      events,
      attention,
      answered,
      seen: whenSeen(plan.writes, output),
      autoKeys: session
        .transcript()
        .filter((e) => e.kind === 'keys' && e.tags?.auto === true)
        .map((e) => [round3((e.time - startWall) / 1000), String(e.tags?.keys)] as const),
      subscribedAt: round3((subscribed - start) / 1000),
      ...(waitForText !== undefined ? { waitForText } : {}),
      ...(idleVersusStatus !== undefined ? { idleVersusStatus } : {}),
      ...(idleThenType !== undefined ? { idleThenType } : {}),
    };
  } finally {
    await s?.kill().catch(() => undefined);
    await driver.close().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/**
 * status() samples and the published state (the last `state` event) against the labels, over the
 * window, each as of the replay time the drive had seen (`driveTime`).
 */
export function compareWithLabels(o: ReplayObservation): { status: Agreement; events: Agreement } {
  const asSeen = (points: readonly ObservedPoint[]): ObservedPoint[] => points.map(([t, state, reason]) => [driveTime(o.seen, t), state, reason]);
  return {
    status: judgeAgainstLabels(asSeen(o.status), o.labels, { from: o.from, to: o.to, afterChangeS: AFTER_CHANGE_S }),
    events: judgeAgainstLabels(asSeen(o.events), o.labels, { from: o.from, to: o.to, afterChangeS: EVENTS_AFTER_CHANGE_S, heldStepS: SAMPLE_MS / 1000 }),
  };
}

/** The planned time of the first write that `data` begins (or that begins `data`), if any. */
function plannedAtStart(writes: readonly (readonly [at: number, base64: string])[], data: Uint8Array): number | undefined {
  for (const [at, base64] of writes) {
    const bytes = Buffer.from(base64, 'base64');
    const n = Math.min(bytes.length, data.length);
    if (n > 0 && Buffer.compare(bytes.subarray(0, n), data.subarray(0, n)) === 0) return at;
  }
  return undefined;
}

/**
 * When each planned write reached the drive: its bytes found in order in what the drive saw, at
 * the time of the chunk holding its last byte. A write not found (the marker or a first write
 * that went into the attach capture, before any %output) is left out.
 */
export function whenSeen(writes: readonly (readonly [at: number, base64: string])[], output: readonly (readonly [t: number, data: Uint8Array])[]): [planned: number, seen: number][] {
  const all = Buffer.concat(output.map(([, d]) => d));
  const ends: number[] = [];
  for (const [, d] of output) ends.push((ends.at(-1) ?? 0) + d.byteLength);
  const seen: [number, number][] = [];
  let from = 0;
  for (const [at, base64] of writes) {
    const bytes = Buffer.from(base64, 'base64');
    if (bytes.length === 0) continue;
    const i = all.indexOf(bytes, from);
    if (i < 0) continue;
    from = i + bytes.length;
    const chunk = ends.findIndex((end) => end >= from);
    seen.push([at, (output[chunk] as readonly [number, Uint8Array])[0]]);
  }
  return seen;
}

/**
 * The replay time a drive is at, at observer time `t`: the last write it had seen plus the time
 * since it saw it, but never past the next planned write it had not seen yet (it cannot know what
 * the program did after that) nor past `t`. On a loaded machine the bytes reach the mirror late;
 * the slack after a label change then counts from when they arrived, not from when the replay
 * meant to write them.
 */
export function driveTime(seen: readonly (readonly [planned: number, seen: number])[], t: number): number {
  let k = -1;
  while (k + 1 < seen.length && (seen[k + 1] as readonly [number, number])[1] <= t) k++;
  const last = seen[k];
  const next = seen[k + 1];
  let at = last ? Math.min(t, last[0] + (t - last[1])) : t;
  if (next) at = Math.min(at, next[0]);
  return round3(at);
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

async function main(): Promise<void> {
  const { values, positionals } = parseArgs({
    allowPositionals: true,
    options: { from: { type: 'string' }, seconds: { type: 'string' }, situation: { type: 'string' }, 'auto-answer': { type: 'string' }, 'gate-keys': { type: 'string' } },
  });
  const recording = positionals[0];
  if (!recording) throw new Error('usage: replay-recording <recording> [--from s | --situation name] [--seconds n] [--auto-answer policy] [--gate-keys timeoutS]');
  const spec: ReplayWindowSpec = {
    id: recording,
    recording,
    ...(values.from !== undefined ? { from: Number(values.from) } : {}),
    ...(values.situation !== undefined ? { situation: values.situation as Situation } : values.from === undefined ? { from: 0 } : {}),
    ...(values.seconds !== undefined ? { seconds: Number(values.seconds) } : {}),
    ...(values['auto-answer'] !== undefined ? { autoAnswer: values['auto-answer'] as AutoAnswerPolicy } : {}),
    ...(values['gate-keys'] !== undefined ? { gateKeysS: Number(values['gate-keys']) } : {}),
  };
  const o = await replayWindow(spec, join(packageRoot(), 'test', 'fixtures', 'cli-recordings'));
  const c = compareWithLabels(o);
  for (const [name, a] of Object.entries(c)) {
    console.log(`${name}: ${a.agree}/${a.judged} agree, ${a.workingAsAwaiting} working read as awaiting-input`);
    for (const [k, n] of Object.entries(a.misses)) console.log(`  ${n} × ${k}`);
  }
  for (const [t, a] of o.attention) console.log(`attention at ${t}s: ${a.kind} ${a.reason}${a.dialog ? ` (${a.dialog})` : ''}`);
  for (const [t, k] of o.answered) console.log(`answered at ${t}s: ${k}`);
}

if (process.argv[1] && import.meta.url === new URL(`file://${process.argv[1]}`).href) {
  main().catch((err: unknown) => {
    console.error(err);
    process.exit(1);
  });
}
