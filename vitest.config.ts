import { defineConfig } from 'vitest/config';
import { PlainSummaryReporter } from './packages/testkit/src/summary-reporter.ts';

export default defineConfig({
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'packages/*/src/**/*.test.ts',
      'apps/*/test/**/*.test.ts',
      'bench/**/*.test.ts',
    ],
    globalSetup: ['packages/testkit/src/global-setup.ts'],
    setupFiles: ['apps/gateway/test/setup-http-client.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    reporters: ['default', new PlainSummaryReporter()],
  },
});
