/**
 * The work of expand_rrule, pure and self-contained so a worker thread can run it: arguments are
 * plain data (the zone already checked), the answer is plain data, failures are CalgateErrors.
 */
import {
  CalgateError,
  expandRule,
  fromLocal,
  type LocalDateTime,
  parseDateTimeFields,
  parseRRule,
} from '@calgate/core';
import { rangeOut } from '../../range.ts';

/** The most instances one call returns. */
export const MAX_EXPANDED = 10_000;
const MINUTE = 60_000;
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

export interface ExpansionRequest {
  rrule: string;
  dtstart: string;
  /** A valid IANA zone. */
  timeZone: string;
  durationMinutes: number;
  count: number;
  exdates: readonly string[];
}

export interface Expansion {
  instances: { start: string; end: string }[];
  truncated: boolean;
}

/** A local date-time `YYYY-MM-DDTHH:MM:SS`, checked (a real date, no offset). */
function localOf(text: string, field: string): LocalDateTime {
  if (!LOCAL.test(text)) {
    throw new CalgateError(
      'invalid_argument',
      `${field} '${text}' must be a local date-time YYYY-MM-DDTHH:MM:SS without offset; the zone goes in timeZone.`,
    );
  }
  const parsed = parseDateTimeFields(text, true);
  if (!parsed.ok) {
    throw new CalgateError('invalid_argument', `${field}: ${parsed.error.message}`);
  }
  return parsed.value.local;
}

export function expandInstances(request: ExpansionRequest): Expansion {
  const zone = request.timeZone;
  const rule = parseRRule(request.rrule);
  if (!rule.ok) {
    throw rule.error;
  }
  const start = localOf(request.dtstart, 'dtstart');
  // Read with RFC 5545's rules, like the instances: so an EXDATE in a gap still matches.
  const excluded = new Set(request.exdates.map((text) => fromLocal(localOf(text, 'exdates'), zone)));
  // Asking for one more than wanted tells whether the list was cut; exdates and wall-clock
  // times that name the same instant (a skipped day, e.g. Apia on 2011-12-30) need more.
  let limit = request.count + 1 + excluded.size;
  for (;;) {
    const expanded = expandRule(rule.value, start, zone, { limit, maxInstances: limit });
    if (!expanded.ok) {
      throw expanded.error;
    }
    const starts = [...new Set(expanded.value.map((occurrence) => occurrence.instant))].filter(
      (instant) => !excluded.has(instant),
    );
    if (starts.length > request.count || expanded.value.length < limit || limit >= 4 * MAX_EXPANDED) {
      const duration = request.durationMinutes * MINUTE;
      return {
        instances: starts.slice(0, request.count).map((instant) => ({
          ...rangeOut({ start: instant, end: instant + duration }, zone),
        })),
        truncated: starts.length > request.count,
      };
    }
    limit *= 2;
  }
}
