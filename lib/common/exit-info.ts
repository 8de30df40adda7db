/** How a driven program ended, as every backend reports it. */
export interface ExitInfo {
  /** Exit status, or null when the program was killed by a signal. */
  readonly code: number | null;
  /** Signal number, or null. */
  readonly signal: number | null;
}
