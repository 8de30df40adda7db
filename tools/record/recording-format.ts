/**
 * A recorded drive of a real program (test/fixtures/cli-recordings): the pane's bytes with their
 * times (`<name>.cast.gz`, asciicast v2, gzipped) and beside them `<name>.timeline.json`: the
 * labels a person gave over time, the steps taken, the pane's process samples and what the
 * library itself reported live. The replay harness turns the pair into a plan for
 * test/fixtures/replay/replay.py, which writes the bytes into a real pane on the same clock.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import type { Busy } from '../../lib/perceive/activity.js';
import type { SessionState } from '../../lib/perceive/classify-screen.js';
import type { RecordedLabel } from '../fixture-format.js';

/** A label from `t` (seconds into the recording) until the next one. */
export type TimedLabel = RecordedLabel & { readonly t: number };

/** [t, readingTerminal, runnable, busy over the last second, CPU ms over the last second] */
export type ProcessPoint = readonly [t: number, reading: 0 | 1, runnable: 0 | 1, busy: Busy, cpuMs: number];

/** [t, state, reason]: a change of what the library reported. */
export type ObservedPoint = readonly [t: number, state: SessionState, reason: string];

export interface RecordingTimeline {
  readonly name: string;
  readonly program: { readonly name: string; readonly version: string };
  readonly profile: string;
  readonly cols: number;
  readonly rows: number;
  /** How the scratch HOME was prepared before the launch. */
  readonly seeded: string;
  readonly argv: readonly string[];
  readonly durationS: number;
  readonly labels: readonly TimedLabel[];
  readonly steps: readonly { readonly t: number; readonly step: string }[];
  /** Every ~250 ms while the program ran (the recorder's own sampling, not the library's). */
  readonly samples: readonly ProcessPoint[];
  /** The library, live: `status()` every ~250 ms (changes only) and the `state` events it emitted. */
  readonly observed: { readonly status: readonly ObservedPoint[]; readonly events: readonly ObservedPoint[] };
  /** Waits and other library calls whose outcome is evidence (the echo case, idle vs status). */
  readonly notes: readonly { readonly t: number; readonly note: string }[];
  readonly frames: readonly string[];
}

/** One asciicast v2 event: [seconds, code, data]. */
export type CastEvent = readonly [t: number, code: string, data: string];

export interface Recording {
  readonly timeline: RecordingTimeline;
  /** Output events only, in order. */
  readonly output: readonly (readonly [t: number, data: string])[];
}

export function loadRecording(dir: string, name: string): Recording {
  const timeline = JSON.parse(readFileSync(join(dir, `${name}.timeline.json`), 'utf8')) as RecordingTimeline;
  const cast = gunzipSync(readFileSync(join(dir, `${name}.cast.gz`))).toString('utf8');
  const output: [number, string][] = [];
  for (const line of cast.split('\n').slice(1)) {
    if (line.trim() === '') continue;
    const [t, code, data] = JSON.parse(line) as CastEvent;
    if (code === 'o') output.push([t, data]);
  }
  return { timeline, output };
}

export function recordingNames(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (JSON.parse(readFileSync(join(dir, 'index.json'), 'utf8')) as { recordings: string[] }).recordings;
}

/** The label in force at `t`, or undefined before the first. */
export function labelAt(labels: readonly TimedLabel[], t: number): TimedLabel | undefined {
  let found: TimedLabel | undefined;
  for (const l of labels) {
    if (l.t > t) break;
    found = l;
  }
  return found;
}

/** The process point in force at `t` (the last sample at or before it). */
export function processAt(samples: readonly ProcessPoint[], t: number): ProcessPoint | undefined {
  let found: ProcessPoint | undefined;
  for (const s of samples) {
    if (s[0] > t) break;
    found = s;
  }
  return found;
}

// ---- replay plans --------------------------------------------------------------------------------

/** What the replay program does between two writes. */
export type ReplayMode = 'read' | 'spin' | 'sleep' | 'exit';

/** The replay program's input: everything in plan seconds, from the first write. */
export interface ReplayPlan {
  /** [at, base64 bytes] */
  readonly writes: readonly (readonly [at: number, data: string])[];
  /** [at, mode]: from `at` on, until the next. */
  readonly modes: readonly (readonly [at: number, mode: ReplayMode])[];
  /** Stay in the last mode this long after the last event, then exit 0. */
  readonly holdS: number;
  /**
   * [at, timeoutS]: the recorded program reacted to a key sent here. The replay goes on from the
   * gate when a key arrives (one read earlier, while it waited for input, brings the gate
   * forward), or after timeoutS; everything after moves with it.
   */
  readonly gates?: readonly (readonly [at: number, timeoutS: number])[];
}

/** A recorded step that reached the program: `type "text"` or `keys A B`. */
export const INPUT_STEP = /^(?:type |keys )/;

export interface PlannedWindow {
  readonly plan: ReplayPlan;
  /** The inputs the recorder sent inside the window, on the plan's clock (the harness sends them again). */
  readonly inputs: readonly { readonly at: number; readonly step: string }[];
  /** The labels on the plan's clock (compressed, shifted). */
  readonly labels: readonly TimedLabel[];
  /** Plan time of the window's first and last instant. */
  readonly from: number;
  readonly to: number;
  /** A recording time inside the window on the plan's clock. */
  readonly mapTime: (t: number) => number;
}

export interface WindowOptions {
  /** Recording seconds: everything before is written at once (the screen as it was), then played from here. */
  readonly from: number;
  readonly to: number;
  /** Quiet gaps longer than this are shortened to it (the labels move with them). Default 3 s. */
  readonly maxGapS?: number;
  /** Seconds between the instant prefix and the window's first event (the screen settles). Default 0.5 s. */
  readonly leadS?: number;
  /** Recorded `keys` steps become gates of this many seconds (the replay waits for a key there). */
  readonly gateKeysS?: number;
}

/**
 * The mode the recording asks for at `t`: read the terminal where a person saw it waiting for
 * input, burn CPU where the recorded tree was CPU-busy, otherwise sleep without reading (a
 * working program that waits on the network or a timer). An `exited` label ends the program.
 */
export function modeAt(timeline: RecordingTimeline, t: number): ReplayMode {
  const label = labelAt(timeline.labels, t);
  if (label?.state === 'exited') return 'exit';
  if (label?.state === 'awaiting-input') return 'read';
  return processAt(timeline.samples, t)?.[3] === 'cpu' ? 'spin' : 'sleep';
}

/**
 * A window of a recording as a replay plan: the bytes before `from` in one write at 0 (the
 * screen as it was), `leadS` later the window played on the recorded clock with long quiet gaps
 * shortened, the modes and labels moved onto the same clock.
 */
export function planWindow(rec: Recording, opts: WindowOptions): PlannedWindow {
  const maxGap = opts.maxGapS ?? 3;
  const lead = opts.leadS ?? 0.5;
  const { timeline } = rec;
  const prefix = rec.output.filter(([t]) => t < opts.from).map(([, d]) => d).join('');
  const inside = rec.output.filter(([t]) => t >= opts.from && t <= opts.to);
  // Instants that keep their order and (up to maxGap) their spacing: writes, label and mode changes.
  const marks = new Set<number>([opts.from, opts.to, ...inside.map(([t]) => t)]);
  for (const l of timeline.labels) if (l.t > opts.from && l.t < opts.to) marks.add(l.t);
  const steps = timeline.steps.filter((x) => x.t >= opts.from && x.t <= opts.to && INPUT_STEP.test(x.step));
  for (const x of steps) marks.add(x.t);
  for (const s of timeline.samples) if (s[0] > opts.from && s[0] < opts.to && modeAt(timeline, s[0]) !== modeAt(timeline, s[0] - 0.001)) marks.add(s[0]);
  const sorted = [...marks].sort((a, b) => a - b);
  const mapped = new Map<number, number>();
  let at = lead;
  let prev = opts.from;
  for (const t of sorted) {
    at += Math.min(t - prev, maxGap);
    mapped.set(t, round3(at));
    prev = t;
  }
  /** Recording time → plan time, for any t in the window (between marks: linear, clamped to the gap). */
  const map = (t: number): number => {
    const exact = mapped.get(t);
    if (exact !== undefined) return exact;
    let before = opts.from;
    for (const m of sorted) {
      if (m > t) break;
      before = m;
    }
    return round3((mapped.get(before) ?? lead) + Math.min(t - before, maxGap));
  };
  const writes: [number, string][] = [];
  if (prefix.length > 0) writes.push([0, Buffer.from(prefix, 'utf8').toString('base64')]);
  for (const [t, d] of inside) writes.push([map(t), Buffer.from(d, 'utf8').toString('base64')]);
  const modes: [number, ReplayMode][] = [[0, modeAt(timeline, opts.from)]];
  for (const t of sorted) {
    const m = modeAt(timeline, t);
    if (m !== modes[modes.length - 1]?.[1]) modes.push([map(t), m]);
  }
  // The window's end is an event too: the program holds its last mode until then.
  modes.push([map(opts.to), modeAt(timeline, opts.to)]);
  const labels: TimedLabel[] = [];
  const first = labelAt(timeline.labels, opts.from);
  if (first) labels.push({ ...first, t: 0 });
  for (const l of timeline.labels) if (l.t > opts.from && l.t <= opts.to) labels.push({ ...l, t: map(l.t) });
  const inputs = steps.map((x) => ({ at: map(x.t), step: x.step }));
  const gates = opts.gateKeysS === undefined ? undefined : inputs.filter((x) => x.step.startsWith('keys ')).map((x) => [x.at, opts.gateKeysS as number] as const);
  return { plan: { writes, modes, holdS: 1, ...(gates ? { gates } : {}) }, inputs, labels, from: lead, to: map(opts.to), mapTime: map };
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}

// ---- the library's verdicts against the labels, over time ----------------------------------------

/**
 * Around a label change the labels' own timing is loose: the recorder labelled when its wait for
 * the new screen returned (tens of ms late), and a replay's clock starts with python's. Verdicts
 * this close before a change are not judged.
 */
const BEFORE_CHANGE_S = 0.3;

export interface Agreement {
  /** Instants judged (outside the slack around label changes). */
  readonly judged: number;
  readonly agree: number;
  /** Instants labelled working that read awaiting-input: the costly mistake. */
  readonly workingAsAwaiting: number;
  /** The disagreements, grouped: "label state/situation → got state/reason" × count. */
  readonly misses: Readonly<Record<string, number>>;
}

export interface JudgeOptions {
  readonly from: number;
  readonly to: number;
  /** Verdicts this long after a label change are not judged (the library needs its quiet time). */
  readonly afterChangeS: number;
  /**
   * Points are changes that hold until the next one (state events, status changes): judged every
   * this many seconds. Absent: each point is an instant sample, judged as it is.
   */
  readonly heldStepS?: number;
}

export function judgeAgainstLabels(points: readonly ObservedPoint[], labels: readonly TimedLabel[], opts: JudgeOptions): Agreement {
  const changes = labels.slice(1).map((l) => l.t);
  const near = (t: number): boolean => changes.some((c) => t >= c - BEFORE_CHANGE_S && t <= c + opts.afterChangeS);
  const instants: (readonly [number, SessionState, string])[] = [];
  if (opts.heldStepS !== undefined) {
    let k = -1;
    for (let t = opts.from; t <= opts.to; t += opts.heldStepS) {
      while (k + 1 < points.length && (points[k + 1] as ObservedPoint)[0] <= t) k++;
      const held = points[k];
      if (held) instants.push([t, held[1], held[2]]);
    }
  } else instants.push(...points);
  let judged = 0;
  let agree = 0;
  let workingAsAwaiting = 0;
  const misses: Record<string, number> = {};
  for (const [t, state, reason] of instants) {
    if (t < opts.from || t > opts.to || near(t)) continue;
    const label = labelAt(labels, t);
    if (!label) continue;
    judged++;
    if (label.state === state) agree++;
    else {
      const key = `${label.state}/${label.situation} → ${state}/${reason}`;
      misses[key] = (misses[key] ?? 0) + 1;
      if (label.state === 'working' && state === 'awaiting-input') workingAsAwaiting++;
    }
  }
  return { judged, agree, workingAsAwaiting, misses };
}
