/**
 * Graph's `patternedRecurrence` as Calgate reads and writes it: the pattern and range shapes, the
 * series start a conversion needs, Graph's day names in core's order, and what Outlook can repeat.
 */
import type { LocalDateTime } from '@calgate/core';

export type GraphPatternType =
  | 'daily'
  | 'weekly'
  | 'absoluteMonthly'
  | 'relativeMonthly'
  | 'absoluteYearly'
  | 'relativeYearly';
export type GraphDayOfWeek =
  | 'monday'
  | 'tuesday'
  | 'wednesday'
  | 'thursday'
  | 'friday'
  | 'saturday'
  | 'sunday';
export type GraphWeekIndex = 'first' | 'second' | 'third' | 'fourth' | 'last';

export interface GraphRecurrencePattern {
  type: GraphPatternType;
  interval: number;
  month?: number;
  dayOfMonth?: number;
  daysOfWeek?: GraphDayOfWeek[];
  firstDayOfWeek?: GraphDayOfWeek;
  index?: GraphWeekIndex;
}

export interface GraphRecurrenceRange {
  type: 'endDate' | 'noEnd' | 'numbered';
  startDate: string;
  endDate?: string;
  numberOfOccurrences?: number;
  recurrenceTimeZone?: string;
}

export interface GraphPatternedRecurrence {
  pattern: GraphRecurrencePattern;
  range: GraphRecurrenceRange;
}

/** The series' first start: its wall clock in its IANA zone, and whether it is all-day. */
export interface SeriesStart {
  local: LocalDateTime;
  timeZone: string;
  allDay: boolean;
}

/** Graph's day names in core's order (0 = Monday … 6 = Sunday). */
export const GRAPH_DAYS: readonly GraphDayOfWeek[] = [
  'monday',
  'tuesday',
  'wednesday',
  'thursday',
  'friday',
  'saturday',
  'sunday',
];

/** What Outlook can repeat, for every refusal. */
export const OUTLOOK_CAN =
  'Outlook can repeat every N days; every N weeks on chosen weekdays; every N months or years on one day of the month (29–31 fall on the last day of shorter months) or on the first, second, third, fourth or last of chosen weekdays; ending after a number of times, on a date, or never';

/** 28…day: the RRULE day list whose last existing entry is Outlook's day 29 or 30. */
export const lastDayUpTo = (day: number) => Array.from({ length: day - 27 }, (_, i) => 28 + i);

/** Graph's names of BYDAY's weekdays, Monday first. */
export function graphDaysOf(byDay: readonly { weekday: number }[]): GraphDayOfWeek[] {
  return [...new Set(byDay.map((d) => d.weekday))]
    .sort((a, b) => a - b)
    .map((d) => GRAPH_DAYS[d] as GraphDayOfWeek);
}
