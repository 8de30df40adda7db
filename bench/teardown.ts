/**
 * Cleanup steps of one benchmark, run in reverse order even when the benchmark failed. A failing
 * step does not stop the others, and never masks the benchmark's own error. Every live Teardown
 * is also run on SIGINT/SIGTERM (run.ts), so an interrupted run leaves no tmux server behind.
 */

const live = new Set<Teardown>();

export class Teardown {
  readonly #steps: Array<{ label: string; fn: () => unknown }> = [];
  #ran = false;

  constructor() {
    live.add(this);
  }

  /** Registers a step; steps run last-registered first. */
  add(label: string, fn: () => unknown): void {
    this.#steps.push({ label, fn });
  }

  /** Runs every step; returns the failures (label: message) instead of throwing. */
  async run(): Promise<string[]> {
    if (this.#ran) return [];
    this.#ran = true;
    live.delete(this);
    const failures: string[] = [];
    for (const step of this.#steps.splice(0).reverse()) {
      try {
        await step.fn();
      } catch (err) {
        failures.push(`${step.label}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    return failures;
  }
}

/** Runs `body` with a Teardown; cleanup failures are reported through `log`, never thrown over a body error. */
export async function withTeardown<T>(log: (message: string) => void, body: (teardown: Teardown) => Promise<T>): Promise<T> {
  const teardown = new Teardown();
  try {
    return await body(teardown);
  } finally {
    for (const failure of await teardown.run()) log(`cleanup failed: ${failure}`);
  }
}

/** Runs every Teardown still registered (an interrupted run). */
export async function runAllTeardowns(): Promise<void> {
  await Promise.all([...live].map((t) => t.run()));
}
