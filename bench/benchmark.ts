/**
 * What every benchmark returns. A benchmark measures the library and its baselines in the same
 * run and reports rows (one per path measured) plus verdicts: ratios against a baseline, or the
 * absolute targets the brief sets, each marked met or not.
 */

export interface BenchOptions {
  /** Smaller workloads and shorter windows (a smoke run). */
  readonly quick: boolean;
  /** Progress lines (stderr), so a slow phase is visible while it runs. */
  readonly log: (message: string) => void;
}

export interface Row {
  /** The path measured, e.g. "tmux-drive sendText → mirror grid". */
  readonly subject: string;
  /** True for a baseline (the thing ratios are taken against). */
  readonly baseline: boolean;
  /** One value per column of the result; null where the figure does not apply. */
  readonly values: readonly (number | null)[];
}

export interface Verdict {
  /** e.g. "library p50 / control-mode floor p50". */
  readonly label: string;
  readonly value: number;
  /** "x" for a ratio, otherwise the unit of an absolute figure. */
  readonly unit: string;
  /** Human-readable target, e.g. "≤ 1 ms"; absent when the figure is informational. */
  readonly target?: string;
  readonly met?: boolean;
}

export interface BenchResult {
  readonly name: string;
  /** One line: what ran, how much, which pane size. */
  readonly workload: string;
  readonly columns: readonly string[];
  readonly rows: readonly Row[];
  readonly verdicts: readonly Verdict[];
  readonly notes: readonly string[];
  /** Per-sample or per-round data for latest.json. */
  readonly detail?: unknown;
}

export interface Benchmark {
  readonly name: string;
  readonly summary: string;
  run(options: BenchOptions): Promise<BenchResult>;
}

export function ratioVerdict(label: string, value: number, target?: { text: string; ok: (v: number) => boolean }): Verdict {
  return target ? { label, value, unit: 'x', target: target.text, met: target.ok(value) } : { label, value, unit: 'x' };
}
