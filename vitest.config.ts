import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    exclude: ['test/bench/**', 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // expect.poll waits for what other processes or replicas make true "within seconds" (a
    // revocation, a registry change, a cache's expiry); its default of one second would make each
    // such wait a timed assertion on a shared, noisy machine.
    expect: { poll: { timeout: 10_000 } },
    pool: 'forks',
    // Two cores: suites that start servers and model workers run two at a time.
    maxWorkers: 2,
  },
});
