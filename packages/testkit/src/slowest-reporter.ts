import { relative } from 'node:path';
import type { Reporter, TestModule } from 'vitest/node';

/** What the report reads of a finished test file (a Vitest `TestModule`). */
export type TimedModule = Pick<TestModule, 'moduleId' | 'diagnostic'>;

/** One test file's wall time in its worker: start-up, imports, hooks and tests. */
export function fileSeconds(module: TimedModule): number {
  const d = module.diagnostic();
  return (
    (d.environmentSetupDuration + d.prepareDuration + d.setupDuration + d.collectDuration + d.duration) / 1000
  );
}

/** The `count` slowest files, slowest first, as lines `  12.3 s  apps/gateway/test/x.test.ts`. */
export function slowestLines(modules: ReadonlyArray<TimedModule>, root: string, count = 20): string[] {
  return [...modules]
    .map((module) => ({ path: relative(root, module.moduleId), seconds: fileSeconds(module) }))
    .sort((a, b) => b.seconds - a.seconds)
    .slice(0, count)
    .map(({ path, seconds }) => `${seconds.toFixed(1).padStart(7)} s  ${path}`);
}

/**
 * Ends a run of more than one file with the slowest 20 test files and their wall time in the
 * worker, so the run's cost stays visible as tests are added.
 */
export class SlowestFilesReporter implements Reporter {
  readonly count: number;
  root = process.cwd();

  constructor(count = 20) {
    this.count = count;
  }

  onInit(vitest: { config: { root: string } }): void {
    this.root = vitest.config.root;
  }

  onTestRunEnd(testModules: ReadonlyArray<TestModule>): void {
    if (testModules.length < 2) {
      return;
    }
    const lines = slowestLines(testModules, this.root, this.count);
    process.stdout.write(
      `\nSlowest ${lines.length} test files (wall time in their worker):\n${lines.join('\n')}\n`,
    );
  }
}
