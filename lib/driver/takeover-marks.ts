/**
 * A takeover's timeline, for measuring it (tools/serve-torture.ts `--marks`): with
 * TMUX_DRIVE_TAKEOVER_MARKS=1 in its environment, a standby keeps one mark per point of its
 * takeover from the moment it has the host lock, and writes them to stderr in one go
 * MARK_WINDOW_MS later (`takeover-mark NAME WALL_MS MONO_US`, then `takeover-mark flushed …`):
 * wall clock to line up with the killer's and the clients' times, the monotonic clock of a
 * `--cpu-prof` profile. Kept in memory meanwhile because a write per mark (stderr is a pipe:
 * synchronous) cost the takeover ≈ 70 ms of its own CPU for 20 drives. Off (the default) a mark
 * is one boolean test: nothing is formatted or kept.
 */

const enabled = process.env.TMUX_DRIVE_TAKEOVER_MARKS === '1';
/** Marks are kept this long after the lock, then written (a host's steady calls are not marked). */
const MARK_WINDOW_MS = 3000;
let windowEnd = 0;
let kept: string[] = [];

/** The standby has the host lock: marks are kept from now on, and written when the window ends. */
export function startTakeoverMarks(): void {
  if (!enabled) return;
  windowEnd = performance.now() + MARK_WINDOW_MS;
  takeoverMark('lock');
  setTimeout(() => {
    takeoverMark('flushed');
    process.stderr.write(kept.join(''));
    kept = [];
  }, MARK_WINDOW_MS + 1).unref();
}

/** One point of a takeover's timeline (a name without spaces; a drive or method may follow a colon). */
export function takeoverMark(name: string): void {
  if (!enabled || windowEnd === 0) return;
  const now = performance.now();
  if (now > windowEnd + 1) return;
  kept.push(`takeover-mark ${name} ${(performance.timeOrigin + now).toFixed(2)} ${(process.hrtime.bigint() / 1000n).toString()}\n`);
}
