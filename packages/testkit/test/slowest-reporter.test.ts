import { describe, expect, it } from 'vitest';
import type { TestModule } from 'vitest/node';
import {
  fileSeconds,
  SlowestFilesReporter,
  slowestLines,
  type TimedModule,
} from '../src/slowest-reporter.ts';

function timed(path: string, ms: { duration: number; collect?: number; setup?: number }): TimedModule {
  const diagnostic = {
    environmentSetupDuration: 5,
    prepareDuration: 10,
    setupDuration: ms.setup ?? 0,
    collectDuration: ms.collect ?? 0,
    duration: ms.duration,
  };
  return { moduleId: `/repo/${path}`, diagnostic: () => diagnostic as ReturnType<TestModule['diagnostic']> };
}

describe('the slowest test files report', () => {
  it('counts start-up, imports, hooks and tests of a file', () => {
    expect(fileSeconds(timed('a.test.ts', { duration: 2000, collect: 485, setup: 500 }))).toBe(3);
  });

  it('lists the slowest files first, at most the count asked for, with paths from the root', () => {
    const modules = Array.from({ length: 25 }, (_, i) => timed(`test/f${i}.test.ts`, { duration: i * 1000 }));
    const lines = slowestLines(modules, '/repo', 20);
    expect(lines).toHaveLength(20);
    expect(lines[0]).toBe('   24.0 s  test/f24.test.ts');
    expect(lines[19]).toBe('    5.0 s  test/f5.test.ts');
  });

  it('prints the list at the end of a run of several files, and nothing for one file', () => {
    const written: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => {
      written.push(chunk);
      return true;
    }) as typeof process.stdout.write;
    try {
      const reporter = new SlowestFilesReporter(2);
      reporter.onInit({ config: { root: '/repo' } });
      reporter.onTestRunEnd([timed('one.test.ts', { duration: 985 })] as unknown as TestModule[]);
      expect(written).toEqual([]);
      reporter.onTestRunEnd([
        timed('fast.test.ts', { duration: 85 }),
        timed('slow.test.ts', { duration: 9985 }),
        timed('mid.test.ts', { duration: 1985 }),
      ] as unknown as TestModule[]);
    } finally {
      process.stdout.write = write;
    }
    expect(written.join('')).toBe(
      '\nSlowest 2 test files (wall time in their worker):\n   10.0 s  slow.test.ts\n    2.0 s  mid.test.ts\n',
    );
  });
});
