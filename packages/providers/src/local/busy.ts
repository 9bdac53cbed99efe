import type { BusyEvent, CalendarEvent } from '../types.ts';
import { instantOf } from './rows.ts';

/**
 * The events that make a calendar busy, in the order given: not cancelled, not transparent
 * ("free"), and not declined by the calendar's own attendee (`self`). All-day events cover their
 * whole days in the calendar's zone. The same rule as Google's free/busy, so a mirror answers as
 * Google does. `allDayZone` names another zone for an all-day event's days (Outlook keeps an
 * all-day event in its own zone); undefined keeps the calendar's.
 */
export function busyEventsOf(
  events: readonly CalendarEvent[],
  calendarZone: string,
  allDayZone?: (event: CalendarEvent) => string | undefined,
): BusyEvent[] {
  const out: BusyEvent[] = [];
  for (const event of events) {
    if (event.status === 'cancelled' || event.transparency === 'transparent') {
      continue;
    }
    if (event.attendees?.some((a) => a.self === true && a.responseStatus === 'declined')) {
      continue;
    }
    const zone = (event.start.date === undefined ? undefined : allDayZone?.(event)) ?? calendarZone;
    const start = instantOf(event.start, zone);
    const end = instantOf(event.end, zone);
    if (Number.isFinite(start) && Number.isFinite(end) && end > start) {
      out.push({
        eventId: event.id,
        ...(event.summary === undefined ? {} : { summary: event.summary }),
        start,
        end,
      });
    }
  }
  return out;
}
