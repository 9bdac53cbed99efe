/**
 * Free/busy answered from mirror rows: the window's events as a listing expands them (series
 * into instances, exceptions in place, cancelled ones absent), then Google's free/busy rule
 * (busyEventsOf: transparent and declined events are free, all-day events cover their days in
 * the calendar's zone, or in the event's own where the format keeps one: Outlook's), clipped to
 * the window and merged.
 *
 * Privacy: an event whose details the account may not see (a private event on a calendar it only
 * reads) is mirrored with its times alone, so whether it is transparent or declined is unknown
 * here, while the upstream's free/busy knows. Such an event (no title and no organizer: nothing
 * but times) in the window leaves the answer to the upstream (null).
 */
import { formatInstant, mergeIntervals } from '@calgate/core';
import type { MirrorResourceRow } from '@calgate/store';
import type { Window } from '../busy.ts';
import { busyEventsOf } from '../local/busy.ts';
import { MAX_INSTANCES } from '../local/rows.ts';
import type { BusyEvent, BusyInterval, CalendarEvent, CalendarRef } from '../types.ts';
import { listingEvents } from './listing.ts';
import type { MirrorFormat } from './source.ts';

export function mirrorBusy(
  rows: readonly MirrorResourceRow[],
  calendar: CalendarRef,
  window: Window,
  format: MirrorFormat,
): { busy: BusyInterval[]; intervals: { start: number; end: number }[]; events: BusyEvent[] } | null {
  const listed = listingEvents(
    rows,
    calendar,
    {
      timeMin: window.from,
      timeMax: window.to,
      singleEvents: true,
      showDeleted: false,
      instanceLimit: MAX_INSTANCES,
    },
    format,
  );
  if (listed.some(detailsHidden)) {
    return null;
  }
  const ownZones = new Map<string, string>();
  if (format.allDayZone !== undefined) {
    for (const row of rows) {
      const zone = format.allDayZone(row);
      if (zone !== undefined) {
        ownZones.set(row.eventId, zone);
      }
    }
  }
  const events = busyEventsOf(listed, calendar.timeZone, (event) => ownZones.get(event.id))
    .filter((event) => event.start < window.to && event.end > window.from)
    .sort((a, b) => a.start - b.start || a.end - b.end);
  const intervals = mergeIntervals(
    events.map((event) => ({
      start: Math.max(event.start, window.from),
      end: Math.min(event.end, window.to),
    })),
  );
  return {
    busy: intervals.map(({ start, end }) => ({
      start: formatInstant(start, 'UTC'),
      end: formatInstant(end, 'UTC'),
    })),
    intervals,
    events,
  };
}

/** Whether the mirror holds only an event's times (see the module comment). */
function detailsHidden(event: CalendarEvent): boolean {
  return (
    event.status !== 'cancelled' &&
    event.summary === undefined &&
    event.organizer === undefined &&
    event.transparency === undefined &&
    event.attendees === undefined
  );
}
