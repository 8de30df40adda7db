/**
 * Records one scripted drive of a real program through tmux-drive (Driver, sandboxed, no network):
 * the pane's bytes with their times, the labels a person gives as the script goes, the pane's
 * process samples, what the library reports live, and labelled frames captured along the way.
 *
 * The recorder samples /proc every SAMPLE_MS and status() with it: this is a measuring tool run
 * by hand, not the library (whose invariant is that nothing polls).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { Driver, type Session, type WaitResult } from '../../lib/index.js';
import type { DriverConfigInput } from '../../lib/policy/config-schema.js';
import { formatAsciicast, toAsciicast } from '../../lib/session/asciicast.js';
import type { TranscriptEntry } from '../../lib/session/transcript.js';
import { compareActivity, type ProcessActivitySample } from '../../lib/perceive/activity.js';
import type { ScreenSignals } from '../../lib/perceive/classify-screen.js';
import { sampleProcessActivity } from '../../backends/process/process-activity.js';
import { encodeCells, perceivedCells, type ProcessFacts, type RecordedFrame, type RecordedLabel } from '../fixture-format.js';
import { paneRoot, replayCells } from './capture.js';
import type { ObservedPoint, ProcessPoint, RecordingTimeline, TimedLabel } from './recording-format.js';

export type AllowInput = NonNullable<DriverConfigInput['allow']>[number];

/** How often the recorder samples the pane's tree and the library's status. */
const SAMPLE_MS = 250;
/** The window of the `busy` fact beside each sample and frame. */
const BUSY_WINDOW_MS = 1000;
/** Quiet time that makes a capture `settled`: above the session's own quiet watch (250 ms). */
const SETTLED_MS = 300;
/** A `between` capture: output stopped this long, just over the classifier's flowingMs (100 ms). */
const BETWEEN_MS = 110;
/** How long a `between` capture looks for such a pause before it takes the screen as it is. */
const BETWEEN_WITHIN_MS = 8000;
/** A recording file above this (gzipped) is reported: trim the script. */
const MAX_CAST_BYTES = 200 * 1024;

export type Capture = 'settled' | 'flowing' | 'between' | 'now';

export interface RecordCtx {
  readonly s: Session;
  /** The scratch HOME (the drive's project directory) and the working directory inside it. */
  readonly home: string;
  readonly work: string;
  /** Seconds since the launch. */
  now(): number;
  /** Until the screen shows `pattern` (resolves at once when it already does). */
  text(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Until the program has switched to the alternate screen. */
  alternate(timeoutMs?: number): Promise<void>;
  /** Until the screen no longer shows `pattern`. */
  gone(pattern: string | RegExp, timeoutMs?: number): Promise<void>;
  /** Until output has stopped for `ms` (a library wait, noted). */
  idle(ms: number, timeoutMs?: number): Promise<WaitResult>;
  /** Types text without submitting. */
  type(text: string): Promise<void>;
  keys(...keys: string[]): Promise<void>;
  pause(ms: number): Promise<void>;
  /** From now on, the screen is what this label says. */
  label(l: RecordedLabel): void;
  /** Captures a frame under the current label. */
  frame(name: string, capture?: Capture): Promise<void>;
  /** Evidence for the timeline (a wait's outcome, a status). */
  note(text: string): void;
  exit(timeoutMs?: number): Promise<void>;
  /** Steps a CLI version may not have: a failure is noted and Escape pressed, the script goes on. */
  optional(what: string, steps: () => Promise<void>): Promise<void>;
}

export interface RecordingScript {
  /** The recording's name (files `<name>.cast.gz`, `<name>.timeline.json`). */
  readonly name: string;
  /** The frames' folder and the matrices' row: codex, gemini, claude-code, opencode, programs. */
  readonly program: string;
  /** The driven program's name and version, as the fixture's metadata. */
  readonly version: { readonly name: string; readonly version: string };
  readonly profile: string;
  readonly allow: AllowInput;
  readonly args?: readonly string[];
  readonly cols?: number;
  readonly rows?: number;
  /** Prepares the scratch HOME before the launch; returns what it did, in words. */
  readonly seed?: (home: string, work: string) => string;
  run(ctx: RecordCtx): Promise<void>;
}

export interface RecordedSession {
  readonly timeline: RecordingTimeline;
  readonly frames: readonly { readonly name: string; readonly frame: RecordedFrame }[];
  /** The gzipped asciicast. */
  readonly cast: Buffer;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const round3 = (n: number): number => Math.round(n * 1000) / 1000;

/** Runs the script in its own driver and data dir; throws (with the screen) when a step fails. */
export async function recordSession(script: RecordingScript, dataRoot: string): Promise<RecordedSession> {
  const dataDir = join(dataRoot, script.name);
  const home = join(dataDir, 'workspace', 'projects', script.name);
  const work = join(home, 'work');
  mkdirSync(work, { recursive: true });
  const seeded = script.seed?.(home, work) ?? 'nothing: an empty scratch HOME';
  const cols = script.cols ?? 100;
  const rows = script.rows ?? 30;
  const driver = await Driver.open({ dataDir, config: { allow: [script.allow], worker: { maxSessions: 2 }, redactSecrets: false } });
  const startEpoch = Date.now();
  const t0 = performance.now();
  const rel = (): number => performance.now() - t0;
  const sec = (): number => round3(rel() / 1000);

  const entries: TranscriptEntry[] = [];
  let seq = 0;
  const steps: { t: number; step: string }[] = [];
  const labels: TimedLabel[] = [];
  const samples: ProcessPoint[] = [];
  const statusPoints: ObservedPoint[] = [];
  const eventPoints: ObservedPoint[] = [];
  const notes: { t: number; note: string }[] = [];
  const frames: { name: string; frame: RecordedFrame }[] = [];
  const ring: ProcessActivitySample[] = [];
  let lastOutputAt = Number.NEGATIVE_INFINITY;
  let root: number | undefined;
  const step = (text: string): void => void steps.push({ t: sec(), step: text });

  step(`launch ${[script.allow.match.path, ...(script.args ?? [])].join(' ')} (${cols}x${rows}, sandboxed, no network; HOME = the drive's project dir, cwd = ~/work)`);
  const s = await driver.create({ allowId: script.allow.id, name: script.name, project: script.name, cwd: 'work', cols, rows, ...(script.args ? { args: [...script.args] } : {}) });
  const outputWaiters = new Set<() => void>();
  // The screen as create() leaves it is the recording's first event: what the program drew before
  // the control client attached reached the mirror through the attach capture, not as output
  // (an alternate-screen switch, htop's first frame). Read in the same tick as the listener below
  // is attached, so no chunk is in both or in neither (small chunks are parsed as they arrive).
  const initial = s.read({ format: 'ansi' }).content;
  if (initial.length > 0) entries.push({ seq: ++seq, time: Date.now(), kind: 'output', data: new TextEncoder().encode(initial) });
  if (s.transcript().some((e) => e.kind === 'output')) lastOutputAt = rel();
  s.on('output', (data) => {
    lastOutputAt = rel();
    entries.push({ seq: ++seq, time: startEpoch + lastOutputAt, kind: 'output', data: data.slice() });
    for (const w of outputWaiters) w();
  });
  s.on('state', (st) => void eventPoints.push([sec(), st.state, st.reason]));
  const socket = join(dataDir, 'tmux', `${script.name}.sock`);

  const sampleNow = (): ProcessActivitySample | undefined => {
    root ??= paneRoot(socket);
    return root === undefined ? undefined : sampleProcessActivity(root, rel());
  };
  /** The sample of the ring closest to `ms` before the latest (the busy window). */
  const windowStart = (latest: ProcessActivitySample, minAt: number): ProcessActivitySample | undefined => ring.find((r) => r.at >= Math.max(minAt, latest.at - BUSY_WINDOW_MS - SAMPLE_MS / 2) && r.at <= latest.at - SAMPLE_MS / 2);
  const tick = (): void => {
    const now = sampleNow();
    if (now) {
      const from = windowStart(now, Number.NEGATIVE_INFINITY);
      const a = from ? compareActivity(from, now) : undefined;
      samples.push([round3(now.at / 1000), now.readingTerminal ? 1 : 0, now.runnable ? 1 : 0, a?.busy ?? 'idle', Math.round(a?.cpuMs ?? 0)]);
      ring.push(now);
      while (ring.length > 8) ring.shift();
    }
    if (s.exit === undefined) {
      const st = s.status();
      const last = statusPoints[statusPoints.length - 1];
      if (!last || last[1] !== st.state || last[2] !== st.reason) statusPoints.push([sec(), st.state, st.reason]);
    }
  };
  const sampler = setInterval(tick, SAMPLE_MS);

  /** The screen's text as the cells have it (a text read drops the ghost text the profile strips). */
  const screenText = (): string => {
    const ansi = s.read({ format: 'ansi' });
    return replayCells(ansi.content, ansi.cols, ansi.rows).lines.join('\n');
  };
  /** Resolves when `test` holds on the screen, checked now and after each burst of output. */
  const until = (what: string, test: (screen: string) => boolean, timeoutMs: number): Promise<void> =>
    new Promise((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const check = (): boolean => {
        if (!test(screenText())) return false;
        finish();
        resolve();
        return true;
      };
      const onOutput = (): void => {
        timer ??= setTimeout(() => {
          timer = undefined;
          void s.inputModes().then(check, () => undefined);
        }, 30);
      };
      const finish = (): void => {
        clearTimeout(deadline);
        if (timer) clearTimeout(timer);
        outputWaiters.delete(onOutput);
      };
      const deadline = setTimeout(() => {
        finish();
        reject(new Error(`${script.name}: waited ${timeoutMs} ms for ${what}; screen:\n${screenText()}`));
      }, timeoutMs);
      outputWaiters.add(onOutput);
      void s.inputModes().then(check, () => undefined);
    });
  const matches = (pattern: string | RegExp) => (screen: string): boolean => (typeof pattern === 'string' ? screen.includes(pattern) : pattern.test(screen));
  /** Resolves after the next output chunk has been parsed (false when none came in `timeoutMs`). */
  const nextOutput = (timeoutMs: number): Promise<boolean> =>
    new Promise((resolve) => {
      const done = (got: boolean): void => {
        clearTimeout(timer);
        outputWaiters.delete(on);
        if (got) void s.inputModes().then(() => resolve(true), () => resolve(true));
        else resolve(false);
      };
      const on = (): void => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      outputWaiters.add(on);
    });

  const capture = async (name: string, how: Capture): Promise<void> => {
    let took: RecordedFrame['capture'] = how === 'between' ? 'settled' : how;
    if (how === 'settled') {
      const r = await s.wait({ forIdleMs: SETTLED_MS, timeoutMs: 4000 });
      if (r.outcome !== 'idle') took = 'now';
    } else if (how === 'flowing') {
      if (!(await nextOutput(3000))) took = 'now';
    } else if (how === 'between') {
      // Between two animation frames: output stopped for longer than flowingMs, not yet settled.
      took = 'now';
      const end = rel() + BETWEEN_WITHIN_MS;
      while (rel() < end) {
        if (!(await nextOutput(2000))) break;
        await sleep(BETWEEN_MS);
        if (rel() - lastOutputAt >= BETWEEN_MS - 5) {
          took = 'settled';
          break;
        }
      }
    }
    await s.inputModes().catch(() => undefined);
    const label = labels[labels.length - 1];
    if (!label) throw new Error(`${script.name}: frame ${name} before any label`);
    const sample = s.exit === undefined ? sampleNow() : undefined;
    const now = rel();
    // The ANSI read is untransformed (the text read drops ghost text the profile strips): its
    // replay gives both the lines and the cells the classifier reads.
    const ansi = s.read({ format: 'ansi' });
    const cells = replayCells(ansi.content, ansi.cols, ansi.rows);
    const lines = [...cells.lines];
    const from = sample ? windowStart(sample, Number.NEGATIVE_INFINITY) : undefined;
    const windowActivity = from && sample ? compareActivity(from, sample) : undefined;
    const process: ProcessFacts = {
      readingTerminal: sample?.readingTerminal ?? false,
      runnable: sample?.runnable ?? false,
      busy: windowActivity?.busy ?? 'idle',
      cpuMs: Math.round(windowActivity?.cpuMs ?? 0),
      ioBytes: Math.round(windowActivity?.ioBytes ?? 0),
      windowMs: windowActivity ? Math.round(windowActivity.until - windowActivity.since) : 0,
    };
    const exit = s.exit;
    const signals: ScreenSignals = {
      now: Math.round(now),
      lastOutputAt: Math.round(Number.isFinite(lastOutputAt) ? lastOutputAt : 0),
      lastChangeAt: Math.round(Number.isFinite(lastOutputAt) ? lastOutputAt : 0),
      interactions: s.status().interactions,
      ...(exit ? { exit } : {}),
      // One sample at capture: what a session holds once output stops (its quiet sample). The
      // busy window is beside the frame (`process`), not in the signals: a session has it only
      // stuckMs after output stopped.
      ...(sample ? { sample: roundSample(sample) } : {}),
    };
    const { t: _t, ...labelOnly } = label;
    frames.push({
      name,
      frame: {
        label: labelOnly,
        synthetic: false,
        source: `${script.version.name} ${script.version.version} under tmux-drive (recording ${script.name}): ${label.why}`,
        profile: script.profile,
        program: script.version,
        reached: [`seed: ${seeded}`, ...steps.map((x) => `${x.t.toFixed(1)}s ${x.step}`)],
        process,
        capture: took,
        recording: { name: script.name, t: round3(now / 1000) },
        snapshot: { cols: ansi.cols, rows: ansi.rows, cursor: ansi.cursor, alternate: ansi.alternate, lines },
        cells: encodeCells(perceivedCells(cells.cells)),
        signals,
      },
    });
    step(`frame ${name} (${took})`);
  };

  const ctx: RecordCtx = {
    s,
    home,
    work,
    now: sec,
    async text(pattern, timeoutMs = 30_000) {
      step(`wait for ${String(pattern)} on the screen`);
      await until(String(pattern), matches(pattern), timeoutMs);
    },
    async alternate(timeoutMs = 30_000) {
      step('wait for the alternate screen');
      await until('the alternate screen', () => s.read().alternate, timeoutMs);
    },
    async gone(pattern, timeoutMs = 30_000) {
      step(`wait until ${String(pattern)} leaves the screen`);
      const m = matches(pattern);
      await until(`${String(pattern)} to go`, (screen) => !m(screen), timeoutMs);
    },
    async idle(ms, timeoutMs = 15_000) {
      const r = await s.wait({ forIdleMs: ms, timeoutMs });
      step(`wait forIdleMs ${ms}: ${r.outcome}`);
      return r;
    },
    async type(text) {
      step(`type ${JSON.stringify(text)}`);
      entries.push({ seq: ++seq, time: Date.now(), kind: 'input', data: text });
      await s.sendText(text);
    },
    async keys(...keys) {
      step(`keys ${keys.join(' ')}`);
      entries.push({ seq: ++seq, time: Date.now(), kind: 'keys', tags: { keys: keys.join(' ') } });
      await s.sendKeys(keys);
    },
    pause: async (ms) => {
      await sleep(ms);
    },
    label(l) {
      labels.push({ t: sec(), ...l });
      step(`label ${l.state}${l.dialog ? ` (${l.dialog} dialog)` : ''}: ${l.situation}`);
    },
    frame: (name, how = 'settled') => capture(name, how),
    note(text) {
      notes.push({ t: sec(), note: text });
    },
    async optional(what, steps) {
      try {
        await steps();
      } catch (err) {
        const first = (err as Error).message.split('\n')[0] ?? '';
        console.warn(`  ! ${script.name}: optional ${what} skipped: ${first}`);
        notes.push({ t: sec(), note: `optional ${what} skipped: ${first}` });
        await s.sendKeys(['Escape']).catch(() => undefined);
      }
    },
    async exit(timeoutMs = 15_000) {
      const r = await s.wait({ forExit: true, timeoutMs });
      if (r.outcome !== 'exit') throw new Error(`${script.name}: no exit within ${timeoutMs} ms; screen:\n${s.read({ mode: 'full' }).content}`);
      step('the program exited');
    },
  };

  try {
    await script.run(ctx);
    tick();
  } finally {
    clearInterval(sampler);
    await s.kill().catch(() => undefined);
    await driver.close().catch(() => undefined);
  }
  const cast = toAsciicast(entries, { cols, rows, redact: false, startTime: startEpoch, title: `${script.version.name} ${script.version.version}: ${script.name}` });
  const gz = gzipSync(formatAsciicast(cast), { level: 9 });
  if (gz.byteLength > MAX_CAST_BYTES) console.warn(`  ! ${script.name}: the recording is ${Math.round(gz.byteLength / 1024)} KB gzipped (over ${MAX_CAST_BYTES / 1024} KB): shorten the script`);
  const timeline: RecordingTimeline = {
    name: script.name,
    program: script.version,
    profile: script.profile,
    cols,
    rows,
    seeded,
    argv: [script.allow.match.path, ...(script.args ?? [])],
    durationS: sec(),
    labels,
    steps,
    samples,
    observed: { status: statusPoints, events: eventPoints },
    notes,
    frames: frames.map((f) => f.name),
  };
  return { timeline, frames, cast: gz };
}

function roundSample(s: ProcessActivitySample): ProcessActivitySample {
  return { ...s, at: Math.round(s.at) };
}


/** Writes a recorded session: the cast and timeline under `recordingsDir`, the frames under `framesDir/<program>/`. */
export function writeSession(rec: RecordedSession, program: string, recordingsDir: string, framesDir: string): void {
  mkdirSync(recordingsDir, { recursive: true });
  mkdirSync(join(framesDir, program), { recursive: true });
  writeFileSync(join(recordingsDir, `${rec.timeline.name}.cast.gz`), rec.cast);
  writeFileSync(join(recordingsDir, `${rec.timeline.name}.timeline.json`), `${JSON.stringify(rec.timeline, null, 1)}\n`);
  for (const f of rec.frames) writeFileSync(join(framesDir, program, `${f.name}.json`), `${JSON.stringify(f.frame)}\n`);
}
