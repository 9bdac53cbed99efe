/** events.list, events.get and events.instances. */
import { type ApiDeps, apiRoute, boolParam, intParam, notModified } from '../api.ts';
import { calendarAccess, type Principal } from '../auth.ts';
import { apiErrors } from '../errors.ts';
import { json, type Route } from '../http.ts';
import {
  type CalendarRecord,
  type EmulatorState,
  type EventDateTime,
  etagOf,
  rfc3339Millis,
} from '../state.ts';
import { findTarget, viewOfTarget } from './lookup.ts';
import { parseListFilter, selectRows, sortKey } from './query.ts';
import { type RenderOptions, renderView } from './render.ts';
import { EXPANSION_HORIZON_MS, expandInstances, isRecurring, keyForOriginalStart } from './series.ts';
import { parseQueryInstant, queryZone } from './times.ts';
import {
  compareKeys,
  decodePageToken,
  decodeSyncToken,
  encodePageToken,
  encodeSyncToken,
  pageSize,
  queryFingerprint,
  type SortKey,
} from './tokens.ts';
import { type EventView, instanceView } from './views.ts';

function collection(
  state: EmulatorState,
  calendar: CalendarRecord,
  principal: Principal,
  role: string,
  zone: string | undefined,
) {
  const entry = state.calendarLists.get(principal.email)?.get(calendar.id);
  const out: Record<string, unknown> = {
    kind: 'calendar#events',
    etag: etagOf(calendar.stamp),
    summary: calendar.summary,
    updated: rfc3339Millis(Math.floor(calendar.stamp / 1000) || state.now()),
    timeZone: zone ?? calendar.timeZone,
    accessRole: role,
    defaultReminders: entry?.defaultReminders ?? [],
  };
  if (calendar.description !== undefined) {
    out.description = calendar.description;
  }
  return out;
}

/** Sorts rows, skips past the page token's cursor, and cuts one page. */
function paginate(rows: EventView[], keyOf: (v: EventView) => SortKey, after: SortKey | null, max: number) {
  const keyed = rows.map((view) => ({ view, key: keyOf(view) })).sort((a, b) => compareKeys(a.key, b.key));
  const remaining = after === null ? keyed : keyed.filter((r) => compareKeys(r.key, after) > 0);
  const page = remaining.slice(0, max);
  const last = page.at(-1);
  return { page: page.map((r) => r.view), next: remaining.length > max && last ? last.key : null };
}

function renderOptions(q: URLSearchParams, role: RenderOptions['role']): RenderOptions {
  const options: RenderOptions = { role };
  const zone = queryZone(q.get('timeZone'));
  if (zone !== undefined) {
    options.responseZone = zone;
  }
  const maxAttendees = intParam(q, 'maxAttendees');
  if (maxAttendees !== undefined) {
    options.maxAttendees = maxAttendees;
  }
  return options;
}

export function eventReadRoutes(deps: ApiDeps): Route[] {
  const { state } = deps;
  return [
    apiRoute(deps, 'GET', '/calendars/:calendarId/events', 'events.list', 'eventsRead', (ctx, principal) => {
      const { calendar, role } = calendarAccess(
        state,
        principal,
        ctx.params.calendarId ?? '',
        'freeBusyReader',
      );
      const q = ctx.query;
      const syncToken = q.get('syncToken');
      const filter = parseListFilter(q, syncToken !== null);
      if (syncToken !== null) {
        filter.sinceSeq = decodeSyncToken(syncToken, calendar, state.epoch);
      }
      const max = pageSize(q.get('maxResults'), 250, 2500);
      const fingerprint = queryFingerprint(q);
      const pageToken = q.get('pageToken');
      const cursor = pageToken ? decodePageToken(pageToken, fingerprint) : null;
      const snapshot = cursor?.snapshot ?? calendar.seq;
      const rows = selectRows(calendar, filter, state);
      const { page, next } = paginate(rows, (v) => sortKey(v, filter), cursor?.after ?? null, max);
      const options = renderOptions(q, role);
      const body = collection(state, calendar, principal, role, options.responseZone);
      if (next !== null) {
        body.nextPageToken = encodePageToken({ after: next, snapshot, query: fingerprint });
      } else {
        body.nextSyncToken = encodeSyncToken(calendar, snapshot, state.epoch);
      }
      body.items = page.map((view) => renderView(calendar, view, options));
      return json(body);
    }),
    apiRoute(
      deps,
      'GET',
      '/calendars/:calendarId/events/:eventId',
      'events.get',
      'eventsRead',
      (ctx, principal) => {
        const { calendar, role } = calendarAccess(
          state,
          principal,
          ctx.params.calendarId ?? '',
          'freeBusyReader',
        );
        const view = viewOfTarget(calendar, findTarget(calendar, ctx.params.eventId ?? ''));
        const etag = etagOf(view.stamp);
        return (
          notModified(ctx, etag) ??
          json(renderView(calendar, view, renderOptions(ctx.query, role)), 200, { etag })
        );
      },
    ),
    apiRoute(
      deps,
      'GET',
      '/calendars/:calendarId/events/:eventId/instances',
      'events.instances',
      'eventsRead',
      (ctx, principal) => {
        const { calendar, role } = calendarAccess(
          state,
          principal,
          ctx.params.calendarId ?? '',
          'freeBusyReader',
        );
        const master = calendar.events.get(ctx.params.eventId ?? '');
        if (!master || master.recurringEventId !== undefined) {
          throw apiErrors.notFound();
        }
        if (master.data.status === 'cancelled') {
          throw apiErrors.deleted();
        }
        const q = ctx.query;
        const timeMin = q.get('timeMin')
          ? parseQueryInstant(q.get('timeMin') as string, 'timeMin')
          : undefined;
        const timeMax = q.get('timeMax')
          ? parseQueryInstant(q.get('timeMax') as string, 'timeMax')
          : undefined;
        if (timeMin !== undefined && timeMax !== undefined && timeMax <= timeMin) {
          throw apiErrors.timeRangeEmpty();
        }
        const showDeleted = boolParam(q, 'showDeleted');
        const originalStart = q.get('originalStart');
        const rows: EventView[] = [];
        if (isRecurring(master)) {
          const to = timeMax ?? Math.max(state.now(), master.created) + EXPANSION_HORIZON_MS;
          const generated = expandInstances(
            calendar,
            master,
            timeMin === undefined ? { to } : { from: timeMin, to },
          );
          const seen = new Set<string>();
          for (const instance of generated) {
            const exception = calendar.events.get(`${master.id}_${instance.key}`);
            rows.push(instanceView(calendar, master, instance.originalStart, exception));
            seen.add(instance.key);
          }
          for (const e of calendar.events.values()) {
            if (e.recurringEventId === master.id && e.instanceKey && !seen.has(e.instanceKey)) {
              const view = instanceView(calendar, master, e.data.originalStartTime as EventDateTime, e);
              const inWindow =
                (timeMin === undefined || view.endMs > timeMin) &&
                (timeMax === undefined || view.startMs < timeMax);
              if (inWindow) {
                rows.push(view);
              }
            }
          }
        }
        const wantedKey = originalStart
          ? keyForOriginalStart({ dateTime: originalStart }, calendar.timeZone)
          : undefined;
        const visible = rows.filter(
          (v) =>
            (showDeleted || !v.cancelled) &&
            (wantedKey === undefined ||
              v.id === `${master.id}_${wantedKey}` ||
              v.id === `${master.id}_${wantedKey.slice(0, 8)}`),
        );
        const fingerprint = queryFingerprint(q);
        const pageToken = q.get('pageToken');
        const cursor = pageToken ? decodePageToken(pageToken, fingerprint) : null;
        const max = pageSize(q.get('maxResults'), 250, 2500);
        const { page, next } = paginate(visible, (v) => [v.startMs, v.id], cursor?.after ?? null, max);
        const options = renderOptions(q, role);
        const body = collection(state, calendar, principal, role, options.responseZone);
        if (next !== null) {
          body.nextPageToken = encodePageToken({ after: next, snapshot: calendar.seq, query: fingerprint });
        }
        body.items = page.map((view) => renderView(calendar, view, options));
        return json(body);
      },
    ),
  ];
}
