/** The properties a condition can test, described for documentation, tool schemas and suggestions. */
import type { Bitset } from './bitset.ts';
import type { PreparedOccurrence } from './occurrence.ts';
import type { OccurrenceSet } from './occurrence-set.ts';
import { closest } from './suggest.ts';

export const PROPERTY_NAMES = [
  'title',
  'description',
  'calendar',
  'text',
  'attendees',
  'domain',
  'email',
  'response',
  'recurring',
  'is-all-day',
  'has-attendees',
  'transparency',
  'day-of-week',
  'time-of-day',
] as const;

export type PropertyName = (typeof PROPERTY_NAMES)[number];

export type Predicate = (occurrence: PreparedOccurrence) => boolean;
/** The members of a set that match, as a new bit set the caller may change. */
export type Selector = (set: OccurrenceSet) => Bitset;

/** A checked condition: a test for one occurrence and a selection over many. */
export interface Matcher {
  test: Predicate;
  select: Selector;
}

export interface PropertyInfo {
  name: PropertyName;
  /** How the value is read: word sequence, substring, exact, enum, boolean, weekdays, or time. */
  kind: 'words' | 'substring' | 'exact' | 'enum' | 'boolean' | 'weekdays' | 'time';
  /** One line on when the condition holds. */
  description: string;
  /** Accepted values for `enum` and `boolean` properties (case-insensitive). */
  values?: readonly string[];
  /** A value that works, for documentation and messages. */
  example: string;
}

/** Why a value was refused, and a close valid value when there is one. */
export interface ValueProblem {
  reason: string;
  suggestion?: string;
}

export const PROPERTIES: readonly PropertyInfo[] = [
  {
    name: 'title',
    kind: 'words',
    description: "the event's title contains the value's words in order (`stand*`: last word a prefix)",
    example: 'standup',
  },
  {
    name: 'description',
    kind: 'words',
    description: "the event's description contains the value's words in order",
    example: '"quarterly review"',
  },
  {
    name: 'calendar',
    kind: 'words',
    description: "the calendar's name contains the value's words in order",
    example: 'work',
  },
  {
    name: 'text',
    kind: 'words',
    description:
      "the title, the description, or any attendee's email or display name contains the value's words in order (a bare value means text:value)",
    example: 'budget',
  },
  {
    name: 'attendees',
    kind: 'substring',
    description: "the value is part of any attendee's email or display name",
    example: 'sarah',
  },
  {
    name: 'domain',
    kind: 'exact',
    description: 'the domain of any attendee email equals the value (acme.com does not match eu.acme.com)',
    example: 'acme.com',
  },
  {
    name: 'email',
    kind: 'exact',
    description: 'any attendee email equals the value',
    example: 'bob@example.com',
  },
  {
    name: 'response',
    kind: 'enum',
    description:
      "the calendar owner's own response; an event without the owner among the attendees counts as accepted",
    values: ['accepted', 'declined', 'tentative', 'needsAction'],
    example: 'declined',
  },
  {
    name: 'recurring',
    kind: 'boolean',
    description: 'the event is an occurrence of a recurring series',
    values: ['yes', 'no', 'true', 'false'],
    example: 'yes',
  },
  {
    name: 'is-all-day',
    kind: 'boolean',
    description: 'the event is an all-day event (its start is a date)',
    values: ['yes', 'no', 'true', 'false'],
    example: 'no',
  },
  {
    name: 'has-attendees',
    kind: 'boolean',
    description: 'at least one attendee other than the calendar itself',
    values: ['yes', 'no', 'true', 'false'],
    example: 'yes',
  },
  {
    name: 'transparency',
    kind: 'enum',
    description: 'opaque (shows as busy; the default) or transparent (shows as free)',
    values: ['opaque', 'transparent'],
    example: 'transparent',
  },
  {
    name: 'day-of-week',
    kind: 'weekdays',
    description:
      "the start's weekday in the event's time zone (its start.timeZone, else the calendar's): mon…sun, full names, or a comma list",
    example: 'sat,sun',
  },
  {
    name: 'time-of-day',
    kind: 'time',
    description:
      "the start's wall-clock time in the event's time zone compared with HH:MM by >, >=, <, <= or = (default =); all-day events never match",
    example: '>17:00',
  },
];

export const INFO = new Map<string, PropertyInfo>(PROPERTIES.map((info) => [info.name, info]));

/** Words other systems use for a property, mapped to ours (keys squashed: lower case, no '-'). */
const PROPERTY_ALIASES: Record<string, PropertyName> = {
  subject: 'title',
  summary: 'title',
  name: 'title',
  body: 'description',
  notes: 'description',
  details: 'description',
  attendee: 'attendees',
  guest: 'attendees',
  guests: 'attendees',
  participant: 'attendees',
  participants: 'attendees',
  with: 'attendees',
  who: 'attendees',
  from: 'email',
  to: 'email',
  organizer: 'email',
  mail: 'email',
  cal: 'calendar',
  calendarname: 'calendar',
  status: 'response',
  rsvp: 'response',
  responsestatus: 'response',
  repeat: 'recurring',
  repeating: 'recurring',
  recurrence: 'recurring',
  series: 'recurring',
  allday: 'is-all-day',
  isallday: 'is-all-day',
  busy: 'transparency',
  free: 'transparency',
  showas: 'transparency',
  day: 'day-of-week',
  days: 'day-of-week',
  weekday: 'day-of-week',
  dow: 'day-of-week',
  time: 'time-of-day',
  hour: 'time-of-day',
  start: 'time-of-day',
  starttime: 'time-of-day',
  q: 'text',
  query: 'text',
  any: 'text',
};

/** The property called `name` (case-insensitive), if there is one. */
export function propertyInfo(name: string): PropertyInfo | undefined {
  return INFO.get(name.toLowerCase());
}

/** The valid property closest to an unknown `name`, if any is plausible. */
export function suggestProperty(name: string): PropertyName | undefined {
  return closest(name, PROPERTY_NAMES, PROPERTY_ALIASES) as PropertyName | undefined;
}
