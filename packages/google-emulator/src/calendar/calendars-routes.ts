/** calendars: get, insert, update/patch, delete, clear; and the static colors palette. */
import { randomBytes } from 'node:crypto';
import { isValidTimeZone } from '@calgate/core';
import { type ApiDeps, apiRoute } from '../api.ts';
import { calendarAccess } from '../auth.ts';
import { apiErrors } from '../errors.ts';
import { deleteTarget } from '../events/remove.ts';
import { json, noContent, type Route } from '../http.ts';
import { CALENDAR_COLORS, type CalendarRecord, type EmulatorState, EVENT_COLORS, etagOf } from '../state.ts';

export function renderCalendar(calendar: CalendarRecord): Record<string, unknown> {
  return {
    kind: 'calendar#calendar',
    etag: etagOf(calendar.stamp),
    id: calendar.id,
    summary: calendar.summary,
    ...(calendar.description === undefined ? {} : { description: calendar.description }),
    ...(calendar.location === undefined ? {} : { location: calendar.location }),
    timeZone: calendar.timeZone,
    ...(calendar.primary ? {} : { dataOwner: calendar.dataOwner }),
    conferenceProperties: { allowedConferenceSolutionTypes: ['hangoutsMeet'] },
  };
}

function applyCalendarFields(
  calendar: CalendarRecord,
  body: Record<string, unknown>,
  mode: 'update' | 'patch',
) {
  if (mode === 'update' && (typeof body.summary !== 'string' || body.summary === '')) {
    throw apiErrors.required('Missing title.');
  }
  if (body.summary !== undefined) {
    if (typeof body.summary !== 'string' || body.summary === '') {
      throw apiErrors.required('Missing title.');
    }
    calendar.summary = body.summary;
  }
  for (const field of ['description', 'location'] as const) {
    const value = body[field];
    if (value !== undefined && value !== null && typeof value !== 'string') {
      throw apiErrors.invalid(`Invalid value for ${field}.`);
    }
    if (typeof value === 'string') {
      calendar[field] = value;
    } else if (value === null || mode === 'update') {
      delete calendar[field];
    }
  }
  if (body.timeZone !== undefined) {
    if (typeof body.timeZone !== 'string' || !isValidTimeZone(body.timeZone)) {
      throw apiErrors.invalid('Invalid time zone.');
    }
    calendar.timeZone = body.timeZone;
  }
}

export function createCalendar(
  state: EmulatorState,
  owner: string,
  fields: { id?: string; summary: string; timeZone: string; primary?: boolean },
): CalendarRecord {
  const id = fields.id ?? `c_${randomBytes(24).toString('hex').slice(0, 40)}@group.calendar.google.com`;
  const calendar: CalendarRecord = {
    id,
    summary: fields.summary,
    timeZone: fields.timeZone,
    dataOwner: owner,
    primary: fields.primary ?? false,
    acl: new Map(),
    events: new Map(),
    seq: 0,
    syncFloor: 0,
    stamp: state.stamp(),
  };
  state.calendars.set(id, calendar);
  state.addToList(owner, id);
  return calendar;
}

const palette = (colors: readonly string[]) =>
  Object.fromEntries(colors.map((background, i) => [String(i + 1), { background, foreground: '#1d1d1d' }]));

export function calendarRoutes(deps: ApiDeps): Route[] {
  const { state } = deps;
  const change = (mode: 'update' | 'patch') =>
    apiRoute(
      deps,
      mode === 'update' ? 'PUT' : 'PATCH',
      '/calendars/:calendarId',
      `calendars.${mode}`,
      'calendarsWrite',
      (ctx, p) => {
        const { calendar } = calendarAccess(state, p, ctx.params.calendarId ?? '', 'owner');
        applyCalendarFields(calendar, ctx.body, mode);
        calendar.stamp = state.stamp();
        return json(renderCalendar(calendar));
      },
    );
  return [
    apiRoute(deps, 'GET', '/calendars/:calendarId', 'calendars.get', 'calendarsRead', (ctx, p) =>
      json(renderCalendar(calendarAccess(state, p, ctx.params.calendarId ?? '', 'freeBusyReader').calendar)),
    ),
    apiRoute(deps, 'POST', '/calendars', 'calendars.insert', 'calendarsWrite', (ctx, p) => {
      const summary = ctx.body.summary;
      if (typeof summary !== 'string' || summary === '') {
        throw apiErrors.required('Missing title.');
      }
      const zone = state.accounts.get(p.email)?.timeZone ?? 'UTC';
      const calendar = createCalendar(state, p.email, { summary, timeZone: zone });
      applyCalendarFields(calendar, ctx.body, 'patch');
      return json(renderCalendar(calendar));
    }),
    change('update'),
    change('patch'),
    apiRoute(deps, 'DELETE', '/calendars/:calendarId', 'calendars.delete', 'calendarsWrite', (ctx, p) => {
      const { calendar } = calendarAccess(state, p, ctx.params.calendarId ?? '', 'owner');
      if (calendar.primary) {
        throw apiErrors.badRequest('cannotDeletePrimaryCalendar', 'Cannot delete primary calendar.');
      }
      state.calendars.delete(calendar.id);
      state.calendarChanged(calendar.id);
      for (const list of state.calendarLists.values()) {
        const entry = list.get(calendar.id);
        if (entry) {
          entry.deleted = true;
          state.touchEntry(entry);
        }
      }
      return noContent();
    }),
    apiRoute(deps, 'POST', '/calendars/:calendarId/clear', 'calendars.clear', 'calendarsWrite', (ctx, p) => {
      const { calendar } = calendarAccess(state, p, ctx.params.calendarId ?? '', 'owner');
      for (const event of calendar.events.values()) {
        if (event.recurringEventId === undefined && event.data.status !== 'cancelled') {
          deleteTarget(state, calendar, { kind: 'stored', event });
        }
      }
      return noContent();
    }),
    apiRoute(deps, 'GET', '/colors', 'colors.get', 'any', () =>
      json({
        kind: 'calendar#colors',
        updated: '2012-02-14T00:00:00.000Z',
        calendar: palette(CALENDAR_COLORS),
        event: palette(EVENT_COLORS),
      }),
    ),
  ];
}
