/**
 * Schedules as stored: plain JSON-safe data with instants as epoch milliseconds. A stored spec is
 * turned back into a usable {@link Schedule} with `compileSchedule`.
 */
import type { LocalDateTime, RRule } from '@calgate/core';
import type { CronExpression } from './cron-parse.ts';

/** Limits shared by every kind. */
export interface ScheduleLimits {
  /** Fire at most this many times in all (≥ 1). */
  maxRepetitions?: number;
  /** Fire only at or before this instant (epoch ms). */
  endAt?: number;
}

/** Once, at an instant. */
export interface OnceSpec extends ScheduleLimits {
  kind: 'once';
  at: number;
}

/** A five-field cron expression read as wall-clock time in an IANA zone. */
export interface CronSpec extends ScheduleLimits {
  kind: 'cron';
  cron: string;
  timeZone: string;
}

/** Every `everyMs`, first at `startAt`. */
export interface IntervalSpec extends ScheduleLimits {
  kind: 'interval';
  everyMs: number;
  startAt: number;
}

/** An RFC 5545 RRULE from a wall-clock DTSTART (`YYYY-MM-DDTHH:MM:SS`) in an IANA zone. */
export interface RRuleSpec extends ScheduleLimits {
  kind: 'rrule';
  rrule: string;
  dtstart: string;
  timeZone: string;
}

export type ScheduleSpec = OnceSpec | CronSpec | IntervalSpec | RRuleSpec;
export type ScheduleKind = ScheduleSpec['kind'];

/** A spec with its expression parsed, ready for next-run computation. */
export type Schedule =
  | { kind: 'once'; spec: OnceSpec }
  | { kind: 'cron'; spec: CronSpec; cron: CronExpression }
  | { kind: 'interval'; spec: IntervalSpec }
  | { kind: 'rrule'; spec: RRuleSpec; rule: RRule; dtstart: LocalDateTime };

/** What a caller asks for, as text (instants are RFC 3339 with an offset). */
export type ScheduleRequest =
  | { kind: 'once'; at: string }
  | { kind: 'cron'; cron: string; timeZone: string }
  | { kind: 'interval'; every: string | number; startAt?: string }
  | { kind: 'rrule'; rrule: string; dtstart: string; timeZone: string };

export interface ScheduleRequestLimits {
  maxRepetitions?: number;
  /** RFC 3339 with an offset; must come after the first run. */
  endAt?: string;
}

export interface CreatedSchedule {
  schedule: Schedule;
  /** The first run (epoch ms). A once or interval start up to the tolerance in the past is kept as given. */
  firstRun: number;
}
