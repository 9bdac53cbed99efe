/**
 * A calendar's events over a window, read from a CalDAV server: a calendar-query a day wider on
 * each side (servers such as Radicale compare floating and all-day times as UTC, and none can be
 * trusted to expand recurrence), then each object expanded by Calgate in the calendar's zone and
 * filtered to the window exactly.
 */
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

/** The events of objects over [from, to), earliest first; `eventId` names each object's event. */
export function eventsOfObjects(
  objects: readonly CaldavObject[],
  calendarZone: string,
  from: number | undefined,
  to: number | undefined,
  eventId: (object: CaldavObject, uid: string) => string = (_object, uid) => uid,
): WindowEvent[] {
  const out: { at: number; item: WindowEvent }[] = [];
  for (const object of objects) {
    const parsed = parseCalendarText(object.data, calendarZone);
    for (const resource of parsed.resources) {
      const events = expandResource(resource, {
        ...(from === undefined ? {} : { from }),
        ...(to === undefined ? {} : { to }),
        eventId: eventId(object, resource.uid),
      });
      for (const event of events) {
        const at = Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);
        out.push({ at, item: { event, href: object.href, etag: object.etag } });
      }
    }
  }
  out.sort((a, b) => a.at - b.at);
  return out.map((entry) => entry.item);
}

/** calendar-query a day wider than [from, to), expanded and filtered in `calendarZone`. */
export async function readWindow(
  client: CaldavClient,
  calendarUrl: string,
  calendarZone: string,
  from: number,
  to: number,
  signal?: AbortSignal,
): Promise<WindowEvent[]> {
  const objects = await client.calendarQuery(calendarUrl, from, to, signal);
  return eventsOfObjects(objects, calendarZone, from, to);
}
