/**
 * The calendars of a Google connection: its calendar list (all pages), one calendar with the
 * connection's role on it (a service account adds a shared calendar to its list first), and new
 * calendars, which a service account may not create.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import type { calendar_v3 } from '@googleapis/calendar';
import type { CalendarInfo, NewCalendar } from '../types.ts';
import type { Call } from './calls.ts';
import { accessRoleOf, toCalendarInfo, toGoogleCalendar } from './mapping.ts';

const CALENDAR_LIST_PAGE = 250;
const MAX_LIST_PAGES = 200;

/**
 * calendars.insert on the OAuth account. A service account would own the new calendar itself,
 * invisible to the person, so that is refused before any request.
 */
export async function createCalendar(
  call: Call,
  api: calendar_v3.Calendar,
  authKind: 'oauth' | 'service_account',
  serviceAccountEmail: string | undefined,
  input: NewCalendar,
): Promise<CalendarInfo> {
  if (authKind === 'service_account') {
    throw new CalgateError(
      'permission_denied',
      `This account is connected through a service account, which cannot create calendars for a person. Create the calendar in Google Calendar, share it with ${serviceAccountEmail ?? 'the service account'} ("Make changes to events"), then add it to Calgate.`,
      { context: { authKind: 'service_account' } },
    );
  }
  const requestBody = toGoogleCalendar(input);
  const data = await call(
    { operation: 'calendars.insert' },
    (options) => api.calendars.insert({ requestBody }, options),
    { notRepeatable: true },
  );
  return toCalendarInfo(data, 'owner', false);
}

/** Every calendar on the account's calendar list, all pages. */
export async function listCalendars(
  call: Call,
  api: calendar_v3.Calendar,
  signal?: AbortSignal,
): Promise<CalendarInfo[]> {
  const out: CalendarInfo[] = [];
  let pageToken: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
    const params: calendar_v3.Params$Resource$Calendarlist$List = { maxResults: CALENDAR_LIST_PAGE };
    if (pageToken !== undefined) {
      params.pageToken = pageToken;
    }
    const data = await call(
      { operation: 'calendarList.list' },
      (options) => api.calendarList.list(params, options),
      { signal },
    );
    for (const entry of data.items ?? []) {
      const role = accessRoleOf(entry.accessRole);
      if (role !== undefined && entry.deleted !== true) {
        out.push(toCalendarInfo(entry, role, entry.primary === true));
      }
    }
    if (!data.nextPageToken) {
      return out;
    }
    pageToken = data.nextPageToken;
  }
  return out;
}

/**
 * One calendar by id: verifies that this connection can read it (calendars.get) and takes the
 * access role from the calendar list. A service account sees a shared calendar on its list
 * only after calendarList.insert, as Google requires, so it adds it there when missing.
 */
export async function getCalendar(
  call: Call,
  api: calendar_v3.Calendar,
  authKind: 'oauth' | 'service_account',
  externalId: string,
  signal?: AbortSignal,
): Promise<CalendarInfo> {
  const where = { calendarId: externalId };
  const calendar = await call(
    { operation: 'calendars.get', ...where },
    (options) => api.calendars.get({ calendarId: externalId }, options),
    { signal },
  );
  let entry: calendar_v3.Schema$CalendarListEntry | null = null;
  try {
    entry = await call(
      { operation: 'calendarList.get', ...where },
      (options) => api.calendarList.get({ calendarId: externalId }, options),
      { signal },
    );
  } catch (error) {
    if (!(isCalgateError(error) && error.code === 'not_found')) {
      throw error;
    }
  }
  if (entry === null && authKind === 'service_account') {
    entry = await call(
      { operation: 'calendarList.insert', ...where },
      (options) => api.calendarList.insert({ requestBody: { id: externalId } }, options),
      { signal },
    );
  }
  // Without a list entry, calendars.get proves read access and nothing more.
  const role = accessRoleOf(entry?.accessRole) ?? 'reader';
  return toCalendarInfo(entry ?? calendar, role, entry?.primary === true);
}
