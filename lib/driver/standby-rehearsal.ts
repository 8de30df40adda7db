/**
 * A waiting standby rehearses the CPU work of its takeover, once, while it waits. A new Node
 * process runs the emulator's code cold (interpreted, without type feedback), and at takeover
 * every drive's mirror parses its rebuilt screen, and its first input and first verdict read that
 * screen, on the takeover's clock: measured here, 20 mirrors made and written took 114 ms cold and
 * ≈ 20 ms once the same code had run. The rehearsal runs that code on scratch mirrors, a step per
 * turn of the event loop (a takeover that starts meanwhile stops it), then drops them. It touches
 * no drive, no tmux and no journal.
 *
 * Before that, the standby makes the terminals the takeover's mirrors will take (spare terminals,
 * lib/emulator/headless.ts: prepareTerminals), one per drive it will re-attach, one per turn: a
 * takeover then makes no terminal, and rebuilds each capture into that one (Mirror.rebuild).
 */
import { dropSpareTerminals, prepareSpareTerminal, spareTerminals } from '../emulator/headless.js';
import { Mirror } from '../emulator/mirror.js';
import type { ProcessActivitySample } from '../perceive/activity.js';
import type { Profile } from '../perceive/profile.js';
import { classify } from '../perceive/status.js';
import { redactTerminalText } from '../policy/redact.js';
import { redactStrings } from '../policy/redact-values.js';

/** Mirrors made: enough for V8 to compile the paths a takeover of many drives runs. */
const ROUNDS = 24;

/** What a shell's screen holds: prompts, SGR colours, a wide character, a line longer than the screen. */
const SAMPLE = new TextEncoder().encode(
  Array.from({ length: 40 }, (_, i) => `\x1b[1;32muser@host\x1b[0m:\x1b[34m~/w\x1b[0m$ echo ${i} 漢字\r\n${i} ${'x'.repeat(i * 3)}\r\n`).join('') + '\x1b[1;32muser@host\x1b[0m:\x1b[34m~/w\x1b[0m$ ',
);

export interface RehearsalSize {
  readonly cols: number;
  readonly rows: number;
  readonly scrollback: number;
}

/**
 * What the takeover's first verdicts use besides the emulator: the very profile objects its drives
 * will classify with (each regex of a profile is compiled by V8 on its first match, per object, and
 * a profile's dialog and marker rules are code the engine's rules alone do not run), and one sample
 * of a process tree (the /proc walk each drive's first quiet takes).
 */
export interface RehearsalWork {
  readonly profiles: readonly Profile[];
  /** A sample of a real process tree on this host (read-only; the standby's own). */
  readonly sampleActivity: () => ProcessActivitySample | undefined;
}

/**
 * Rounds that also sample a process tree. Each sample reads every process's stat on the machine
 * (finding the standby's children) and its children's counters: ≈ 7 ms here, 10 ms and more
 * loaded; in all 24 rounds the walks were half the rehearsal's CPU, and the garbage they left was
 * collected on the takeover's clock (profiled: a standby killed into 0.2 s after it said it waits).
 * Two compile the walk; the rounds after classify with the last sample.
 */
export const SAMPLED_ROUNDS = 2;

/** One turn of the event loop, then whether the rehearsal goes on (`stopped()` not yet true). */
async function goOn(stopped: () => boolean): Promise<boolean> {
  await new Promise((resolve) => setImmediate(resolve));
  return !stopped();
}

/**
 * Rehearses until done or `stopped()` says the takeover began; resolves with the rounds completed.
 * Each round is three steps, each in a turn of its own (the first too: the standby's lock wait
 * starts before it), and `stopped()` is asked before each: a lock granted mid-round (flock(1)'s exit
 * is seen between turns) waits for one step, not for the rest of a round (a round took 40–65 ms
 * on two loaded cores).
 */
export async function rehearseTakeover(size: RehearsalSize, stopped: () => boolean, work: RehearsalWork = { profiles: [], sampleActivity: () => undefined }): Promise<number> {
  let round = 0;
  let sample: ProcessActivitySample | undefined;
  for (; round < ROUNDS; round++) {
    if (!(await goOn(stopped))) break;
    // One line more than a drive's: a spare terminal made for a drive is not taken here.
    const mirror = new Mirror({ cols: size.cols, rows: size.rows, scrollback: size.scrollback + 1 });
    try {
      mirror.write(SAMPLE);
      mirror.digest();
      // The first input's and the first verdict's reads: a cursor mark and rows (the input
      // baseline), the text and the cells classified (the engine's rules; a drive's profile adds
      // its own).
      const mark = mirror.markCursorRow();
      mirror.visibleRows(mark.visibleRow() ?? 0, mirror.rows, true);
      mark.dispose();
      const snapshot = { ...mirror.snapshot({ format: 'text' }), cells: mirror.cells().cells };
      classify({ snapshot, now: round, lastOutputAt: 0 });
      if (!(await goOn(stopped))) break;
      // As a drive's first quiet and first flowing window classify: its own profile, a sample of
      // its process tree taken when output stopped, output that is still flowing.
      if (round < SAMPLED_ROUNDS) sample = work.sampleActivity();
      const now = performance.now();
      for (const profile of work.profiles) {
        classify({ snapshot, now, lastOutputAt: now - 300, lastChangeAt: now - 300, interactions: 1, profile, stuckMs: 30_000, sample });
        classify({ snapshot, now, lastOutputAt: now - 50, profile, flowingMs: 250 });
      }
      if (!(await goOn(stopped))) break;
      // The secret redaction each input's audit line and each answer through the host run (the
      // rules are some 20 regexes V8 compiles, and tiers up, on their first matches: measured
      // ≈ 100 ms of a takeover's first round of 20 drives, profiled, when left cold).
      redactTerminalText(`echo ${round}-$((6 * 7))`);
      redactStrings({ text: snapshot.content, note: `export TOKEN=${round}` }, true);
      // A rebuild replaces the terminal: the same path as reset().
      mirror.reset();
      mirror.write(SAMPLE);
      mirror.digest();
    } finally {
      mirror.dispose();
    }
  }
  return round;
}

/**
 * Makes spare terminals of the size a takeover's mirrors start at, one per turn of the event loop,
 * until `wanted()` are ready or `stopped()`; resolves with how many it made.
 */
export async function prepareTerminals(size: RehearsalSize, wanted: () => number, stopped: () => boolean): Promise<number> {
  let made = 0;
  for (;;) {
    await new Promise((resolve) => setImmediate(resolve));
    if (stopped() || spareTerminals().ready >= wanted()) return made;
    if (!prepareSpareTerminal(size.cols, size.rows, size.scrollback)) return made;
    made++;
  }
}

/** The spares not taken are let go (the takeover is done, or the standby stopped). */
export function dropTerminals(): void {
  dropSpareTerminals();
}
