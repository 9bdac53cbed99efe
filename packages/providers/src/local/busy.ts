import type { BusyEvent, CalendarEvent } from '../types.ts';
import { instantOf } from './rows.ts';

/**
 * The events that make a calendar busy, in the order given: not cancelled, not transparent
 * ("free"), and not declined by the calendar's own attendee (`self`). All-day events cover their
 * whole days in the calendar's zone. The same rule as Google's free/busy, so a mirror answers as
 * Google does.
 */
export function busyEventsOf(events: readonly CalendarEvent[], calendarZone: string): BusyEvent[] {
  const out: BusyEvent[] = [];
  for (const event of events) {
    if (event.status === 'cancelled' || event.transparency === 'transparent') {
      continue;
    }
    if (event.attendees?.some((a) => a.self === true && a.responseStatus === 'declined')) {
      continue;
    }
    const start = instantOf(event.start, calendarZone);
    const end = instantOf(event.end, calendarZone);
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
