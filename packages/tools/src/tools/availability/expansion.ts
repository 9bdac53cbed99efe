/**
 * The work of expand_rrule, pure and self-contained so a worker thread can run it: arguments are
 * plain data (the zone already checked), the answer is plain data, failures are CalgateErrors.
 */
import {
  CalgateError,
  expandRule,
  fromLocal,
  type LocalDateTime,
  naiveMs,
  parseDateTimeFields,
  parseRRule,
  type RRule,
  weekdayOf,
} from '@calgate/core';
import { encode } from '@toon-format/toon';
import { type Format, formatText, jsonOf } from '../../format.ts';
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
  warnings?: string[];
}

const WEEKDAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** `YYYY-MM-DDTHH:MM:SS` of a wall-clock reading in naive ms. */
function localText(naive: number): string {
  return new Date(naive).toISOString().slice(0, 19);
}

/**
 * Why dtstart is an instance the rule itself would not make, when it is: RFC 5545 counts DTSTART
 * as the first instance anyway, which surprises whoever meant "Mondays from this date".
 */
function offRuleWarning(
  request: ExpansionRequest,
  rule: RRule,
  start: LocalDateTime,
  excluded: boolean,
): string | undefined {
  const bare = expandRule(rule, start, request.timeZone, { includeStart: false, limit: 1, maxInstances: 1 });
  const first = bare.ok ? bare.value[0]?.local : undefined;
  if (first === naiveMs(start)) {
    return undefined;
  }
  const day = WEEKDAYS[weekdayOf(start)] ?? '';
  const head = `dtstart ${request.dtstart} (a ${day}) does not match the rule ${request.rrule}. RFC 5545 counts dtstart as the first instance all the same`;
  if (excluded) {
    return `${head}, but exdates leave it out, so it is not included.`;
  }
  const from =
    first === undefined ? '' : `; to leave it out, start from the rule's first date, ${localText(first)}`;
  return `${head}, so it is included as the first instance (and counts towards COUNT)${from}.`;
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
      const warning = offRuleWarning(request, rule.value, start, excluded.has(fromLocal(start, zone)));
      return {
        instances: starts.slice(0, request.count).map((instant) => ({
          ...rangeOut({ start: instant, end: instant + duration }, zone),
        })),
        truncated: starts.length > request.count,
        ...(warning === undefined ? {} : { warnings: [warning] }),
      };
    }
    limit *= 2;
  }
}

/**
 * expand_rrule's whole answer, made where the expansion runs (a worker thread for large ones):
 * the result, its JSON and its text in the format asked for, each made once.
 */
export function expansionAnswer(input: { request: ExpansionRequest; format: Format }): {
  result: { timeZone: string } & Expansion;
  json: string;
  text: string;
} {
  const result = { timeZone: input.request.timeZone, ...expandInstances(input.request) };
  const text = input.format === 'toon' ? expansionToon(result) : formatText(result, input.format);
  return { result, json: jsonOf(result), text };
}

/** An instant as written in answers: TOON quotes it (it holds ':') and needs no escapes. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:Z|[+-]\d{2}:\d{2})$/;

/**
 * The TOON text of an expansion, exactly as formatText writes it, with the instances' table
 * written directly: the general encoder spends ~5 µs a row deciding how to quote each instant.
 */
export function expansionToon(result: { timeZone: string } & Expansion): string {
  const { timeZone, instances, ...rest } = result;
  if (instances.length === 0 || !instances.every((i) => INSTANT.test(i.start) && INSTANT.test(i.end))) {
    return formatText(result, 'toon');
  }
  const lines = [encode({ timeZone }), `instances[${instances.length}]{start,end}:`];
  for (const instance of instances) {
    lines.push(`  "${instance.start}","${instance.end}"`);
  }
  lines.push(encode(rest));
  return lines.join('\n');
}
