/**
 * How the provider reads events from Graph: the Prefer headers (times in UTC, bodies as text),
 * the calendarView request behind a listing (a missing bound spans a year), one event by its
 * Graph id, and the event a create with a client-chosen id made, found by its transactionId.
 */
import { CalgateError } from '@calgate/core';
import type { CalendarRef, ListEventsQuery } from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import type { GraphEvent } from './graph-types.ts';
import { PREFER_TEXT_BODY } from './mapping.ts';
import { graphRangeBound } from './times.ts';

/** Times are asked for in UTC: the mapping writes them in each event's own zone. */
export const PREFER_UTC = 'outlook.timezone="UTC"';
export const PREFER: readonly string[] = [PREFER_UTC, PREFER_TEXT_BODY];
/** Graph's largest calendarView page. */
export const MAX_TOP = 1000;
const DAY_MS = 86_400_000;
/** A listing without one of its bounds spans this much on that side (calendarView needs both). */
const OPEN_SPAN_MS = 366 * DAY_MS;

/**
 * Calgate's client-chosen event ids (base32hex, lower case): never a Graph id, which is base64
 * with upper-case letters and padding.
 */
export const CLIENT_ID = /^[0-9a-v]{5,1024}$/;

/** The calendarView request of a listing: a missing bound lies OPEN_SPAN_MS from the other (or from now). */
export function viewRequest(
  calendar: CalendarRef,
  query: ListEventsQuery,
  signal: AbortSignal | undefined,
  now: () => number,
) {
  const min = query.timeMin === undefined ? undefined : Date.parse(query.timeMin);
  const max = query.timeMax === undefined ? undefined : Date.parse(query.timeMax);
  if ((min !== undefined && Number.isNaN(min)) || (max !== undefined && Number.isNaN(max))) {
    throw new CalgateError('invalid_argument', 'timeMin and timeMax must be RFC 3339 date-times.');
  }
  const from = min ?? (max ?? now()) - OPEN_SPAN_MS;
  const to = max ?? from + OPEN_SPAN_MS;
  return {
    path: graphPath`/me/calendars/${calendar.externalId}/calendarView`,
    query: {
      startDateTime: graphRangeBound(from),
      endDateTime: graphRangeBound(to),
      $top: Math.max(1, Math.min(query.maxResults, MAX_TOP)),
      ...(query.orderBy === 'updated'
        ? { $orderby: 'lastModifiedDateTime' }
        : query.orderBy === 'startTime'
          ? { $orderby: 'start/dateTime' }
          : {}),
    },
    prefer: PREFER,
    operation: 'events.list',
    calendarId: calendar.externalId,
    ...(signal === undefined ? {} : { signal }),
  };
}

/** One event by its Graph id. */
export async function getGraphEvent(
  client: GraphClient,
  calendar: CalendarRef,
  eventId: string,
  signal?: AbortSignal,
): Promise<GraphEvent> {
  return client.request<GraphEvent>({
    path: graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`,
    prefer: PREFER,
    operation: 'events.get',
    calendarId: calendar.externalId,
    eventId,
    ...(signal === undefined ? {} : { signal }),
  });
}

/**
 * The event a create with this client-chosen id made: Graph has no client ids, so the id went
 * as the create's transactionId, and the event is found by it.
 */
export async function eventByTransaction(
  client: GraphClient,
  calendar: CalendarRef,
  id: string,
  signal?: AbortSignal,
): Promise<GraphEvent> {
  const page = await client.page<GraphEvent>({
    path: graphPath`/me/calendars/${calendar.externalId}/events`,
    query: { $filter: `transactionId eq '${id}'`, $top: 1 },
    prefer: PREFER,
    operation: 'events.get',
    calendarId: calendar.externalId,
    eventId: id,
    ...(signal === undefined ? {} : { signal }),
  });
  const [found] = page.value;
  if (found === undefined) {
    throw new CalgateError('not_found', `Event '${id}' was not found in Microsoft 365.`, {
      context: { calendarId: calendar.externalId, eventId: id },
    });
  }
  return found;
}
