/**
 * Replays the frame corpora through classifyScreen and prints the yardstick of issue 12:
 *
 * - test/fixtures/screens: the 53-frame corpus (real programs and labelled synthetic frames);
 *   every frame must be classified as labelled.
 * - test/fixtures/cli-frames: frames recorded from the real AI CLIs and ordinary programs
 *   (npm run record-clis), each labelled by a person; the ones today's classifier gets wrong
 *   are listed in cli-frames/known-wrong.json.
 *
 * It prints the confusion matrix (labelled state down, classified across) over real and
 * synthetic frames separately and per program, the working frames read as awaiting-input, the
 * live dialogs that would be neither escalated nor answered, dangerous dialogs some policy would
 * answer, and every misreading grouped by situation. Exits 1 when a screens frame is wrong, or
 * when the known-wrong list no longer matches (a listed frame now right, an unlisted frame wrong).
 *
 *   npm run corpus
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadProfileFiles } from '../lib/driver/profile-files.js';
import { formatMatrix, judgedMatrix, judgeRecordedFrames, judgeScreens, loadCorpus, loadKnownWrong, loadRecordedFrames, replayCorpus, type JudgedFrame } from './fixture-format.js';
import { packageRoot } from './record/capture.js';
import { judgeAgainstLabels, recordingNames, type RecordingTimeline } from './record/recording-format.js';

const root = packageRoot();
const profiles = loadProfileFiles();
const screens = replayCorpus(loadCorpus(join(root, 'test', 'fixtures', 'screens')), profiles);
const framesDir = join(root, 'test', 'fixtures', 'cli-frames');
const recorded = judgeRecordedFrames(loadRecordedFrames(framesDir), profiles);
const knownWrong = loadKnownWrong(framesDir);
const all = [...judgeScreens(screens), ...recorded];

const pct = (n: number, d: number): string => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)}%`);
const indent = (text: string): string => text.replace(/^/gm, '  ');
const got = (j: JudgedFrame): string => `${j.verdict.state}/${j.verdict.reason}${j.verdict.dialog ? ` (${j.verdict.dialog.kind})` : ''}`;
function block(title: string, frames: readonly JudgedFrame[]): void {
  const state = frames.filter((f) => f.stateOk).length;
  const full = frames.filter((f) => f.ok).length;
  console.log(`\n${title}: ${frames.length} frames; state as labelled ${pct(state, frames.length)} (${state}), everything as labelled ${pct(full, frames.length)} (${full})`);
  if (frames.length > 0) console.log(indent(formatMatrix(judgedMatrix(frames))));
}

// ---- the screens corpus: every frame as labelled --------------------------------------------------
const screensWrong = screens.filter((r) => !r.ok);
const synthetic = screens.filter((r) => r.fixture.synthetic).length;
console.log(`test/fixtures/screens: ${screens.length} frames (${screens.length - synthetic} recorded from real programs, ${synthetic} synthetic), ${screens.length - screensWrong.length} as labelled`);
for (const r of screensWrong) console.log(`  ✗ ${r.name}: label ${r.fixture.label.state}/${r.fixture.label.reason}, got ${r.verdict.state}/${r.verdict.reason}`);

// ---- matrices --------------------------------------------------------------------------------------
const real = all.filter((f) => !f.synthetic);
const ai = real.filter((f) => f.program !== 'programs');
block('Real frames, all (screens + cli-frames)', real);
block('Real frames of the AI CLIs', ai);
block('Synthetic frames (screens; aider is synthetic only: it cannot be installed here)', all.filter((f) => f.synthetic));
for (const program of [...new Set(all.map((f) => f.program))].sort()) {
  for (const synthetic of [false, true]) {
    const mine = all.filter((f) => f.program === program && f.synthetic === synthetic);
    if (mine.length > 0) block(`${program}, ${synthetic ? 'synthetic' : 'real'}`, mine);
  }
}

// ---- the costly mistakes -----------------------------------------------------------------------------
const list = (frames: readonly JudgedFrame[]): string => frames.map((f) => `\n  ${f.name}: got ${got(f)}`).join('');
const busyAsWaiting = all.filter((f) => f.label.state === 'working' && f.verdict.state === 'awaiting-input');
console.log(`\nworking frames read as awaiting-input: ${busyAsWaiting.length} (${busyAsWaiting.filter((f) => !f.synthetic).length} real)${list(busyAsWaiting)}`);
const unescalated = all.filter((f) => f.unescalated);
console.log(`live dialogs safe-only would neither escalate nor answer: ${unescalated.length}${list(unescalated)}`);
const dangerous = all.filter((f) => f.dangerousAnswered);
console.log(`auth / approval / destructive dialogs some policy would answer: ${dangerous.length}${list(dangerous)}`);

// ---- every misreading, by situation ------------------------------------------------------------------
const wrong = recorded.filter((f) => !f.ok);
console.log(`\nrecorded frames not as labelled: ${wrong.length} of ${recorded.length}, by situation:`);
const bySituation = new Map<string, JudgedFrame[]>();
for (const f of wrong) bySituation.set(f.label.situation ?? '-', [...(bySituation.get(f.label.situation ?? '-') ?? []), f]);
for (const [situation, frames] of [...bySituation].sort((a, b) => b[1].length - a[1].length)) {
  console.log(`  ${situation} (${frames.length})`);
  for (const f of frames) console.log(`    ${f.name}: label ${f.label.state}${f.label.dialog ? ` (${f.label.dialog} dialog)` : ''}, got ${got(f)} — ${f.wrong.join(', ')}${knownWrong[f.name] ? ` [known: ${knownWrong[f.name]}]` : ''}`);
}

// ---- the library live, during the recordings (one run each: timing varies between runs) ----------------
const recordingsDir = join(root, 'test', 'fixtures', 'cli-recordings');
console.log('\nthe library during the recordings (status() as sampled every 250 ms, the state events it published), judged every 0.1 s against the labels:');
console.log(`  ${'recording'.padEnd(20)}${'status agrees'.padStart(16)}${'working→awaiting'.padStart(18)}${'events agree'.padStart(16)}${'working→awaiting'.padStart(18)}`);
for (const name of recordingNames(recordingsDir)) {
  const t = JSON.parse(readFileSync(join(recordingsDir, `${name}.timeline.json`), 'utf8')) as RecordingTimeline;
  const opts = { from: t.labels[0]?.t ?? 0, to: t.durationS, heldStepS: 0.1 };
  const status = judgeAgainstLabels(t.observed.status, t.labels, { ...opts, afterChangeS: 0.6 });
  const events = judgeAgainstLabels(t.observed.events, t.labels, { ...opts, afterChangeS: 1.0 });
  const cell = (n: number, d: number): string => `${pct(n, d)} of ${(d / 10).toFixed(1)}s`;
  console.log(`  ${name.padEnd(20)}${cell(status.agree, status.judged).padStart(16)}${`${(status.workingAsAwaiting / 10).toFixed(1)}s`.padStart(18)}${cell(events.agree, events.judged).padStart(16)}${`${(events.workingAsAwaiting / 10).toFixed(1)}s`.padStart(18)}`);
}

// ---- the known-wrong list must say exactly what is wrong today -----------------------------------------
const nowRight = Object.keys(knownWrong).filter((n) => recorded.find((f) => f.name === n)?.ok !== false);
const unlisted = wrong.filter((f) => knownWrong[f.name] === undefined);
console.log(`\nknown-wrong list (cli-frames/known-wrong.json): ${Object.keys(knownWrong).length} frames`);
if (nowRight.length > 0) console.log(`  listed but right now (or gone), remove them: ${nowRight.join(', ')}`);
if (unlisted.length > 0) console.log(`  wrong but not listed: ${unlisted.map((f) => f.name).join(', ')}`);
if (screensWrong.length > 0 || nowRight.length > 0 || unlisted.length > 0) process.exitCode = 1;
