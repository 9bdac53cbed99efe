/**
 * A calendar's events over a window, read from a CalDAV server: a calendar-query a day wider on
 * each side (servers such as Radicale compare floating and all-day times as UTC) and every
 * recurring object (none can be trusted to expand recurrence), then each object expanded by Calgate in the calendar's zone and
 * filtered to the window exactly.
 */
import { isCalgateError } from '@calgate/core';
import type { CalendarEvent } from '../types.ts';
import type { CaldavClient, CaldavObject } from './client.ts';
import { expandResource } from './ical/expand.ts';
import { parseCalendarText } from './ical/read.ts';

export interface WindowEvent {
  event: CalendarEvent;
  /** The object holding the event, as the server named it. */
  href: string;
  etag: string | undefined;
}

export interface WindowRead {
  /** Earliest first (all-day events at their date's UTC midnight). */
  events: WindowEvent[];
  /** Objects that could not be read (not iCalendar, a rule too large to expand): left out, with why. */
  skipped: { href: string; reason: string }[];
}

/** The events of objects over [from, to); `eventId` names each object's event (default: its UID). */
export function eventsOfObjects(
  objects: readonly CaldavObject[],
  calendarZone: string,
  from: number | undefined,
  to: number | undefined,
  eventId: (object: CaldavObject, uid: string) => string = (_object, uid) => uid,
): WindowRead {
  const out: { at: number; item: WindowEvent }[] = [];
  const skipped: WindowRead['skipped'] = [];
  for (const object of objects) {
    const items: { at: number; item: WindowEvent }[] = [];
    try {
      const parsed = parseCalendarText(object.data, calendarZone);
      for (const resource of parsed.resources) {
        const events = expandResource(resource, {
          ...(from === undefined ? {} : { from }),
          ...(to === undefined ? {} : { to }),
          eventId: eventId(object, resource.uid),
        });
        for (const event of events) {
          const at = Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);
          items.push({ at, item: { event, href: object.href, etag: object.etag } });
        }
      }
    } catch (error) {
      if (!isCalgateError(error)) {
        throw error;
      }
      skipped.push({ href: object.href, reason: error.message });
      continue;
    }
    out.push(...items);
  }
  out.sort((a, b) => a.at - b.at);
  return { events: out.map((entry) => entry.item), skipped };
}

/**
 * calendar-query a day wider than [from, to) plus every recurring object, expanded and filtered
 * in `calendarZone`.
 */
export async function readWindow(
  client: CaldavClient,
  calendarUrl: string,
  calendarZone: string,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<WindowRead> {
  const [inRange, recurring] = await Promise.all([
    client.calendarQuery(calendarUrl, from, to, signal),
    client.recurringObjects(calendarUrl, signal),
  ]);
  const byHref = new Map<string, CaldavObject>();
  for (const object of [...inRange, ...recurring]) {
    byHref.set(object.href, object);
  }
  return eventsOfObjects([...byHref.values()], calendarZone, from, to);
}
