/** Turning a stored spec back into a {@link Schedule}, checking its shape on the way. */
import {
  CalgateError,
  err,
  formatLocalDateTime,
  ok,
  parseDateTimeFields,
  parseRRule,
  type Result,
  validateTimeZone,
} from '@calgate/core';
import { parseCron } from './cron-parse.ts';
import { MAX_INTERVAL_MS, MIN_INTERVAL_MS } from './interval.ts';
import type { Schedule, ScheduleSpec } from './types.ts';

/** RRULE COUNT above this is refused: every next-run computation walks the series from DTSTART. */
export const MAX_RRULE_COUNT = 100_000;

function invalid(message: string, context: Record<string, unknown> = {}): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message, { context }));
}

const isInstant = (value: unknown): value is number => Number.isSafeInteger(value);

function checkLimits(spec: ScheduleSpec): Result<null, CalgateError> {
  const { maxRepetitions, endAt } = spec;
  if (maxRepetitions !== undefined && (!Number.isSafeInteger(maxRepetitions) || maxRepetitions < 1)) {
    return invalid(`maxRepetitions must be a whole number of at least 1, got ${String(maxRepetitions)}.`, {
      maxRepetitions,
    });
  }
  if (endAt !== undefined && !isInstant(endAt)) {
    return invalid('endAt must be an instant.', { endAt });
  }
  return ok(null);
}

/** A usable schedule from a spec, or an `invalid_argument` error naming what is wrong. */
export function compileSchedule(spec: ScheduleSpec): Result<Schedule, CalgateError> {
  const limits = checkLimits(spec);
  if (!limits.ok) {
    return limits;
  }
  switch (spec.kind) {
    case 'once':
      return isInstant(spec.at)
        ? ok({ kind: 'once', spec })
        : invalid('at must be an instant.', { at: spec.at });
    case 'interval':
      if (!isInstant(spec.startAt)) {
        return invalid('startAt must be an instant.', { startAt: spec.startAt });
      }
      if (
        !Number.isSafeInteger(spec.everyMs) ||
        spec.everyMs < MIN_INTERVAL_MS ||
        spec.everyMs > MAX_INTERVAL_MS ||
        spec.everyMs % 1000 !== 0
      ) {
        return invalid('The interval must be a whole number of seconds from 1 s to 3650 days.', {
          everyMs: spec.everyMs,
        });
      }
      return ok({ kind: 'interval', spec });
    case 'cron': {
      const zone = validateTimeZone(spec.timeZone);
      if (!zone.ok) {
        return zone;
      }
      const cron = parseCron(spec.cron);
      return cron.ok ? ok({ kind: 'cron', spec, cron: cron.value }) : cron;
    }
    case 'rrule': {
      const zone = validateTimeZone(spec.timeZone);
      if (!zone.ok) {
        return zone;
      }
      const rule = parseRRule(spec.rrule);
      if (!rule.ok) {
        return rule;
      }
      if ((rule.value.count ?? 0) > MAX_RRULE_COUNT) {
        return invalid(
          `RRULE COUNT may be at most ${MAX_RRULE_COUNT.toLocaleString('en-US')}; use maxRepetitions to cap the runs instead.`,
          { count: rule.value.count },
        );
      }
      const dtstart = parseDateTimeFields(spec.dtstart, true);
      if (!dtstart.ok) {
        return dtstart;
      }
      if (dtstart.value.offsetMinutes !== undefined) {
        return invalid(
          `DTSTART '${spec.dtstart}' must be a wall-clock date-time without an offset, e.g. '${formatLocalDateTime({ ...dtstart.value.local, millisecond: 0 })}'.`,
          { dtstart: spec.dtstart },
        );
      }
      return ok({
        kind: 'rrule',
        spec,
        rule: rule.value,
        dtstart: { ...dtstart.value.local, millisecond: 0 },
      });
    }
    default:
      return invalid(`Unknown schedule kind '${String((spec as { kind?: unknown }).kind)}'.`);
  }
}
