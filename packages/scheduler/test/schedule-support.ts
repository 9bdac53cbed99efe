import { formatInstant, parseInstant, unwrap } from '@calgate/core';
import { createSchedule, nextRuns, type Schedule } from '../src/index.ts';

/** Epoch ms of an RFC 3339 instant. */
export const instant = (text: string): number => unwrap(parseInstant(text));

/** A created cron schedule, "now" being a fixed instant well before the tests' dates. */
export function cronSchedule(cron: string, timeZone: string, now = '2026-01-01T00:00:00Z'): Schedule {
  return unwrap(createSchedule({ kind: 'cron', cron, timeZone }, instant(now))).schedule;
}

/** The next `count` runs strictly after `after`, as RFC 3339 in the schedule's zone. */
export function runs(cron: string, timeZone: string, after: string, count: number): string[] {
  return nextRuns(cronSchedule(cron, timeZone), instant(after), count).map((t) => formatInstant(t, timeZone));
}

/** The error message of a failed result. */
export function message(result: { ok: true } | { ok: false; error: Error }): string {
  if (result.ok) {
    throw new Error('expected a failure');
  }
  return result.error.message;
}
