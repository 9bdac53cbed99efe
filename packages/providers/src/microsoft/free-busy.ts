/**
 * Outlook free/busy: busy intervals read from each calendar's calendarView, since getSchedule
 * answers only for the mailbox's default calendar.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import { busyPerCalendar, mergeBusy } from '../busy.ts';
import type { CalendarRef, FreeBusyResult } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import type { GraphEvent } from './graph-types.ts';
import { MAX_TOP, PREFER_UTC } from './reads.ts';
import { graphRangeBound, readGraphTime } from './times.ts';

/**
 * Busy intervals from each calendar's calendarView: getSchedule answers only for the mailbox's
 * default calendar (and not for personal accounts). Free (`showAs: free`), cancelled and
 * declined events do not count. Failures are per calendar.
 */
export async function freeBusy(
  client: GraphClient,
  calendars: readonly CalendarRef[],
  timeMin: string,
  timeMax: string,
  signal?: AbortSignal,
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
          $select: 'start,end,isAllDay,showAs,isCancelled,responseStatus,originalStartTimeZone',
        },
        prefer: [PREFER_UTC],
        operation: 'freebusy.query',
        calendarId: calendar.externalId,
        ...(signal === undefined ? {} : { signal }),
      });
      const intervals: [number, number][] = [];
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
        }
      }
      return mergeBusy(intervals, window);
    },
    failure,
  );
}
