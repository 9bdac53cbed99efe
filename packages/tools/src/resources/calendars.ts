/**
 * Calendars as MCP resources: `calgate://calendars/{calendarId}` for every enabled calendar the
 * key can read, as JSON with the calendar's metadata and its events of the next seven days.
 */
import { CalgateError } from '@calgate/core';
import type { EventDateTime } from '@calgate/providers';
import {
  ProtocolErrorCode,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { CalendarAccess, KeyCalendar } from '../access.ts';
import { DATA_NOTICE } from '../format.ts';
import { mergeEvents } from '../merge.ts';
import { DAY_MS, instantOut } from '../range.ts';
import { rpcError } from '../rpc-error.ts';

export const CALENDAR_URI_PREFIX = 'calgate://calendars/';
export const CALENDAR_URI_TEMPLATE = `${CALENDAR_URI_PREFIX}{calendarId}`;
/** JSON-RPC code MCP gives an unknown resource. */
export const RESOURCE_NOT_FOUND = -32002;
/** How far ahead a calendar resource shows events. */
export const CALENDAR_RESOURCE_DAYS = 7;
/** At most this many events in one calendar resource; more are reported as truncated. */
const MAX_EVENTS = 250;

/** Whether the key has switched on the calendar toolset, whose list_events reads the same events. */
function hasCalendarToolset(access: CalendarAccess): boolean {
  const { toolsets } = access.principal;
  return toolsets === undefined || toolsets.includes('calendar');
}

/** The calendars a key may open as resources: readable and enabled, with the calendar toolset. */
export function resourceCalendars(access: CalendarAccess): KeyCalendar[] {
  if (!hasCalendarToolset(access)) {
    return [];
  }
  return access.list().filter((calendar) => calendar.canRead && calendar.enabled);
}

export function calendarUri(calendarId: string): string {
  return `${CALENDAR_URI_PREFIX}${encodeURIComponent(calendarId)}`;
}

export function calendarResources(access: CalendarAccess): {
  resources: Resource[];
  resourceTemplates: ResourceTemplate[];
} {
  const calendars = resourceCalendars(access);
  if (calendars.length === 0) {
    return { resources: [], resourceTemplates: [] };
  }
  return {
    resources: calendars.map((calendar) => ({
      uri: calendarUri(calendar.id),
      name: calendar.summary,
      title: calendar.summary,
      description: `Calendar of ${calendar.accountEmail} (${calendar.timeZone}) with its events of the next ${CALENDAR_RESOURCE_DAYS} days.`,
      mimeType: 'application/json',
    })),
    resourceTemplates: [
      {
        uriTemplate: CALENDAR_URI_TEMPLATE,
        name: 'calendar',
        title: 'Calendar',
        description: `A readable calendar's metadata and its events of the next ${CALENDAR_RESOURCE_DAYS} days, as JSON. calendarId: an id from list_calendars, \`primary\` or the calendar's name.`,
        mimeType: 'application/json',
      },
    ],
  };
}

function notFound(uri: string): Error {
  const shown = uri.slice(0, 200);
  return rpcError(RESOURCE_NOT_FOUND, `Unknown resource '${shown}'.`, { uri: shown });
}

const when = (time: EventDateTime): string => time.dateTime ?? time.date ?? '';

/**
 * The calendar the URI names, resolved as tools resolve `calendarId` (an id, `primary`, an
 * upstream id or the calendar's name) and refused in the same words; a calendar the key cannot
 * read is unknown.
 */
function calendarOf(uri: string, access: CalendarAccess): KeyCalendar {
  let calendarId: string;
  try {
    calendarId = decodeURIComponent(uri.slice(CALENDAR_URI_PREFIX.length));
  } catch {
    throw notFound(uri);
  }
  if (calendarId === '' || !hasCalendarToolset(access)) {
    throw notFound(uri);
  }
  try {
    return access.readable(calendarId).calendar;
  } catch (error) {
    throw error instanceof CalgateError ? asRpcError(error, uri) : error;
  }
}

/** A calendar's account problem (reconnect, disabled) or an upstream failure as a JSON-RPC error. */
export function asRpcError(error: CalgateError, uri: string): Error {
  if (error.code === 'not_found') {
    // The URI in data is how clients of 2026-07-28 (where the code is -32602) tell "not found" apart.
    return rpcError(RESOURCE_NOT_FOUND, error.message, { uri: uri.slice(0, 200) });
  }
  return rpcError(
    error.code === 'invalid_argument' ? ProtocolErrorCode.InvalidParams : ProtocolErrorCode.InternalError,
    error.message,
  );
}

/**
 * Reads `calgate://calendars/{calendarId}`, or answers undefined for a URI of another kind. The
 * events' text is written by other people: the answer says so, as read tools' answers do.
 */
export async function readCalendarResource(
  uri: string,
  context: { access: CalendarAccess; now: () => Date; signal: AbortSignal },
): Promise<ReadResourceResult | undefined> {
  if (!uri.startsWith(CALENDAR_URI_PREFIX)) {
    return undefined;
  }
  const { access } = context;
  const calendar = calendarOf(uri, access);
  try {
    const handle = access.readable(calendar.id);
    const now = context.now().getTime();
    const end = now + CALENDAR_RESOURCE_DAYS * DAY_MS;
    const merged = await mergeEvents(
      [handle],
      {
        timeMin: new Date(now).toISOString(),
        timeMax: new Date(end).toISOString(),
        singleEvents: true,
        orderBy: 'startTime',
      },
      MAX_EVENTS,
      undefined,
      context.signal,
    );
    const [failure] = merged.errors;
    if (failure !== undefined) {
      throw failure.error;
    }
    const body = {
      notice: `${DATA_NOTICE} the summaries and locations of these events were written by other people.`,
      calendar: {
        id: calendar.id,
        summary: calendar.summary,
        timeZone: calendar.timeZone,
        access: calendar.canWrite ? 'read_write' : 'read',
        account: calendar.accountEmail,
      },
      timeMin: instantOut(now, calendar.timeZone),
      timeMax: instantOut(end, calendar.timeZone),
      events: merged.items.map(({ event }) => ({
        id: event.id,
        ...(event.summary === undefined ? {} : { summary: event.summary }),
        start: when(event.start),
        end: when(event.end),
        ...(event.location === undefined ? {} : { location: event.location }),
      })),
      ...(merged.nextPageToken === undefined ? {} : { truncated: true }),
    };
    return { contents: [{ uri, mimeType: 'application/json', text: JSON.stringify(body) }] };
  } catch (error) {
    throw error instanceof CalgateError ? asRpcError(error, uri) : error;
  }
}
