/**
 * Where a queue of terminal bytes may fast-forward: the plain runs (printable ASCII, CR and LF,
 * nothing else) and, in each, its latest cut — a CR with at least `rows + scrollback` fresh lines
 * after it. PendingOutput owns the bytes and feeds them here in order (one pass, O(n), a few
 * numbers per byte); whether the terminal may skip to a cut is decided by the mirror when it gets
 * there, from the terminal's live state (see `Mirror`, fastForwardSafe in headless.ts).
 *
 * Why it is exact, for a skip from `head` (inside a plain run, everything before it parsed) to a
 * cut `c` (a CR of the same run) with `A` line advances (LFs and autowraps, counted from column 0
 * at `c`) between `c` and the end of the run, and A ≥ (rows − 1) + (rows + scrollback):
 * - the bytes from `c` on meet the same column in both streams (the CR sets it to 0), the same pen
 *   (plain text sets none), the same modes and charsets (plain text changes none; the mirror checks
 *   the ones that change how plain text is laid out: autowrap on, insert off, no charset, the
 *   scroll region the whole screen, the main screen, no joined character pending);
 * - the cursor only goes down (CR and LF never go up; the region is the screen) and reaches the
 *   bottom row within rows − 1 advances in either stream; from there on every advance appends a
 *   fresh, blank line (erased with the same pen) in both streams, and the same bytes fill it;
 * - the buffer keeps the last rows + scrollback lines, so after that many fresh lines it holds
 *   nothing older: not the lines the skipped bytes wrote, not the lines of before the run. Markers
 *   on old lines are disposed in both streams (their lines are trimmed in both).
 * The pending wrap and the cursor's column before `c` do not matter (the CR resets the column);
 * origin mode does not either (CR, LF and printing do not read it).
 */

const CR = 0x0d;
const LF = 0x0a;
const ESC = 0x1b;

const enum Scan {
  Ground,
  Escape,
  EscapeIntermediate,
  Csi,
}

/** A plain run long enough to skip into: skipping from inside [start, cut) to cut is allowed. */
export interface SkippableRun {
  readonly start: number;
  readonly cut: number;
  readonly cols: number;
  readonly rows: number;
}

export class PlainRuns {
  #scan = Scan.Ground;
  #cols: number;
  #rows: number;
  /** Absolute offset where the open plain run began; -1: not in one. */
  #runStart = -1;
  /** Column in the open run; -1 until its first CR. */
  #x = -1;
  /** Line advances in the open run since its first CR. */
  #advances = 0;
  /** The open run's CRs still worth a cut (absolute offsets) and the advances before each. */
  #crAt: number[] = [];
  #crAdvances: number[] = [];
  #crHead = 0;
  /** Closed runs with a cut, in stream order. */
  readonly #runs: SkippableRun[] = [];

  constructor(
    cols: number,
    rows: number,
    private readonly scrollback: number,
  ) {
    this.#cols = cols;
    this.#rows = rows;
  }

  get cols(): number {
    return this.#cols;
  }

  get rows(): number {
    return this.#rows;
  }

  /** The scanner is between sequences (plain bytes appended now continue what it saw). */
  get ground(): boolean {
    return this.#scan === Scan.Ground;
  }

  /** Absolute offset where the open plain run began; -1: not in one. */
  get runStart(): number {
    return this.#runStart;
  }

  /** The open run's column is known (it has had a CR). */
  get columnKnown(): boolean {
    return this.#x !== -1;
  }

  /** Fresh lines needed after a cut: rows − 1 to reach the bottom, then the whole buffer. */
  needed(): number {
    return this.#rows - 1 + this.#rows + this.scrollback;
  }

  /** The size plain text is laid out at from now on (the open run ends first: runs do not span it). */
  resize(cols: number, rows: number): void {
    this.endRun();
    this.#cols = cols;
    this.#rows = rows;
  }

  /** Forgets every run and starts afresh at the ground state. */
  reset(cols: number, rows: number): void {
    this.resize(cols, rows);
    this.#runs.length = 0;
    this.#scan = Scan.Ground;
  }

  /**
   * The open run goes on from `runStart` with no CR seen yet worth keeping: what it held before can
   * no longer give the latest cut (the caller resumes the scan at a later sure cut). `dropClosed`:
   * the closed runs are gone too (everything before was skipped).
   */
  restartRun(runStart: number, dropClosed = false): void {
    if (dropClosed) this.#runs.length = 0;
    this.#runStart = runStart;
    this.#advances = 0;
    this.#crAt = [];
    this.#crAdvances = [];
    this.#crHead = 0;
  }

  endRun(): void {
    if (this.#runStart === -1) return;
    const cut = this.openCut();
    if (cut !== -1) this.#runs.push({ start: this.#runStart, cut, cols: this.#cols, rows: this.#rows });
    this.#runStart = -1;
    this.#x = -1;
    this.restartRun(-1);
  }

  /** The open run's latest cut with enough advances after it; -1 when none. */
  openCut(): number {
    if (this.#crHead >= this.#crAt.length) return -1;
    return this.#advances - (this.#crAdvances[this.#crHead] as number) >= this.needed() ? (this.#crAt[this.#crHead] as number) : -1;
  }

  /** The run the offset is in with a cut ahead of it. */
  runAt(offset: number): SkippableRun | undefined {
    for (const run of this.#runs) if (offset >= run.start && offset < run.cut) return run;
    const cut = this.openCut();
    if (this.#runStart !== -1 && offset >= this.#runStart && cut > offset) return { start: this.#runStart, cut, cols: this.#cols, rows: this.#rows };
    return undefined;
  }

  /** The start of the next skippable run after the offset; -1 when none. */
  nextRunStart(offset: number): number {
    for (const run of this.#runs) if (run.start > offset) return run.start;
    if (this.#runStart > offset && this.openCut() !== -1) return this.#runStart;
    return -1;
  }

  /** Forgets the closed runs whose cut the head passed. */
  dropPassed(head: number): void {
    while (this.#runs.length > 0 && (this.#runs[0] as SkippableRun).cut <= head) this.#runs.shift();
  }

  /**
   * Scans `buf[from, tail)`, whose byte `i` is at absolute offset `base + i`. The filter's output is
   * canonical: ESC starts a whole sequence (`ESC [` params final, or ESC intermediates final);
   * UTF-8 characters come whole. Anything but printable ASCII, CR and LF in the ground state ends a
   * plain run.
   */
  scan(buf: Uint8Array, from: number, tail: number, base: number): void {
    const cols = this.#cols;
    let scan = this.#scan;
    for (let i = from; i < tail; i++) {
      const b = buf[i] as number;
      if (scan === Scan.Ground) {
        if (b >= 0x20 && b < 0x7f) {
          // Printable characters up to the next non-printable: the column and the autowraps.
          let j = i + 1;
          while (j < tail && (buf[j] as number) >= 0x20 && (buf[j] as number) < 0x7f) j++;
          if (this.#runStart === -1) this.#runStart = base + i;
          const x = this.#x;
          if (x !== -1) {
            const end = x + (j - i);
            if (end <= cols) this.#x = end;
            else {
              // Each time the column is at the width before a character, the line wraps.
              this.#advance(Math.ceil((end - cols) / cols));
              this.#x = ((end - cols - 1) % cols) + 1;
            }
          }
          i = j - 1;
        } else if (b === CR) {
          if (this.#runStart === -1) this.#runStart = base + i;
          this.#x = 0;
          // A CR with no advance since the last one is the same cut, later: it replaces it (a
          // progress bar redrawn with CR alone for hours keeps one entry, not one per redraw).
          const last = this.#crAdvances.length - 1;
          if (last >= this.#crHead && this.#crAdvances[last] === this.#advances) this.#crAt[last] = base + i;
          else {
            this.#crAt.push(base + i);
            this.#crAdvances.push(this.#advances);
          }
        } else if (b === LF) {
          if (this.#runStart === -1) this.#runStart = base + i;
          if (this.#x !== -1) this.#advance(1);
        } else {
          this.endRun();
          if (b === ESC) scan = Scan.Escape;
        }
      } else if (scan === Scan.Escape) scan = b === 0x5b ? Scan.Csi : b >= 0x20 && b < 0x30 ? Scan.EscapeIntermediate : Scan.Ground;
      else if (scan === Scan.EscapeIntermediate) {
        if (b >= 0x30) scan = Scan.Ground;
      } else if (b >= 0x40) scan = Scan.Ground;
    }
    this.#scan = scan;
  }

  /** `n` line advances; moves to the latest CR that still has enough after it (earlier ones are never better). */
  #advance(n: number): void {
    this.#advances += n;
    const needed = this.needed();
    const at = this.#crAdvances;
    while (this.#crHead + 1 < at.length && this.#advances - (at[this.#crHead + 1] as number) >= needed) this.#crHead++;
    if (this.#crHead > 4096 && this.#crHead * 2 > at.length) {
      this.#crAt = this.#crAt.slice(this.#crHead);
      this.#crAdvances = at.slice(this.#crHead);
      this.#crHead = 0;
    }
  }
}
