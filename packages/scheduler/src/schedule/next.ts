/** The runs of a schedule after a given instant, within its limits. */
import { DEFAULT_MAX_INSTANCES, expandRule } from '@calgate/core';
import { nextCronRun } from './cron-next.ts';
import type { Schedule } from './types.ts';

/** Beyond this many runs in one call, callers should page with a later `after`. */
export const MAX_RUNS_PER_CALL = 1000;

function unlimitedRuns(schedule: Schedule, after: number, count: number): number[] {
  switch (schedule.kind) {
    case 'once':
      return schedule.spec.at > after ? [schedule.spec.at] : [];
    case 'interval': {
      const { startAt, everyMs } = schedule.spec;
      const k = after < startAt ? 0 : Math.floor((after - startAt) / everyMs) + 1;
      return Array.from({ length: count }, (_, i) => startAt + (k + i) * everyMs);
    }
    case 'cron': {
      const out: number[] = [];
      let cursor = after;
      while (out.length < count) {
        const next = nextCronRun(schedule.cron, schedule.spec.timeZone, cursor);
        if (next === null) {
          break;
        }
        out.push(next);
        cursor = next;
      }
      return out;
    }
    case 'rrule': {
      const expanded = expandRule(schedule.rule, schedule.dtstart, schedule.spec.timeZone, {
        from: after + 1,
        limit: count,
        maxInstances: Math.max(DEFAULT_MAX_INSTANCES, (schedule.rule.count ?? 0) + 1),
      });
      return expanded.ok ? expanded.value.map((o) => o.instant) : [];
    }
  }
}

/**
 * Up to `count` runs strictly after `after` (epoch ms), ascending. `ran` is how many runs have
 * already happened, counted against `maxRepetitions` (a once schedule has one run in all); runs
 * after `endAt` are dropped.
 */
export function nextRuns(schedule: Schedule, after: number, count: number, ran = 0): number[] {
  const { maxRepetitions, endAt } = schedule.spec;
  const cap = schedule.kind === 'once' ? 1 : (maxRepetitions ?? Number.POSITIVE_INFINITY);
  const remaining = Math.min(cap, maxRepetitions ?? cap) - ran;
  const wanted = Math.min(Math.floor(count), remaining, MAX_RUNS_PER_CALL);
  if (!(wanted > 0)) {
    return [];
  }
  const runs = unlimitedRuns(schedule, after, wanted);
  return endAt === undefined ? runs : runs.filter((t) => t <= endAt);
}

/** The next run strictly after `after`, or null when the schedule is finished. */
export function nextRun(schedule: Schedule, after: number, ran = 0): number | null {
  return nextRuns(schedule, after, 1, ran)[0] ?? null;
}
