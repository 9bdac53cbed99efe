/**
 * Graph's `patternedRecurrence` ↔ RFC 5545 RRULE lines, both ways, exactly: a rule converts only
 * when Outlook would produce the same dates, and anything else is refused with a sentence saying
 * what Outlook can do. Graph's semantics, as Outlook applies them:
 * - weekly needs `daysOfWeek`; weeks are counted from `firstDayOfWeek` (RRULE's WKST; Graph's
 *   default is Sunday, RFC 5545's Monday);
 * - relative patterns take the `index`-th (first … fourth, or last) of the days in `daysOfWeek`
 *   (BYSETPOS, or a BYDAY ordinal for one day);
 * - a day of the month that a month lacks (29–31) falls on that month's last day (so dayOfMonth 31
 *   is RRULE's BYMONTHDAY=-1, and 30 is BYMONTHDAY=28,29,30;BYSETPOS=-1); yearly on February 29
 *   falls on February 28 in common years;
 * - `numbered` is COUNT, `endDate` an inclusive local date (UNTIL), `noEnd` neither; the range
 *   starts on the series start's local date, and the series recurs in its own zone.
 */

export { toRecurrenceLines } from './recurrence-from-graph.ts';
export {
  GRAPH_DAYS,
  type GraphDayOfWeek,
  type GraphPatternedRecurrence,
  type GraphPatternType,
  type GraphRecurrencePattern,
  type GraphRecurrenceRange,
  type GraphWeekIndex,
  OUTLOOK_CAN,
  type SeriesStart,
} from './recurrence-pattern.ts';
export { toPatternedRecurrence } from './recurrence-to-graph.ts';
