/**
 * What rules are evaluated against: one occurrence of an event (Google Calendar's event shape, as
 * Calgate's tools return it, with recurring series already expanded) together with the calendar it
 * is on. `PreparedOccurrence` folds each field once, on first use, so that many rules can be tested
 * against one occurrence cheaply.
 */
import { isValidTimeZone, parseDateTime, toLocal, weekdayOf } from '@calgate/core';
import { fold, wordsOf } from './fold.ts';

/** `{dateTime, timeZone?}` for a timed event, `{date}` (YYYY-MM-DD) for an all-day one. */
export interface OccurrenceTime {
  dateTime?: string;
  date?: string;
  timeZone?: string;
}

export interface OccurrenceAttendee {
  email?: string;
  displayName?: string;
  /** Set on the attendee entry that is the calendar's owner. */
  self?: boolean;
  responseStatus?: string;
}

/** The fields of an event that rules read; Calgate's `CalendarEvent` fits this shape. */
export interface OccurrenceEvent {
  id?: string;
  summary?: string;
  description?: string;
  start: OccurrenceTime;
  end?: OccurrenceTime;
  attendees?: readonly OccurrenceAttendee[];
  /** Present on an occurrence of a recurring series. */
  recurringEventId?: string;
  transparency?: string;
}

export interface OccurrenceCalendar {
  id: string;
  /** The calendar's name, matched by `calendar:`. */
  summary?: string;
  /** IANA zone used when the event's start carries none. */
  timeZone: string;
  /** The owner's address: an attendee with this email counts as the calendar itself, like `self: true`. */
  ownerEmail?: string;
}

/** One event occurrence on one calendar. */
export interface EventOccurrence {
  calendar: OccurrenceCalendar;
  event: OccurrenceEvent;
}

/** Separates fields in `AttendeeFields.text`; queries cannot contain it, so no match spans two fields. */
export const FIELD_SEPARATOR = '\u0000';

interface AttendeeFields {
  /** Folded emails and display names, each once. */
  texts: string[];
  /** The same joined by FIELD_SEPARATOR, for substring matches. */
  text: string;
  /** Folded emails, for equality. */
  emails: string[];
  /** Folded domains of the emails. */
  domains: string[];
  /** Word lists of every email and display name, for `text:`. */
  wordFields: (readonly string[])[];
}

interface LocalStart {
  allDay: boolean;
  /** ISO weekday, 0 = Monday … 6 = Sunday; -1 when the start cannot be read. */
  weekday: number;
  /** Minutes since local midnight; -1 for all-day or unreadable starts. */
  minuteOfDay: number;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const NO_WORDS: readonly string[] = [];

const wordField = (text: string | undefined): readonly string[] => (text ? wordsOf(text) : NO_WORDS);

/** An occurrence with its folded fields computed once, on first use. */
export class PreparedOccurrence {
  readonly occurrence: EventOccurrence;
  #title: readonly string[] | undefined;
  #description: readonly string[] | undefined;
  #calendar: readonly string[] | undefined;
  #textWords: Set<string> | undefined;
  #attendees: AttendeeFields | undefined;
  #start: LocalStart | undefined;
  #selfIndex: number | undefined;
  #facts: number | undefined;

  constructor(occurrence: EventOccurrence) {
    this.occurrence = occurrence;
  }

  get titleWords(): readonly string[] {
    this.#title ??= wordField(this.occurrence.event.summary);
    return this.#title;
  }

  get descriptionWords(): readonly string[] {
    this.#description ??= wordField(this.occurrence.event.description);
    return this.#description;
  }

  get calendarWords(): readonly string[] {
    this.#calendar ??= wordField(this.occurrence.calendar.summary);
    return this.#calendar;
  }

  /** Every word of the title, the description and the attendees' emails and names. */
  get textWords(): Set<string> {
    if (this.#textWords === undefined) {
      const words = new Set<string>(this.titleWords);
      for (const word of this.descriptionWords) {
        words.add(word);
      }
      for (const field of this.attendees.wordFields) {
        for (const word of field) {
          words.add(word);
        }
      }
      this.#textWords = words;
    }
    return this.#textWords;
  }

  get attendees(): AttendeeFields {
    if (this.#attendees === undefined) {
      const texts: string[] = [];
      const fields: AttendeeFields = { texts, text: '', emails: [], domains: [], wordFields: [] };
      for (const attendee of this.occurrence.event.attendees ?? []) {
        if (attendee.email) {
          const email = fold(attendee.email);
          texts.push(email);
          fields.emails.push(email);
          fields.wordFields.push(wordsOf(attendee.email));
          const at = email.lastIndexOf('@');
          if (at >= 0) {
            fields.domains.push(email.slice(at + 1));
          }
        }
        if (attendee.displayName) {
          texts.push(fold(attendee.displayName));
          fields.wordFields.push(wordsOf(attendee.displayName));
        }
      }
      fields.text = texts.join(FIELD_SEPARATOR);
      this.#attendees = fields;
    }
    return this.#attendees;
  }

  /** Index of the calendar owner's own attendee entry, or -1. */
  get selfIndex(): number {
    if (this.#selfIndex === undefined) {
      const owner = this.occurrence.calendar.ownerEmail;
      const ownerFolded = owner ? fold(owner) : undefined;
      const list = this.occurrence.event.attendees ?? [];
      this.#selfIndex = list.findIndex(
        (attendee) =>
          attendee.self === true ||
          (ownerFolded !== undefined && attendee.email !== undefined && fold(attendee.email) === ownerFolded),
      );
    }
    return this.#selfIndex;
  }

  /** The owner's response: `accepted` when the calendar is not among the attendees. */
  get response(): string {
    const index = this.selfIndex;
    if (index < 0) {
      return 'accepted';
    }
    return this.occurrence.event.attendees?.[index]?.responseStatus ?? 'needsAction';
  }

  /** Whether anyone other than the calendar itself is invited. */
  get hasAttendees(): boolean {
    const count = this.occurrence.event.attendees?.length ?? 0;
    return count > (this.selfIndex >= 0 ? 1 : 0);
  }

  get recurring(): boolean {
    return Boolean(this.occurrence.event.recurringEventId);
  }

  get allDay(): boolean {
    return this.start.allDay;
  }

  get transparency(): string {
    return this.occurrence.event.transparency === 'transparent' ? 'transparent' : 'opaque';
  }

  /**
   * Weekday, time of day, flags and response packed in one integer, so that many occurrences
   * can be filtered from one typed array (see FACT_* for the layout).
   */
  get facts(): number {
    if (this.#facts === undefined) {
      const start = this.start;
      this.#facts =
        (start.minuteOfDay + 1) |
        ((start.weekday + 1) << 11) |
        (start.allDay ? FACT_ALL_DAY : 0) |
        (this.recurring ? FACT_RECURRING : 0) |
        (this.hasAttendees ? FACT_HAS_ATTENDEES : 0) |
        (this.transparency === 'transparent' ? FACT_TRANSPARENT : 0) |
        (responseCode(this.response) << 18);
    }
    return this.#facts;
  }

  /** The start's weekday and wall-clock time in the event's zone (start.timeZone, else the calendar's). */
  get start(): LocalStart {
    this.#start ??= localStart(this.occurrence);
    return this.#start;
  }
}

/** Bits 0–10: minute of day + 1 (0 = none); 11–13: ISO weekday + 1 (0 = none); 18–20: response code. */
export const FACT_ALL_DAY = 1 << 14;
export const FACT_RECURRING = 1 << 15;
export const FACT_HAS_ATTENDEES = 1 << 16;
export const FACT_TRANSPARENT = 1 << 17;
export const RESPONSES = ['accepted', 'declined', 'tentative', 'needsAction'] as const;

/** The response's index in RESPONSES, or 4 for anything else. */
export function responseCode(response: string): number {
  const code = (RESPONSES as readonly string[]).indexOf(response);
  return code < 0 ? 4 : code;
}

export const factMinute = (facts: number) => (facts & 0x7ff) - 1;
export const factWeekday = (facts: number) => ((facts >>> 11) & 7) - 1;
export const factResponse = (facts: number) => (facts >>> 18) & 7;

function localStart(occurrence: EventOccurrence): LocalStart {
  const start = occurrence.event.start;
  if (start.dateTime === undefined && start.date !== undefined) {
    const match = DATE.exec(start.date);
    const weekday = match
      ? weekdayOf({ year: Number(match[1]), month: Number(match[2]), day: Number(match[3]) })
      : -1;
    return { allDay: true, weekday, minuteOfDay: -1 };
  }
  const zone = eventZone(occurrence);
  if (start.dateTime === undefined) {
    return { allDay: false, weekday: -1, minuteOfDay: -1 };
  }
  const instant = parseDateTime(start.dateTime, zone);
  if (!instant.ok) {
    return { allDay: false, weekday: -1, minuteOfDay: -1 };
  }
  const local = toLocal(instant.value, zone);
  return { allDay: false, weekday: weekdayOf(local), minuteOfDay: local.hour * 60 + local.minute };
}

/** start.timeZone when it names a known zone, else the calendar's, else UTC. */
export function eventZone(occurrence: EventOccurrence): string {
  const own = occurrence.event.start.timeZone;
  if (own && isValidTimeZone(own)) {
    return own;
  }
  const calendar = occurrence.calendar.timeZone;
  if (calendar && isValidTimeZone(calendar)) {
    return calendar;
  }
  return 'UTC';
}

/** `occurrence` prepared for matching, or itself when it already is. */
export function prepareOccurrence(occurrence: EventOccurrence | PreparedOccurrence): PreparedOccurrence {
  return occurrence instanceof PreparedOccurrence ? occurrence : new PreparedOccurrence(occurrence);
}
