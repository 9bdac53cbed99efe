import type { CalendarEvent } from '@calgate/providers';

/**
 * An event that blocks time on this calendar: opaque, not cancelled, not declined by the
 * calendar. The same rule as upstream free/busy, so the ledger and free/busy agree.
 */
export function blocks(event: CalendarEvent): boolean {
  if (event.status === 'cancelled' || event.transparency === 'transparent') {
    return false;
  }
  return !event.attendees?.some(
    (attendee) => attendee.self === true && attendee.responseStatus === 'declined',
  );
}
