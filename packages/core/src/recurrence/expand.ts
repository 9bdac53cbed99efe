/**
 * Expanding one RRULE from a DTSTART given as wall-clock time in an IANA zone into instants,
 * with COUNT, UNTIL, a window, a result limit and a hard cap on the work done.
 */
import { CalgateError } from '../errors.ts';
import { err, ok, type Result } from '../result.ts';
import { epochDay, type LocalDateTime, MS_PER_DAY, MS_PER_HOUR, naiveMs } from '../time/civil.ts';
import { fromNaiveMs } from '../time/zone.ts';
import { type IterationState, iterateRule, planRule } from './engine.ts';
import type { RRule } from './rrule.ts';

export const DEFAULT_MAX_INSTANCES = 10_000;

export interface RuleExpansionOptions {
  /** Only instances starting at or after this instant (epoch ms). */
  from?: number;
  /** Only instances starting before this instant (epoch ms). */
  to?: number;
  /** Stop after returning this many instances. */
  limit?: number;
  /**
   * Hard cap on instances generated (including those before `from`); exceeding it is an error
   * rather than a long computation. Default 10,000.
   */
  maxInstances?: number;
  /**
   * RFC 5545 makes DTSTART the first instance even when the rule would not produce it (and it
   * counts towards COUNT). Default true; false gives the bare rule, as python-dateutil does.
   */
  includeStart?: boolean;
}

/** One instance: its wall-clock reading (naive ms, see `naiveMs`) and its instant. */
export interface Occurrence {
  local: number;
  instant: number;
}

/** Wall-clock time can run ahead of UTC by at most ~15 h (LMT included). */
const SLACK = 16 * MS_PER_HOUR;

function tooMany(max: number): CalgateError {
  return new CalgateError(
    'invalid_argument',
    `The recurrence would generate more than ${max} instances; narrow the time range, or bound the rule with COUNT or UNTIL.`,
    { context: { maxInstances: max } },
  );
}

/**
 * The instances of `rule` for a series starting at `start` (wall-clock time in `timeZone`), in
 * order. Instances are computed on wall-clock time and converted with RFC 5545's rules: a time in
 * a DST gap moves forward by the gap, an ambiguous time means its first occurrence.
 */
export function expandRule(
  rule: RRule,
  start: LocalDateTime,
  timeZone: string,
  options: RuleExpansionOptions = {},
): Result<Occurrence[], CalgateError> {
  const planned = planRule(rule, start);
  if (!planned.ok) {
    return planned;
  }
  const plan = planned.value;
  const max = options.maxInstances ?? DEFAULT_MAX_INSTANCES;
  const { from, to, limit } = options;
  const startNaive = naiveMs({ ...start, millisecond: 0 });

  let untilNaive = Number.POSITIVE_INFINITY;
  let untilInstant = Number.POSITIVE_INFINITY;
  const until = rule.until;
  if (until?.kind === 'utc') {
    untilInstant = until.instant;
    untilNaive = until.instant + SLACK;
  } else if (until?.kind === 'local') {
    untilNaive = naiveMs(until.local);
  } else if (until?.kind === 'date') {
    untilNaive = (epochDay(until.date.year, until.date.month, until.date.day) + 1) * MS_PER_DAY - 1;
  }
  const stopAfter = Math.min(untilNaive, to === undefined ? Number.POSITIVE_INFINITY : to + SLACK);

  let prependStart = false;
  if (options.includeStart ?? true) {
    const first = iterateRule(
      plan,
      start,
      { exhausted: false },
      { stopAfter: startNaive, maxPeriods: 100_000 },
    ).next();
    prependStart = first.done === true || first.value !== startNaive;
  }
  const state: IterationState = { exhausted: false };
  const canSkip = rule.count === undefined && from !== undefined;
  const stream = iterateRule(plan, start, state, {
    ...(canSkip ? { skipTo: from - SLACK } : {}),
    ...(Number.isFinite(stopAfter) ? { stopAfter } : {}),
    maxPeriods: 1_000_000,
  });
  const out: Occurrence[] = [];
  let remaining = rule.count ?? Number.POSITIVE_INFINITY;
  let generated = 0;
  let pending: number | undefined = prependStart ? startNaive : undefined;
  for (;;) {
    let local: number;
    if (pending !== undefined) {
      local = pending;
      pending = undefined;
    } else {
      const next = stream.next();
      if (next.done) {
        break;
      }
      local = next.value;
    }
    if (local > untilNaive) {
      break;
    }
    if (to !== undefined && local - SLACK >= to) {
      break;
    }
    remaining -= 1;
    if (remaining < 0) {
      break;
    }
    generated += 1;
    if (generated > max) {
      return err(tooMany(max));
    }
    const instant = fromNaiveMs(local, timeZone);
    if (instant > untilInstant) {
      break;
    }
    if ((from !== undefined && instant < from) || (to !== undefined && instant >= to)) {
      continue;
    }
    out.push({ local, instant });
    if (limit !== undefined && out.length >= limit) {
      return ok(out);
    }
  }
  if (state.exhausted && to === undefined && limit === undefined && rule.count === undefined && !until) {
    return err(tooMany(max));
  }
  return ok(out);
}
