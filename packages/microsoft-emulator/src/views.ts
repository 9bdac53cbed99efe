/**
 * Read views: calendarView (window required; occurrences, exceptions and single events, never
 * masters; `$top`, `$skip`, `$select`, `$orderby`), a series' instances, and calendarView/delta
 * (the window only in the first request, then `$skiptoken` and `$deltatoken` links; `@removed`
 * entries; an unknown or expired delta token answers 410 SyncStateNotFound).
 */
import { randomBytes } from 'node:crypto';
import { type Caller, graphRoute, linkTo, skipOf, topOf } from './api.ts';
import { graphErrors } from './errors.ts';
import { parseExpand } from './extended.ts';
import { json, type RequestContext, type Route } from './http.ts';
import { calendarView, type Instance, seriesInstances } from './instances.ts';
import { calendarFor, context, type Paging, page } from './me-routes.ts';
import { EVENT_PROPERTIES, renderEvent } from './render.ts';
import type { CalendarRecord, MicrosoftState } from './state.ts';
import { parseQueryInstant } from './time.ts';

export function parseSelect(query: URLSearchParams): string[] | undefined {
  const raw = query.get('$select') ?? query.get('select');
  if (raw === null) {
    return undefined;
  }
  const names = raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const name of names) {
    if (!EVENT_PROPERTIES.has(name)) {
      throw graphErrors.unknownProperty(name);
    }
  }
  return names;
}

const ORDER_KEYS: Record<string, (i: Instance) => number | string> = {
  'start/dateTime': (i) => i.start,
  'end/dateTime': (i) => i.end,
  subject: (i) => i.record.subject.toLowerCase(),
  createdDateTime: (i) => i.record.created,
  lastModifiedDateTime: (i) => i.record.modified,
};

function orderBy(query: URLSearchParams, items: Instance[]): Instance[] {
  const raw = query.get('$orderby') ?? query.get('orderby');
  if (raw === null) {
    return items;
  }
  const keys = raw.split(',').map((part) => {
    const [name = '', dir = 'asc'] = part.trim().split(/\s+/);
    const key = ORDER_KEYS[name];
    if (!key) {
      throw graphErrors.unknownProperty(name.split('/')[0] ?? name);
    }
    if (dir !== 'asc' && dir !== 'desc') {
      throw graphErrors.badRequest(`Syntax error at position ${part.length} in '${raw}'.`);
    }
    return { key, sign: dir === 'desc' ? -1 : 1 };
  });
  return [...items].sort((a, b) => {
    for (const { key, sign } of keys) {
      const x = key(a);
      const y = key(b);
      if (x !== y) {
        return (x < y ? -1 : 1) * sign;
      }
    }
    return 0;
  });
}

/** The time window of a view: both bounds required, offsets honoured, offset-less read as UTC. */
export function windowOf(query: URLSearchParams): [number, number] {
  const startText = query.get('startDateTime') ?? query.get('startdatetime');
  const endText = query.get('endDateTime') ?? query.get('enddatetime');
  if (startText === null || endText === null) {
    throw graphErrors.timeWindowRequired();
  }
  const start = parseQueryInstant(startText, 'UTC');
  const end = parseQueryInstant(endText, 'UTC');
  if (start === undefined) {
    throw graphErrors.invalidParameter(`The value '${startText}' of parameter 'StartDateTime' is invalid.`);
  }
  if (end === undefined) {
    throw graphErrors.invalidParameter(`The value '${endText}' of parameter 'EndDateTime' is invalid.`);
  }
  return [start, end];
}

export function viewRoutes(state: MicrosoftState, paging: Paging): Route[] {
  const renderAll = (ctx: RequestContext, caller: Caller, calendar: CalendarRecord, items: Instance[]) => {
    const select = parseSelect(ctx.query);
    const expand = parseExpand(ctx.query);
    return items.map((instance) =>
      renderEvent(instance, calendar, {
        zone: caller.prefs.zone,
        mailbox: caller.mailbox,
        ...(caller.prefs.bodyType ? { bodyType: caller.prefs.bodyType } : {}),
        ...(select ? { select } : {}),
        ...(expand ? { expand } : {}),
      }),
    );
  };

  const pageSize = (ctx: RequestContext, caller: Caller) => {
    const top = topOf(ctx.query, 10);
    return caller.prefs.maxPageSize ? Math.min(top, Math.max(1, caller.prefs.maxPageSize)) : top;
  };

  const view = (ctx: RequestContext, caller: Caller) => {
    const calendar = calendarFor(state, caller.mailbox, ctx.params.calendarId);
    const [from, to] = windowOf(ctx.query);
    const items = orderBy(ctx.query, calendarView(calendar, from, to));
    const result = page(items, skipOf(ctx.query), pageSize(ctx, caller), paging);
    return json({
      '@odata.context': context(ctx, `users('${caller.mailbox}')/calendars('${calendar.id}')/calendarView`),
      value: renderAll(ctx, caller, calendar, result.items),
      ...(result.next === undefined
        ? {}
        : { '@odata.nextLink': linkTo(ctx, { $skip: String(result.next) }) }),
    });
  };

  const instances = (ctx: RequestContext, caller: Caller) => {
    const calendars =
      ctx.params.calendarId === undefined
        ? state.calendarsOf(caller.mailbox)
        : [calendarFor(state, caller.mailbox, ctx.params.calendarId)];
    const calendar = calendars.find((c) => c.events.has(ctx.params.eventId ?? ''));
    const record = calendar?.events.get(ctx.params.eventId ?? '');
    if (!calendar || !record) {
      throw graphErrors.notFound();
    }
    const [from, to] = windowOf(ctx.query);
    const items =
      record.kind === 'seriesMaster'
        ? orderBy(
            ctx.query,
            seriesInstances(calendar, record, from, to).sort((a, b) => a.start - b.start),
          )
        : [];
    const result = page(items, skipOf(ctx.query), pageSize(ctx, caller), paging);
    return json({
      '@odata.context': context(ctx, `users('${caller.mailbox}')/events('${record.id}')/instances`),
      value: renderAll(ctx, caller, calendar, result.items),
      ...(result.next === undefined
        ? {}
        : { '@odata.nextLink': linkTo(ctx, { $skip: String(result.next) }) }),
    });
  };

  const delta = (ctx: RequestContext, caller: Caller) => {
    const calendar = calendarFor(state, caller.mailbox, ctx.params.calendarId);
    const size = caller.prefs.maxPageSize ? Math.max(1, caller.prefs.maxPageSize) : 10;
    const deltaBase = `${ctx.baseUrl}${ctx.path}`;
    const skip = ctx.query.get('$skiptoken');
    const deltaToken = ctx.query.get('$deltatoken');
    let pages: { items: Record<string, unknown>[] }[];
    let round: { seen: Map<string, string>; window: [number, number] };
    if (skip !== null) {
      const pending = state.delta.get(`skip:${skip}`);
      if (
        !pending ||
        pending.calendarId !== calendar.id ||
        pending.mailbox !== caller.mailbox ||
        !pending.pages
      ) {
        throw graphErrors.syncStateNotFound();
      }
      state.delta.delete(`skip:${skip}`);
      pages = pending.pages as { items: Record<string, unknown>[] }[];
      round = pending;
    } else {
      let window: [number, number];
      let seen = new Map<string, string>();
      if (deltaToken !== null) {
        const previous = state.delta.get(`delta:${deltaToken}`);
        if (!previous || previous.calendarId !== calendar.id || previous.mailbox !== caller.mailbox) {
          throw graphErrors.syncStateNotFound();
        }
        window = previous.window;
        seen = previous.seen;
      } else {
        window = windowOf(ctx.query);
      }
      const now = calendarView(calendar, window[0], window[1]);
      const current = new Map(now.map((i) => [i.id, i.changeKey]));
      const changed = now.filter((i) => seen.get(i.id) !== i.changeKey);
      const rendered: Record<string, unknown>[] = renderAll(ctx, caller, calendar, changed);
      for (const id of seen.keys()) {
        if (!current.has(id)) {
          rendered.push({ '@odata.type': '#microsoft.graph.event', id, '@removed': { reason: 'deleted' } });
        }
      }
      // A first round opens with an empty page and a next link, as Graph's does.
      pages = deltaToken === null ? [{ items: [] }] : [];
      for (let i = 0; i < rendered.length || i === 0; i += size) {
        pages.push({ items: rendered.slice(i, i + size) });
      }
      round = { seen: current, window };
    }
    const [first, ...rest] = pages;
    const body: Record<string, unknown> = {
      '@odata.context': context(ctx, 'Collection(event)'),
      value: first?.items ?? [],
    };
    if (rest.length > 0) {
      const token = randomBytes(48).toString('base64url');
      state.delta.set(`skip:${token}`, {
        calendarId: calendar.id,
        mailbox: caller.mailbox,
        window: round.window,
        seen: round.seen,
        pages: rest,
      });
      body['@odata.nextLink'] = `${deltaBase}?$skiptoken=${token}`;
    } else {
      const token = randomBytes(48).toString('base64url');
      state.delta.set(`delta:${token}`, {
        calendarId: calendar.id,
        mailbox: caller.mailbox,
        window: round.window,
        seen: round.seen,
      });
      body['@odata.deltaLink'] = `${deltaBase}?$deltatoken=${token}`;
    }
    return json(body, 200, { 'preference-applied': `odata.maxpagesize=${size}` });
  };

  return [
    graphRoute(state, 'GET', '/me/calendarView', 'calendarView.list', 'calendarRead', view),
    graphRoute(state, 'GET', '/me/calendar/calendarView', 'calendarView.list', 'calendarRead', view),
    graphRoute(
      state,
      'GET',
      '/me/calendars/:calendarId/calendarView',
      'calendarView.list',
      'calendarRead',
      view,
    ),
    graphRoute(state, 'GET', '/me/calendarView/delta', 'calendarView.delta', 'calendarRead', delta),
    graphRoute(state, 'GET', '/me/calendar/calendarView/delta', 'calendarView.delta', 'calendarRead', delta),
    graphRoute(
      state,
      'GET',
      '/me/calendars/:calendarId/calendarView/delta',
      'calendarView.delta',
      'calendarRead',
      delta,
    ),
    graphRoute(state, 'GET', '/me/events/:eventId/instances', 'events.instances', 'calendarRead', instances),
    graphRoute(
      state,
      'GET',
      '/me/calendars/:calendarId/events/:eventId/instances',
      'events.instances',
      'calendarRead',
      instances,
    ),
  ];
}
