/**
 * Creating a schedule from a caller's request: parse, validate against the current time, and
 * compute the first run. Errors are `invalid_argument` and name the input at fault.
 */
import {
  CalgateError,
  err,
  formatInstant,
  formatLocalDateTime,
  formatRRule,
  naiveMs,
  ok,
  parseDateTimeFields,
  parseInstant,
  parseRRule,
  type Result,
  toLocal,
  validateTimeZone,
} from '@calgate/core';
import { compileSchedule } from './compile.ts';
import { parseCron } from './cron-parse.ts';
import { parseInterval } from './interval.ts';
import { nextRun } from './next.ts';
import type {
  CreatedSchedule,
  Schedule,
  ScheduleRequest,
  ScheduleRequestLimits,
  ScheduleSpec,
} from './types.ts';

/**
 * A once time or interval start this far in the past is still accepted (and runs straight away):
 * a caller that rounds "now" to the minute, or whose clock lags a little, is not refused.
 */
export const PAST_TOLERANCE_MS = 60_000;

function invalid(message: string, context: Record<string, unknown> = {}): Result<never, CalgateError> {
  return err(new CalgateError('invalid_argument', message, { context }));
}

/** An RFC 3339 instant named `name`, not before `now` less the tolerance. */
function futureInstant(name: string, text: string, now: number): Result<number, CalgateError> {
  const parsed = parseInstant(text);
  if (!parsed.ok) {
    return invalid(`${name}: ${parsed.error.message}`, { [name]: text });
  }
  if (parsed.value < now - PAST_TOLERANCE_MS) {
    return invalid(`${name} '${text}' is in the past (it is now ${formatInstant(now)}).`, { [name]: text });
  }
  return parsed;
}

function buildSpec(request: ScheduleRequest, now: number): Result<ScheduleSpec, CalgateError> {
  switch (request.kind) {
    case 'once': {
      const at = futureInstant('at', request.at, now);
      return at.ok ? ok({ kind: 'once', at: at.value }) : at;
    }
    case 'interval': {
      const every = parseInterval(request.every);
      if (!every.ok) {
        return every;
      }
      if (request.startAt === undefined) {
        return ok({ kind: 'interval', everyMs: every.value, startAt: now + every.value });
      }
      const startAt = futureInstant('startAt', request.startAt, now);
      return startAt.ok ? ok({ kind: 'interval', everyMs: every.value, startAt: startAt.value }) : startAt;
    }
    case 'cron': {
      const zone = validateTimeZone(request.timeZone);
      if (!zone.ok) {
        return zone;
      }
      const cron = parseCron(request.cron);
      return cron.ok ? ok({ kind: 'cron', cron: cron.value.source, timeZone: zone.value }) : cron;
    }
    case 'rrule': {
      const zone = validateTimeZone(request.timeZone);
      if (!zone.ok) {
        return zone;
      }
      const rule = parseRRule(request.rrule);
      if (!rule.ok) {
        return rule;
      }
      const fields = parseDateTimeFields(request.dtstart, true);
      if (!fields.ok) {
        return invalid(`dtstart: ${fields.error.message}`, { dtstart: request.dtstart });
      }
      const { local, offsetMinutes } = fields.value;
      // A DTSTART given with an offset is read as that instant's wall-clock time in the zone.
      const wall =
        offsetMinutes === undefined
          ? local
          : toLocal(naiveMs({ ...local, millisecond: 0 }) - offsetMinutes * 60_000, zone.value);
      return ok({
        kind: 'rrule',
        rrule: formatRRule(rule.value),
        dtstart: formatLocalDateTime({ ...wall, millisecond: 0 }),
        timeZone: zone.value,
      });
    }
    default:
      return invalid(`Unknown schedule kind '${String((request as { kind?: unknown }).kind)}'.`);
  }
}

function describe(schedule: Schedule): string {
  switch (schedule.kind) {
    case 'cron':
      return `The cron expression '${schedule.spec.cron}'`;
    case 'rrule':
      return `The RRULE '${schedule.spec.rrule}' from ${schedule.spec.dtstart} ${schedule.spec.timeZone}`;
    default:
      return 'The schedule';
  }
}

function firstRunOf(schedule: Schedule, now: number): Result<number, CalgateError> {
  if (schedule.kind === 'once') {
    return ok(schedule.spec.at);
  }
  if (schedule.kind === 'interval') {
    return ok(schedule.spec.startAt);
  }
  const unbounded = { ...schedule, spec: { ...schedule.spec, endAt: undefined } } as Schedule;
  const first = nextRun(unbounded, now);
  if (first !== null) {
    return ok(first);
  }
  if (schedule.kind === 'cron') {
    return invalid(
      `${describe(schedule)} never runs: no date matches its day-of-month, month and day-of-week fields.`,
      { cron: schedule.spec.cron },
    );
  }
  return invalid(`${describe(schedule)} never runs after now (${formatInstant(now)}).`, {
    rrule: schedule.spec.rrule,
  });
}

/**
 * A new schedule from a request and its limits, validated against `now` (epoch ms): once times
 * and interval starts must not be in the past (beyond {@link PAST_TOLERANCE_MS}); cron and RRULE
 * schedules must run at least once after `now`; `maxRepetitions` must be ≥ 1; `endAt` must come
 * after the first run.
 */
export function createSchedule(
  request: ScheduleRequest & ScheduleRequestLimits,
  now: number,
): Result<CreatedSchedule, CalgateError> {
  const built = buildSpec(request, now);
  if (!built.ok) {
    return built;
  }
  const spec: ScheduleSpec = { ...built.value };
  if (request.maxRepetitions !== undefined) {
    spec.maxRepetitions = request.maxRepetitions;
  }
  let endAt: number | undefined;
  if (request.endAt !== undefined) {
    const parsed = parseInstant(request.endAt);
    if (!parsed.ok) {
      return invalid(`endAt: ${parsed.error.message}`, { endAt: request.endAt });
    }
    endAt = parsed.value;
    spec.endAt = endAt;
  }
  const compiled = compileSchedule(spec);
  if (!compiled.ok) {
    return compiled;
  }
  const schedule = compiled.value;
  const first = firstRunOf(schedule, now);
  if (!first.ok) {
    return first;
  }
  if (endAt !== undefined && endAt <= first.value) {
    const zone = 'timeZone' in schedule.spec ? schedule.spec.timeZone : undefined;
    return invalid(
      `endAt '${request.endAt}' is not after the first run at ${formatInstant(first.value, zone)}.`,
      { endAt: request.endAt },
    );
  }
  return ok({ schedule, firstRun: first.value });
}
