/**
 * Issue 12, part 1: the real AI CLIs as the library meets them.
 *
 * 1. Frames recorded from the real CLIs and ordinary programs (test/fixtures/cli-frames, made by
 *    `npm run record-clis`), each labelled by a person, replayed through classifyScreen. The frames
 *    today's classifier gets wrong are listed in cli-frames/known-wrong.json and run as `it.fails`:
 *    when part 2 fixes one, its test turns red until the list is emptied of it.
 * 2. Windows of the recordings (test/fixtures/cli-recordings) replayed into a REAL tmux pane by
 *    test/fixtures/replay/replay.py (a python3 drive with the CLI's profile: recorded bytes on the
 *    recorded clock, reading its terminal where the program waited for input), with status(), the
 *    `state` events, `attention`, auto-answers and waits checked against the labels over time.
 *    replay-windows.json says which checks are known to fail today, and why (the class).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { loadProfileFiles } from '../../lib/driver/profile-files.js';
import { judgeRecordedFrames, loadKnownWrong, loadRecordedFrames, policyDecision } from '../../tools/fixture-format.js';
import { labelAt, recordingNames } from '../../tools/record/recording-format.js';
import { compareWithLabels, replayWindow, type ReplayObservation, type ReplayWindowSpec } from '../../tools/replay-recording.js';

const framesDir = fileURLToPath(new URL('../fixtures/cli-frames/', import.meta.url));
const recordingsDir = fileURLToPath(new URL('../fixtures/cli-recordings/', import.meta.url));
const frames = loadRecordedFrames(framesDir);
const judged = judgeRecordedFrames(frames, loadProfileFiles());
const knownWrong = loadKnownWrong(framesDir);
const AI_CLIS = ['claude-code', 'codex', 'gemini', 'opencode'];

describe('frames recorded from the real AI CLIs and ordinary programs', () => {
  it('holds at least 100 real AI-CLI frames, each with its program version, process facts, how it was reached and a label', () => {
    const ai = frames.filter((f) => AI_CLIS.includes(f.name.split('/')[0] as string));
    expect(ai.length).toBeGreaterThanOrEqual(100);
    for (const cli of AI_CLIS) expect(ai.filter((f) => f.name.startsWith(`${cli}/`)).length, cli).toBeGreaterThanOrEqual(10);
    for (const { name, frame } of frames) {
      expect(frame.synthetic, name).toBe(false);
      expect(frame.program.version, name).toMatch(/\d/);
      expect(frame.reached.length, name).toBeGreaterThan(1);
      expect(typeof frame.process.readingTerminal, name).toBe('boolean');
      expect(frame.label.why.length, name).toBeGreaterThan(0);
    }
  });

  it('the known-wrong list names only recorded frames', () => {
    const names = new Set(frames.map((f) => f.name));
    expect(Object.keys(knownWrong).filter((n) => !names.has(n))).toEqual([]);
  });

  it('no auth, approval or destructive dialog is answered under any policy', () => {
    for (const j of judged) {
      if (!['auth', 'approval', 'destructive'].includes(j.label.dialogKind ?? '')) continue;
      for (const policy of ['safe-only', 'all'] as const) expect(policyDecision(j.verdict, policy), `${j.name} under ${policy}`).not.toBe('answer');
    }
  });

  const right = judged.filter((j) => knownWrong[j.name] === undefined);
  const wrong = judged.filter((j) => knownWrong[j.name] !== undefined);
  it.each(right.map((j) => [j.name, j] as const))('%s is classified as labelled', (_name, j) => {
    expect(j.wrong).toEqual([]);
  });
  // Known wrong today (the class in known-wrong.json): these must keep failing until part 2 fixes them.
  it.fails.each(wrong.map((j) => [`${j.name} [${knownWrong[j.name]}]`, j] as const))('%s is classified as labelled', (_name, j) => {
    expect(j.wrong).toEqual([]);
  });
});

type Check = 'status' | 'events' | 'attentionAfterAnswer' | 'autoAnswered' | 'waitForText' | 'idleVersusStatus' | 'idleThenType';

interface WindowEntry extends ReplayWindowSpec {
  readonly checks: readonly Check[];
  /** check → the class of issue 12 it is known to fail today. */
  readonly knownWrong?: Partial<Record<Check, string>>;
}

const windows = (JSON.parse(readFileSync(`${recordingsDir}replay-windows.json`, 'utf8')) as { windows: WindowEntry[] }).windows;
/** Share of the judged samples that must agree with the labels (brief output after a key or a redraw reads working). */
const MIN_AGREEMENT = 0.8;
/** As tools/replay-recording.ts judges status(): samples this soon after a label change are not judged. */
const AFTER_CHANGE_SLACK_S = 0.6;

describe('recordings replayed into a real tmux pane', () => {
  const results = new Map<string, ReplayObservation>();
  const failures = new Map<string, Error>();

  beforeAll(async () => {
    // Two replays at a time: they sleep or read most of the time, and the whole run stays under a minute.
    const queue = [...windows];
    const worker = async (): Promise<void> => {
      for (let w = queue.shift(); w; w = queue.shift()) {
        try {
          results.set(w.id, await replayWindow(w, recordingsDir));
        } catch (err) {
          failures.set(w.id, err as Error);
        }
      }
    };
    await Promise.all([worker(), worker()]);
  }, 180_000);

  it('every recording is listed and loads, and every window names one', () => {
    const names = recordingNames(recordingsDir);
    expect(names.length).toBeGreaterThanOrEqual(8);
    for (const w of windows) expect(names, w.id).toContain(w.recording);
  });

  for (const w of windows) {
    // The harness itself must work, or a known-wrong check would "fail" for the wrong reason.
    it(`${w.id}: replayed and observed`, () => {
      expect(failures.get(w.id)?.message).toBeUndefined();
      const o = results.get(w.id);
      expect(o?.status.length).toBeGreaterThan(10);
    });
    for (const check of w.checks) {
      const known = w.knownWrong?.[check];
      (known ? it.fails : it)(`${w.id}: ${check}${known ? ` [known wrong today: ${known}]` : ''}`, async () => {
        // A check that failed drops its observation, so that vitest's retry (timing under a
        // neighbour's load) replays the window again instead of judging the same samples twice.
        let o = results.get(w.id);
        if (!o && !failures.has(w.id) && !known) {
          o = await replayWindow(w, recordingsDir);
          results.set(w.id, o);
        }
        if (!o) throw new Error(`${w.id} was not replayed`);
        try {
          assertCheck(check, o);
        } catch (err) {
          if (!known) results.delete(w.id);
          throw err;
        }
      }, 120_000);
    }
  }
});

function assertCheck(check: Check, o: ReplayObservation): void {
  const { status, events } = compareWithLabels(o);
  switch (check) {
    case 'status':
    case 'events': {
      const a = check === 'status' ? status : events;
      // What was observed goes into the message: a failure under a neighbour's load is seen once and retried away.
      expect(a.judged, `samples judged (${check === 'events' ? `events ${JSON.stringify(o.events)}` : `${o.status.length} samples`}, window ${o.from}–${o.to} s)`).toBeGreaterThanOrEqual(4);
      expect(a.workingAsAwaiting, `working read as awaiting-input: ${JSON.stringify(a.misses)}`).toBe(0);
      expect(a.agree / a.judged, JSON.stringify(a.misses)).toBeGreaterThanOrEqual(MIN_AGREEMENT);
      return;
    }
    case 'attentionAfterAnswer': {
      // A dialog that shows up right after an auto-answered one is escalated too (issue 12 class 8).
      const answeredAt = o.answered[0]?.[0];
      expect(answeredAt, 'an auto-answer happened').toBeDefined();
      const later = o.attention.filter(([t, a]) => t >= (answeredAt ?? 0) && a.dialog !== undefined);
      expect(later.map(([, a]) => a.reason)).toContain('dialog_auth');
      return;
    }
    case 'autoAnswered':
      expect(o.answered.length, `the safe dialog was answered (keys the session sent: ${JSON.stringify(o.autoKeys)}; listening from ${o.subscribedAt} s; attention: ${JSON.stringify(o.attention.map(([t, a]) => [t, a.reason]))}; events: ${JSON.stringify(o.events)})`).toBeGreaterThan(0);
      return;
    case 'waitForText':
      expect(o.waitForText).toBe('text');
      return;
    case 'idleThenType': {
      // A caller that waits for idle and then types never types into a loading or queued screen:
      // when its wait says idle, the program waits for input by the labels, whatever the
      // recording showed before (a blank alternate screen, a composer drawn during start-up,
      // "Waiting for startup", a splash).
      // The host's clock starts at the first output it sees, so it may lag the replay's by up to
      // the slack the status checks allow: the label then, or that much later, must be waiting.
      const v = o.idleThenType;
      expect(v, 'the caller waited').toBeDefined();
      const waiting = (t: number): boolean => /^(awaiting-input|exited)$/.test(labelAt(o.labels, t)?.state ?? '');
      const label = labelAt(o.labels, v?.t ?? 0);
      if (v?.wait === 'idle') expect(waiting(v.t) || waiting(v.t + AFTER_CHANGE_SLACK_S), `typed at ${JSON.stringify(v)} into ${label?.state}/${label?.situation}`).toBe(true);
      if (o.spec.idleThenType?.expect === 'no-idle') expect(v?.wait, JSON.stringify({ ...v, label: label?.situation })).not.toBe('idle');
      else expect(v?.wait, JSON.stringify({ ...v, label: label?.situation })).toBe('idle');
      return;
    }
    case 'idleVersusStatus': {
      // One notion of settled: a wait that times out because "the program is working" and a
      // status() that says it waits for input cannot both be right.
      const v = o.idleVersusStatus;
      expect(v).toBeDefined();
      expect(v?.wait === 'timeout' && v.producing && v.state === 'awaiting-input', JSON.stringify(v)).toBe(false);
      return;
    }
  }
}
