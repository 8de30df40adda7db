import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real tmux servers; two workers suit the 2-core machines this runs on.
    pool: 'forks',
    maxWorkers: 2,
  },
});
