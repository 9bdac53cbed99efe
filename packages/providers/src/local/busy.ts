import type { CalendarEvent } from '../types.ts';
import { instantOf } from './rows.ts';

/**
 * The intervals in which events make a calendar busy: not cancelled, not transparent ("free"),
 * and not declined by the calendar's own attendee. All-day events cover their whole days in
 * the calendar's zone.
 */
export function busyIntervals(events: readonly CalendarEvent[], calendarZone: string): [number, number][] {
  const out: [number, number][] = [];
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
      out.push([start, end]);
    }
  }
  return out;
}
