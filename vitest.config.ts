import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real tmux servers; two workers suit the 2-core machines this runs on.
    pool: 'forks',
    maxWorkers: 2,
    // Real programs on shared 2-core machines: a test that fails is run once more before it
    // counts as failed (timing under a neighbour's load, never a changed assertion). A failure
    // that repeats is real.
    retry: 1,
  },
});
