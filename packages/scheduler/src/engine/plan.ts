/** What a worker does with an occurrence it claims: deliver it or record it missed, and what runs next. */
import type { ClaimPlan, ScheduleRecord } from '@calgate/store';
import { MAX_MISSED_ROWS } from '@calgate/store';
import { compileSchedule } from '../schedule/compile.ts';
import { nextRun } from '../schedule/next.ts';
import type { ScheduleSpec } from '../schedule/types.ts';

/**
 * The plan for the occurrence at `at` of `schedule`, read at `now`: older than `graceMs`, it is
 * missed; the next run is the first after it, and runs that are themselves older than the grace are
 * skipped and recorded as missed (up to MAX_MISSED_ROWS, then skipped without a row each). Missed
 * runs do not count as repetitions: `maxRepetitions` bounds the prompts actually sent.
 */
export function planOccurrence(
  schedule: ScheduleRecord,
  at: number,
  now: number,
  graceMs: number,
): ClaimPlan {
  const compiled = compileSchedule(schedule.spec as unknown as ScheduleSpec);
  const action = now - at > graceMs ? 'missed' : 'deliver';
  const done = schedule.repetitionsDone + (action === 'deliver' ? 1 : 0);
  if (!compiled.ok) {
    // A spec stored by an older release that no longer compiles delivers this run and ends.
    return { action, nextRunAt: null, missed: [] };
  }
  const missed: Date[] = [];
  let next = nextRun(compiled.value, at, done);
  while (next !== null && now - next > graceMs && missed.length < MAX_MISSED_ROWS) {
    missed.push(new Date(next));
    next = nextRun(compiled.value, next, done);
  }
  if (next !== null && now - next > graceMs) {
    next = nextRun(compiled.value, now - graceMs, done);
  }
  return { action, nextRunAt: next === null ? null : new Date(next), missed };
}
