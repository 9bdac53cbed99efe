import {
  CalgateError,
  expandRule,
  fromLocal,
  type LocalDateTime,
  parseDateTimeFields,
  parseRRule,
  validateTimeZone,
} from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { format, formatText } from '../../format.ts';
import { rangeOut } from '../../range.ts';
import { range } from './window.ts';

/** The most instances one call returns. */
export const MAX_EXPANDED = 10_000;
const MINUTE = 60_000;
const LOCAL = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/;

const localDateTime = z.string().max(40);

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

export const expandRrule = defineTool({
  name: 'expand_rrule',
  title: 'Expand recurrence rule',
  description:
    'Instances of an RFC 5545 RRULE, in timeZone with its offset; dtstart (local YYYY-MM-DDTHH:MM:SS in timeZone) is the first. DST gap: offset before it; ambiguous: first occurrence; UNTIL in UTC.',
  access: 'none',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  input: z.strictObject({
    rrule: z.string().min(1).max(2000).describe('e.g. FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1'),
    dtstart: localDateTime,
    timeZone: z.string().min(1).max(64),
    durationMinutes: z.number().int().min(0).max(10_080).default(60),
    count: z.number().int().min(1).default(100).describe(`At most ${MAX_EXPANDED}.`),
    exdates: z.array(localDateTime).max(1000).optional().describe('Local, like dtstart.'),
    format,
  }),
  output: z.object({
    instances: z.array(range),
    truncated: z.boolean().describe('More follow; raise count.'),
  }),
  example: {
    rrule: 'FREQ=MONTHLY;BYDAY=FR;BYSETPOS=-1',
    dtstart: '2026-01-30T10:00:00',
    timeZone: 'America/New_York',
    count: 12,
  },
  exampleResult: {
    instances: [
      { start: '2026-01-30T10:00:00-05:00', end: '2026-01-30T11:00:00-05:00' },
      { start: '2026-03-27T10:00:00-04:00', end: '2026-03-27T11:00:00-04:00' },
    ],
    truncated: true,
  },
  async run(args) {
    if (args.count > MAX_EXPANDED) {
      throw new CalgateError(
        'invalid_argument',
        `count ${args.count} is over the cap of ${MAX_EXPANDED} instances per call: ask for fewer, or narrow the rule (UNTIL, COUNT) and call again from a later dtstart.`,
      );
    }
    const zone = validateTimeZone(args.timeZone);
    if (!zone.ok) {
      throw zone.error;
    }
    const rule = parseRRule(args.rrule);
    if (!rule.ok) {
      throw rule.error;
    }
    const start = localOf(args.dtstart, 'dtstart');
    // Read with RFC 5545's rules, like the instances: so an EXDATE in a gap still matches.
    const excluded = new Set(
      (args.exdates ?? []).map((text) => fromLocal(localOf(text, 'exdates'), zone.value)),
    );
    // Asking for one more than wanted tells whether the list was cut; exdates and wall-clock
    // times that name the same instant (a skipped day, e.g. Apia on 2011-12-30) need more.
    let limit = args.count + 1 + excluded.size;
    for (;;) {
      const expanded = expandRule(rule.value, start, zone.value, { limit, maxInstances: limit });
      if (!expanded.ok) {
        throw expanded.error;
      }
      const starts = [...new Set(expanded.value.map((occurrence) => occurrence.instant))].filter(
        (instant) => !excluded.has(instant),
      );
      if (starts.length > args.count || expanded.value.length < limit || limit >= 4 * MAX_EXPANDED) {
        const duration = args.durationMinutes * MINUTE;
        return {
          instances: starts.slice(0, args.count).map((instant) => ({
            ...rangeOut({ start: instant, end: instant + duration }, zone.value),
          })),
          truncated: starts.length > args.count,
        };
      }
      limit *= 2;
    }
  },
  text: (result, args) => formatText(result, args.format),
});
