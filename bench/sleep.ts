/** A plain timer for the benchmarks' own pacing (never in a measured library path). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
