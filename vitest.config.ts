import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import { SlowestFilesReporter } from './packages/testkit/src/slowest-reporter.ts';
import { PlainSummaryReporter } from './packages/testkit/src/summary-reporter.ts';

export default defineConfig({
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    globalSetup: ['packages/testkit/src/global-setup.ts', 'apps/gateway/test/chromium-server.ts'],
    setupFiles: ['apps/gateway/test/setup-http-client.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Most of a test file's time is spent waiting on servers, workers and Chromium, not on a CPU:
    // one file more than there are cores keeps them busy (Vitest's default is one file at a time
    // on two cores). TEST_WORKERS sets another number.
    maxWorkers: Number(process.env.TEST_WORKERS ?? availableParallelism() + 1),
    reporters: ['default', new SlowestFilesReporter(), new PlainSummaryReporter()],
  },
});
