/**
 * A calendar as one VCALENDAR (the `events.ics` resource and secret feeds): every single event
 * and series master with its VTIMEZONEs, each series' changed and deleted occurrences as
 * RECURRENCE-ID overrides of the same UID, as the provider keeps them.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import ICAL from 'ical.js';
import type { CalendarEvent, CalendarProvider, CalendarRef, EventInput } from '../../types.ts';
import { deleteInstanceIcs, newEventIcs, PRODID, patchEventIcs, type WriteContext } from './write.ts';

/** Events one export may hold; a longer calendar is exported by range (timeMin/timeMax). */
export const MAX_EXPORT_EVENTS = 20_000;
const PAGE = 250;

export interface ExportOptions {
  timeMin?: string | undefined;
  timeMax?: string | undefined;
  /** X-WR-CALNAME: the name calendar apps show for a subscription. */
  name?: string | undefined;
  signal?: AbortSignal | undefined;
  now?: number;
}

function inputOf(event: CalendarEvent): EventInput {
  const input: EventInput = { start: event.start, end: event.end };
  for (const field of [
    'summary',
    'description',
    'location',
    'recurrence',
    'attendees',
    'transparency',
    'visibility',
  ] as const) {
    if (event[field] !== undefined) {
      (input as unknown as Record<string, unknown>)[field] = event[field];
    }
  }
  if (event.status === 'tentative') {
    input.status = 'tentative';
  }
  return input;
}

/** Masters and singles with their exceptions, as a listing without singleEvents gives them. */
async function readAll(
  provider: CalendarProvider,
  calendar: CalendarRef,
  options: ExportOptions,
): Promise<CalendarEvent[]> {
  const events: CalendarEvent[] = [];
  let pageToken: string | undefined;
  do {
    const page = await provider.listEvents(
      calendar,
      {
        singleEvents: false,
        showDeleted: true,
        maxResults: PAGE,
        ...(options.timeMin === undefined ? {} : { timeMin: options.timeMin }),
        ...(options.timeMax === undefined ? {} : { timeMax: options.timeMax }),
        ...(pageToken === undefined ? {} : { pageToken }),
      },
      options.signal,
    );
    events.push(...page.items);
    if (events.length > MAX_EXPORT_EVENTS) {
      throw new CalgateError(
        'invalid_argument',
        `This calendar has more than ${MAX_EXPORT_EVENTS} events to export; give timeMin and timeMax to export a part of it.`,
      );
    }
    pageToken = page.nextPageToken;
  } while (pageToken !== undefined);
  return events;
}

/** The VCALENDAR text of events listed without singleEvents (masters, singles, exceptions). */
export function eventsToIcs(
  events: readonly CalendarEvent[],
  calendarZone: string,
  options: ExportOptions = {},
): string {
  const context: WriteContext = { calendarZone, now: options.now ?? Date.now() };
  const exceptions = new Map<string, CalendarEvent[]>();
  for (const event of events) {
    if (event.recurringEventId !== undefined) {
      const list = exceptions.get(event.recurringEventId) ?? [];
      list.push(event);
      exceptions.set(event.recurringEventId, list);
    }
  }
  const out = new ICAL.Component('vcalendar');
  out.addPropertyWithValue('version', '2.0');
  out.addPropertyWithValue('prodid', PRODID);
  out.addPropertyWithValue('calscale', 'GREGORIAN');
  out.addPropertyWithValue('method', 'PUBLISH');
  if (options.name !== undefined) {
    out.addPropertyWithValue('x-wr-calname', options.name);
  }
  out.addPropertyWithValue('x-wr-timezone', calendarZone);
  const zones = new Set<string>();
  const events_: ICAL.Component[] = [];
  for (const event of events) {
    if (event.recurringEventId !== undefined || event.status === 'cancelled') {
      continue;
    }
    let text = newEventIcs(inputOf(event), event.iCalUID ?? event.id, context);
    for (const exception of exceptions.get(event.id) ?? []) {
      const instance = exception.id.slice(event.id.length + 1);
      try {
        text =
          exception.status === 'cancelled'
            ? deleteInstanceIcs(text, instance, context)
            : patchEventIcs(text, instance, inputOf(exception), context);
      } catch (error) {
        // An exception the series no longer generates (its rule changed since) has no place.
        if (!isCalgateError(error)) {
          throw error;
        }
      }
    }
    const calendar = new ICAL.Component(ICAL.parse(text) as unknown[]);
    for (const zone of calendar.getAllSubcomponents('vtimezone')) {
      const tzid = String(zone.getFirstPropertyValue('tzid'));
      if (!zones.has(tzid)) {
        zones.add(tzid);
        out.addSubcomponent(zone);
      }
    }
    events_.push(...calendar.getAllSubcomponents('vevent'));
  }
  for (const vevent of events_) {
    out.addSubcomponent(vevent);
  }
  return out.toString().replace(/\r?\n/g, '\r\n').concat('\r\n');
}

/** A calendar (or its part in [timeMin, timeMax)) as VCALENDAR text. */
export async function exportCalendar(
  provider: CalendarProvider,
  calendar: CalendarRef,
  options: ExportOptions = {},
): Promise<string> {
  const events = await readAll(provider, calendar, options);
  return eventsToIcs(events, calendar.timeZone, options);
}
