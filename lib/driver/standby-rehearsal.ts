/**
 * A waiting standby rehearses the CPU work of its takeover, once, while it waits. A new Node
 * process runs the emulator's code cold (interpreted, without type feedback), and at takeover
 * every drive makes two terminals (its mirror, then the one its capture is rebuilt into) and
 * parses its screen, on the takeover's clock: measured here, 20 mirrors made and written took
 * 114 ms cold and ≈ 20 ms once the same code had run. The rehearsal runs that code on scratch
 * mirrors, one per turn of the event loop (a takeover that starts meanwhile stops it), then
 * drops them. It touches no drive, no tmux and no journal.
 */
import { Mirror } from '../emulator/mirror.js';

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

/** Rehearses until done or `stopped()` says the takeover began (checked before each round); resolves with the rounds run. */
export async function rehearseTakeover(size: RehearsalSize, stopped: () => boolean): Promise<number> {
  let round = 0;
  for (; round < ROUNDS; round++) {
    // Each round in a turn of its own, the first too: the standby's lock wait starts before it.
    await new Promise((resolve) => setImmediate(resolve));
    if (stopped()) break;
    const mirror = new Mirror({ cols: size.cols, rows: size.rows, scrollback: size.scrollback });
    try {
      mirror.write(SAMPLE);
      mirror.digest();
      mirror.snapshot({ format: 'text' });
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
