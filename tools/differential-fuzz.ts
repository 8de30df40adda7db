/**
 * The differential fuzzer: generated output streams (tools/output-cases.ts) shown to real tmux and
 * to the mirror (tools/tmux-lab.ts), compared grid against grid. Cases are drawn up front from
 * the seed and run concurrently; each divergence is then replayed from its place in the seed's
 * sequence and shrunk by fast-check, one run after another, to its smallest reproduction.
 */
import fc from 'fast-check';
import { caseBytes, outputCase, type OutputCase } from './output-cases.js';
import type { Divergence, TmuxLab } from './tmux-lab.js';

export interface DivergenceFixture {
  /** The class of divergence, a short kebab-case name (the file's name). */
  readonly class: string;
  /** What tmux does and what the mirror did, in one or two sentences. */
  readonly summary: string;
  readonly cols: number;
  readonly rows: number;
  /** The program's output, as escapeBytes writes it. */
  readonly bytes: string;
}

export interface CampaignOptions {
  readonly seed: number;
  readonly cases: number;
  /** Cases in flight at once (each is a tmux pane and a mirror). */
  readonly concurrency?: number;
  /** Shrink at most this many divergent cases (default 6); 0 reports them unshrunk. */
  readonly shrinkLimit?: number;
  /** Time one shrink may take before its best reproduction so far is kept (default 120 s). */
  readonly shrinkTimeMs?: number;
  readonly onProgress?: (done: number, divergent: number) => void;
}

export interface Finding {
  /** Where the case sits in the seed's sequence (fast-check's path). */
  readonly index: number;
  readonly original: OutputCase;
  /** The smallest reproduction fast-check found (the original when not shrunk). */
  readonly shrunk: OutputCase;
  readonly divergence: Divergence;
}

export interface CampaignResult {
  readonly ran: number;
  readonly clean: number;
  readonly findings: readonly Finding[];
  /** Indices of divergent cases beyond the shrink limit. */
  readonly unshrunk: readonly number[];
  /** Cases whose one-batch mirror fast-forwarded (skipped plain text), and were compared so. */
  readonly fastForwarded: number;
  /** Cases the lab could not run (a deadline, a tmux failure): not divergences. */
  readonly errors: readonly { readonly index: number; readonly message: string }[];
}

export async function runCase(lab: TmuxLab, c: OutputCase): Promise<Divergence> {
  return lab.runCase({ cols: c.cols, rows: c.rows, bytes: caseBytes(c) });
}

export async function runCampaign(lab: TmuxLab, options: CampaignOptions): Promise<CampaignResult> {
  const cases = fc.sample(outputCase, { seed: options.seed, numRuns: options.cases });
  const concurrency = Math.max(1, options.concurrency ?? 6);
  const divergent: { index: number; divergence: Divergence }[] = [];
  const errors: { index: number; message: string }[] = [];
  let next = 0;
  let done = 0;
  let fastForwarded = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < cases.length; i = next++) {
      const c = cases[i] as OutputCase;
      try {
        const d = await runCase(lab, c).catch(() => runCase(lab, c));
        if (!d.equal) divergent.push({ index: i, divergence: d });
        if ((d.fastForward?.skips ?? 0) > 0) fastForwarded++;
      } catch (err) {
        errors.push({ index: i, message: err instanceof Error ? err.message : String(err) });
      }
      options.onProgress?.(++done, divergent.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  divergent.sort((a, b) => a.index - b.index);
  const limit = options.shrinkLimit ?? 6;
  const findings: Finding[] = [];
  for (const { index, divergence } of divergent.slice(0, limit)) {
    const shrunk = await shrink(lab, options.seed, options.cases, index, options.shrinkTimeMs ?? 120_000);
    findings.push({ index, original: cases[index] as OutputCase, shrunk: shrunk?.c ?? (cases[index] as OutputCase), divergence: shrunk?.d ?? divergence });
  }
  if (limit === 0) for (const { index, divergence } of divergent) findings.push({ index, original: cases[index] as OutputCase, shrunk: cases[index] as OutputCase, divergence });
  return {
    ran: cases.length,
    clean: cases.length - divergent.length - errors.length,
    findings,
    unshrunk: limit === 0 ? [] : divergent.slice(limit).map((d) => d.index),
    fastForwarded,
    errors,
  };
}

/** Replays case `index` of the seed's sequence and lets fast-check shrink it. */
async function shrink(lab: TmuxLab, seed: number, numRuns: number, index: number, timeMs: number): Promise<{ c: OutputCase; d: Divergence } | null> {
  let last: { c: OutputCase; d: Divergence } | null = null;
  const result = await fc.check(
    fc.asyncProperty(outputCase, async (c) => {
      const d = await runCase(lab, c);
      if (!d.equal) last = { c, d };
      return d.equal;
    }),
    { seed, path: String(index), numRuns, endOnFailure: false, interruptAfterTimeLimit: timeMs, markInterruptAsFailure: false },
  );
  const counterexample = result.counterexample?.[0];
  if (!counterexample) return last;
  // The last failing run is the counterexample itself unless a later, passing run came after it.
  const d = await runCase(lab, counterexample);
  return d.equal ? last : { c: counterexample, d };
}
