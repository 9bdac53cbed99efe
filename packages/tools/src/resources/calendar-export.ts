/**
 * `calgate://calendars/{calendarId}/events.ics{?timeMin,timeMax}`: a readable calendar as one
 * VCALENDAR (VTIMEZONEs, series as masters with their overrides), for any calendar app or an
 * import into another calendar. Without a range the whole calendar is exported.
 */
import { CalgateError } from '@calgate/core';
import { exportCalendar } from '@calgate/providers';
import type {
  ReadResourceResult,
  ResourceTemplateType as ResourceTemplate,
} from '@modelcontextprotocol/server';
import type { CalendarAccess } from '../access.ts';
import { boundOf } from '../range.ts';
import { asRpcError, CALENDAR_URI_PREFIX, resourceCalendars } from './calendars.ts';

export const EXPORT_URI_TEMPLATE = `${CALENDAR_URI_PREFIX}{calendarId}/events.ics{?timeMin,timeMax}`;
const EXPORT_URI = /^calgate:\/\/calendars\/([^/?#]+)\/events\.ics(?:\?([^#]*))?$/;

export function exportTemplates(access: CalendarAccess): ResourceTemplate[] {
  if (resourceCalendars(access).length === 0) {
    return [];
  }
  return [
    {
      uriTemplate: EXPORT_URI_TEMPLATE,
      name: 'calendar-ics',
      title: 'Calendar as iCalendar',
      description:
        "A readable calendar's events as one VCALENDAR (text/calendar), whole or in [timeMin, timeMax); import_events reads it back.",
      mimeType: 'text/calendar',
    },
  ];
}

/** Reads an `events.ics` URI, or answers undefined for a URI of another kind. */
export async function readCalendarExport(
  uri: string,
  context: { access: CalendarAccess; signal: AbortSignal },
): Promise<ReadResourceResult | undefined> {
  const match = EXPORT_URI.exec(uri);
  if (match === null) {
    return undefined;
  }
  try {
    let calendarId: string;
    try {
      calendarId = decodeURIComponent(match[1] ?? '');
    } catch {
      throw new CalgateError('not_found', `Unknown resource '${uri.slice(0, 200)}'.`);
    }
    if (resourceCalendars(context.access).length === 0) {
      throw new CalgateError('not_found', `Unknown resource '${uri.slice(0, 200)}'.`);
    }
    const handle = context.access.readable(calendarId);
    const query = new URLSearchParams(match[2] ?? '');
    const zone = handle.ref.timeZone;
    const bound = (name: 'timeMin' | 'timeMax') => {
      const value = query.get(name);
      return value === null || value === ''
        ? undefined
        : new Date(boundOf(value, zone, name === 'timeMin' ? 'min' : 'max')).toISOString();
    };
    const text = await exportCalendar(handle.provider, handle.ref, {
      timeMin: bound('timeMin'),
      timeMax: bound('timeMax'),
      name: handle.calendar.summary,
      signal: context.signal,
    });
    return { contents: [{ uri, mimeType: 'text/calendar', text }] };
  } catch (error) {
    throw error instanceof CalgateError ? asRpcError(error, uri) : error;
  }
}
