/** events.insert, update, patch, delete, import, move and quickAdd. */
import { type ApiDeps, apiRoute, checkIfMatch } from '../api.ts';
import { calendarAccess } from '../auth.ts';
import { apiErrors } from '../errors.ts';
import { json, noContent, type Route } from '../http.ts';
import { type CalendarRecord, etagOf } from '../state.ts';
import { findTarget, viewOfTarget } from './lookup.ts';
import { parseQuickAdd } from './quickadd.ts';
import { deleteTarget, moveEvent } from './remove.ts';
import { renderView } from './render.ts';
import { queryZone } from './times.ts';
import { insertEvent, writeTarget } from './write.ts';

function respond(calendar: CalendarRecord, eventId: string, q: URLSearchParams) {
  const view = viewOfTarget(calendar, findTarget(calendar, eventId));
  const zone = queryZone(q.get('timeZone'));
  const body = renderView(
    calendar,
    view,
    zone === undefined ? { role: 'owner' } : { role: 'owner', responseZone: zone },
  );
  return json(body, 200, { etag: etagOf(view.stamp) });
}

export function eventWriteRoutes(deps: ApiDeps): Route[] {
  const { state } = deps;
  const actorOf = (p: { email: string; kind: 'user' | 'service' }) => ({ email: p.email, kind: p.kind });
  const update = (mode: 'update' | 'patch') =>
    apiRoute(
      deps,
      mode === 'update' ? 'PUT' : 'PATCH',
      '/calendars/:calendarId/events/:eventId',
      `events.${mode}`,
      'eventsWrite',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer');
        const target = findTarget(calendar, ctx.params.eventId ?? '');
        checkIfMatch(ctx, etagOf(viewOfTarget(calendar, target).stamp));
        writeTarget(state, calendar, actorOf(principal), target, ctx.body, mode);
        return respond(calendar, ctx.params.eventId ?? '', ctx.query);
      },
    );
  return [
    apiRoute(
      deps,
      'POST',
      '/calendars/:calendarId/events',
      'events.insert',
      'eventsWrite',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer');
        const event = insertEvent(state, calendar, actorOf(principal), ctx.body);
        return respond(calendar, event.id, ctx.query);
      },
    ),
    apiRoute(
      deps,
      'POST',
      '/calendars/:calendarId/events/import',
      'events.import',
      'eventsWrite',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer');
        const event = insertEvent(state, calendar, actorOf(principal), ctx.body, 'import');
        return respond(calendar, event.id, ctx.query);
      },
    ),
    apiRoute(
      deps,
      'POST',
      '/calendars/:calendarId/events/quickAdd',
      'events.quickAdd',
      'eventsWrite',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer');
        const text = ctx.query.get('text');
        if (text === null || text.trim() === '') {
          throw apiErrors.required('Required', 'text');
        }
        const parsed = parseQuickAdd(text, state.now(), calendar.timeZone);
        const event = insertEvent(state, calendar, actorOf(principal), { ...parsed });
        return respond(calendar, event.id, ctx.query);
      },
    ),
    update('update'),
    update('patch'),
    apiRoute(
      deps,
      'DELETE',
      '/calendars/:calendarId/events/:eventId',
      'events.delete',
      'eventsWrite',
      (ctx, principal) => {
        const { calendar } = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer');
        const target = findTarget(calendar, ctx.params.eventId ?? '');
        checkIfMatch(ctx, etagOf(viewOfTarget(calendar, target).stamp));
        deleteTarget(state, calendar, target);
        return noContent();
      },
    ),
    apiRoute(
      deps,
      'POST',
      '/calendars/:calendarId/events/:eventId/move',
      'events.move',
      'eventsWrite',
      (ctx, principal) => {
        const destinationId = ctx.query.get('destination');
        if (destinationId === null || destinationId === '') {
          throw apiErrors.required('Required', 'destination');
        }
        const source = calendarAccess(state, principal, ctx.params.calendarId ?? '', 'writer').calendar;
        const destination = calendarAccess(state, principal, destinationId, 'writer').calendar;
        const target = findTarget(source, ctx.params.eventId ?? '');
        checkIfMatch(ctx, etagOf(viewOfTarget(source, target).stamp));
        const moved = moveEvent(state, source, destination, target);
        return respond(destination, moved.id, ctx.query);
      },
    ),
  ];
}
