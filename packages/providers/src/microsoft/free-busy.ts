/**
 * Outlook free/busy: busy intervals read from each calendar's calendarView, since getSchedule
 * answers only for the mailbox's default calendar.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import { busyPerCalendar, mergeBusy } from '../busy.ts';
import type { BusyEvent, CalendarRef, FreeBusyResult } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import type { GraphEvent } from './graph-types.ts';
import { text } from './graph-values.ts';
import { MAX_TOP, PREFER_UTC } from './reads.ts';
import { graphRangeBound, readGraphTime } from './times.ts';

/**
 * Busy intervals from each calendar's calendarView: getSchedule answers only for the mailbox's
 * default calendar (and not for personal accounts). Free (`showAs: free`), cancelled and
 * declined events do not count; an all-day event is busy midnight to midnight in its own zone
 * (Graph writes its start and end there, whatever the preferred zone). With `withEvents` the
 * answer names the events it was made from, so callers need not list the window again (and
 * place all-day events in the calendar's zone). Failures are per calendar.
 */
export async function freeBusy(
  client: GraphClient,
  calendars: readonly CalendarRef[],
  timeMin: string,
  timeMax: string,
  signal?: AbortSignal,
  options: { withEvents?: boolean } = {},
): Promise<FreeBusyResult[]> {
  const failure = (error: unknown) =>
    signal?.aborted
      ? undefined
      : isCalgateError(error)
        ? error
        : new CalgateError('upstream_unavailable', 'Microsoft Graph did not answer.');
  return busyPerCalendar(
    calendars,
    timeMin,
    timeMax,
    async (calendar, window) => {
      const items = await client.all<GraphEvent>({
        path: graphPath`/me/calendars/${calendar.externalId}/calendarView`,
        query: {
          startDateTime: graphRangeBound(window.from),
          endDateTime: graphRangeBound(window.to),
          $top: MAX_TOP,
          $select: `start,end,isAllDay,showAs,isCancelled,responseStatus,originalStartTimeZone${options.withEvents === true ? ',subject' : ''}`,
        },
        prefer: [PREFER_UTC],
        operation: 'freebusy.query',
        calendarId: calendar.externalId,
        ...(signal === undefined ? {} : { signal }),
      });
      const intervals: [number, number][] = [];
      const events: BusyEvent[] = [];
      for (const item of items) {
        if (item.isCancelled === true || item.showAs === 'free') {
          continue;
        }
        if (item.responseStatus?.response === 'declined') {
          continue;
        }
        const start = readGraphTime(item.start);
        const end = readGraphTime(item.end);
        if (start.ok && end.ok && end.value.instant > start.value.instant) {
          intervals.push([start.value.instant, end.value.instant]);
          const summary = text(item.subject);
          events.push({
            eventId: item.id ?? '',
            ...(summary === undefined ? {} : { summary }),
            start: start.value.instant,
            end: end.value.instant,
          });
        }
      }
      const busy = mergeBusy(intervals, window);
      if (options.withEvents !== true) {
        return busy;
      }
      events.sort((a, b) => a.start - b.start || a.end - b.end);
      return { busy, events: events.filter((event) => event.start < window.to && event.end > window.from) };
    },
    failure,
  );
}
