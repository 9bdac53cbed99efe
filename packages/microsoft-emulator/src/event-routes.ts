/**
 * Events by id: list and create in a calendar (idempotent through `transactionId`; a listing
 * filtered by transactionId or by a single-value extended property), GET, PATCH
 * (If-Match with the `@odata.etag` or change key; 412 on mismatch) and DELETE on single events,
 * series masters, occurrences and exceptions, and the meeting actions accept, decline,
 * tentativelyAccept and cancel.
 */
import { type Caller, graphRoute, linkTo, skipOf, topOf } from './api.ts';
import { graphErrors } from './errors.ts';
import { matchesExtended, parseExpand, parseExtendedFilter } from './extended.ts';
import { json, noContent, type RequestContext, type Route } from './http.ts';
import { type Instance, instanceById, ownInstance } from './instances.ts';
import { calendarFor, context, type Paging, page } from './me-routes.ts';
import { etag, renderEvent } from './render.ts';
import type { CalendarRecord, MicrosoftState } from './state.ts';
import type { Notifier } from './subscriptions.ts';
import { parseSelect } from './views.ts';
import { applyInput, exceptionFrom, newEvent, resetSeries, touch } from './write.ts';

interface Located {
  calendar: CalendarRecord;
  instance: Instance;
}

/** The event (or occurrence) `id` names in the caller's calendar, or any of the caller's calendars. */
export function locate(state: MicrosoftState, caller: Caller, id: string, calendarId?: string): Located {
  const calendars =
    calendarId === undefined
      ? state.calendarsOf(caller.mailbox)
      : [calendarFor(state, caller.mailbox, calendarId)];
  for (const calendar of calendars) {
    const instance = instanceById(calendar, id);
    if (instance) {
      return { calendar, instance };
    }
  }
  if (!/^[A-Za-z0-9_=+/-]+$/.test(id)) {
    throw graphErrors.malformedId();
  }
  throw graphErrors.notFound();
}

function checkIfMatch(ctx: RequestContext, instance: Instance): void {
  const header = ctx.headers['if-match'];
  if (header === undefined) {
    return;
  }
  const values = String(header)
    .split(',')
    .map((v) => v.trim());
  const ok = values.some(
    (v) =>
      v === '*' ||
      v === etag(instance.changeKey) ||
      v === instance.changeKey ||
      v === `"${instance.changeKey}"`,
  );
  if (!ok) {
    throw graphErrors.conflict();
  }
}

function checkWritable(calendar: CalendarRecord): void {
  if (!calendar.canEdit) {
    throw graphErrors.accessDenied();
  }
}

const SERIES_FIELDS = ['start', 'end', 'recurrence', 'isAllDay'];

export function eventRoutes(state: MicrosoftState, paging: Paging, notifier: Notifier): Route[] {
  const render = (ctx: RequestContext, caller: Caller, l: Located) => {
    const expand = parseExpand(ctx.query);
    return renderEvent(l.instance, l.calendar, {
      zone: caller.prefs.zone,
      mailbox: caller.mailbox,
      ...(caller.prefs.bodyType ? { bodyType: caller.prefs.bodyType } : {}),
      ...(parseSelect(ctx.query) ? { select: parseSelect(ctx.query) as string[] } : {}),
      ...(expand ? { expand } : {}),
    });
  };

  const list = (ctx: RequestContext, caller: Caller) => {
    const calendar = calendarFor(state, caller.mailbox, ctx.params.calendarId);
    parseExpand(ctx.query);
    // `$filter=transactionId eq '…'` finds the event a create with that transactionId made;
    // `$filter=singleValueExtendedProperties/Any(…)` the events carrying an extended property.
    const filter = /^transactionId eq '([^']*)'$/.exec(ctx.query.get('$filter') ?? '');
    const extended = parseExtendedFilter(ctx.query.get('$filter') ?? '');
    const records = [...calendar.events.values()]
      .filter((e) => e.kind !== 'exception')
      .filter((e) => filter === null || e.transactionId === filter[1])
      .filter((e) => extended === undefined || matchesExtended(e, extended))
      .sort((a, b) => a.created - b.created || (a.id < b.id ? -1 : 1));
    const result = page(records, skipOf(ctx.query), topOf(ctx.query, 10), paging);
    return json(
      {
        '@odata.context': context(ctx, `users('${caller.mailbox}')/calendars('${calendar.id}')/events`),
        value: result.items.map((r) => render(ctx, caller, { calendar, instance: ownInstance(r) })),
        ...(result.next === undefined
          ? {}
          : { '@odata.nextLink': linkTo(ctx, { $skip: String(result.next) }) }),
      },
      200,
    );
  };

  const create = (ctx: RequestContext, caller: Caller) => {
    const calendar = calendarFor(state, caller.mailbox, ctx.params.calendarId);
    checkWritable(calendar);
    const transactionId = typeof ctx.body.transactionId === 'string' ? ctx.body.transactionId : undefined;
    if (transactionId !== undefined) {
      const existing = calendar.events.get(state.transactions.get(`${calendar.id}|${transactionId}`) ?? '');
      if (existing) {
        return json(render(ctx, caller, { calendar, instance: ownInstance(existing) }), 201);
      }
    }
    const event = newEvent(calendar, state.now());
    const owner = state.user(calendar.owner.address);
    event.organizer = {
      name: owner?.displayName ?? calendar.owner.name,
      address: owner?.mail ?? calendar.owner.address,
    };
    event.response = 'organizer';
    applyInput(event, ctx.body, true);
    if (transactionId !== undefined) {
      event.transactionId = transactionId;
      state.transactions.set(`${calendar.id}|${transactionId}`, event.id);
    }
    if (event.kind === 'seriesMaster') {
      event.deleted = new Set();
    }
    calendar.events.set(event.id, event);
    notifier.changed(calendar, event.id, 'created');
    return json(
      {
        '@odata.context': context(
          ctx,
          `users('${caller.mailbox}')/calendars('${calendar.id}')/events/$entity`,
        ),
        ...render(ctx, caller, { calendar, instance: ownInstance(event) }),
      },
      201,
    );
  };

  const get = (ctx: RequestContext, caller: Caller) => {
    const found = locate(state, caller, ctx.params.eventId ?? '', ctx.params.calendarId);
    return json({
      '@odata.context': context(ctx, `users('${caller.mailbox}')/events/$entity`),
      ...render(ctx, caller, found),
    });
  };

  const update = (ctx: RequestContext, caller: Caller) => {
    const found = locate(state, caller, ctx.params.eventId ?? '', ctx.params.calendarId);
    const { calendar, instance } = found;
    checkWritable(calendar);
    checkIfMatch(ctx, instance);
    const now = state.now();
    if (instance.type === 'occurrence') {
      const exception = exceptionFrom(calendar, instance, now);
      applyInput(exception, ctx.body, false);
      calendar.events.set(exception.id, exception);
      notifier.changed(calendar, exception.id, 'updated');
      return json(render(ctx, caller, { calendar, instance: ownInstance(exception) }));
    }
    const record = instance.record;
    const working = structuredClone(record);
    applyInput(working, ctx.body, false);
    Object.assign(record, working);
    if (record.kind === 'seriesMaster' && SERIES_FIELDS.some((f) => ctx.body[f] !== undefined)) {
      resetSeries(calendar, record);
    }
    if (record.kind === 'singleInstance') {
      delete record.deleted;
      for (const e of [...calendar.events.values()]) {
        if (e.seriesMasterId === record.id) {
          calendar.events.delete(e.id);
        }
      }
    }
    touch(record, now);
    notifier.changed(calendar, record.id, 'updated');
    return json(render(ctx, caller, { calendar, instance: ownInstance(record) }));
  };

  const remove = (ctx: RequestContext, caller: Caller) => {
    const { calendar, instance } = locate(state, caller, ctx.params.eventId ?? '', ctx.params.calendarId);
    checkWritable(calendar);
    checkIfMatch(ctx, instance);
    deleteInstance(calendar, instance);
    notifier.changed(calendar, instance.id, 'deleted');
    return noContent();
  };

  const respond =
    (response: 'accepted' | 'declined' | 'tentativelyAccepted') => (ctx: RequestContext, caller: Caller) => {
      const { calendar, instance } = locate(state, caller, ctx.params.eventId ?? '', ctx.params.calendarId);
      if (instance.record.organizer.address.toLowerCase() === calendar.owner.address.toLowerCase()) {
        throw graphErrors.invalidRequest(
          "Your request can't be completed. You can't respond to this meeting because you're the meeting organizer.",
        );
      }
      const target =
        instance.type === 'occurrence'
          ? (() => {
              const e = exceptionFrom(calendar, instance, state.now());
              calendar.events.set(e.id, e);
              return e;
            })()
          : instance.record;
      target.response = response;
      target.responseTime = new Date(state.now()).toISOString();
      touch(target, state.now());
      // Outlook removes a declined meeting from the attendee's calendar, unless the mailbox saves
      // declined events: then it stays, shown as free.
      const removed =
        response === 'declined' && state.user(calendar.mailbox)?.preserveDeclinedMeetings !== true;
      if (removed) {
        deleteInstance(calendar, ownInstance(target));
      } else if (response === 'declined') {
        target.showAs = 'free';
      }
      notifier.changed(calendar, target.id, removed ? 'deleted' : 'updated');
      return { status: 202 };
    };

  const cancel = (ctx: RequestContext, caller: Caller) => {
    const { calendar, instance } = locate(state, caller, ctx.params.eventId ?? '', ctx.params.calendarId);
    checkWritable(calendar);
    if (instance.record.organizer.address.toLowerCase() !== calendar.owner.address.toLowerCase()) {
      throw graphErrors.invalidRequest(
        "Your request can't be completed. You need to be an organizer to cancel a meeting.",
      );
    }
    deleteInstance(calendar, instance);
    notifier.changed(calendar, instance.id, 'deleted');
    return { status: 202 };
  };

  const both = (
    method: string,
    tail: string,
    op: string,
    need: 'calendarRead' | 'calendarWrite',
    handler: (ctx: RequestContext, caller: Caller) => ReturnType<typeof get>,
  ) => [
    graphRoute(state, method, `/me/events${tail}`, op, need, handler),
    graphRoute(state, method, `/me/calendar/events${tail}`, op, need, handler),
    graphRoute(state, method, `/me/calendars/:calendarId/events${tail}`, op, need, handler),
  ];

  return [
    ...both('GET', '', 'events.list', 'calendarRead', list),
    ...both('POST', '', 'events.create', 'calendarWrite', create),
    ...both('GET', '/:eventId', 'events.get', 'calendarRead', get),
    ...both('PATCH', '/:eventId', 'events.update', 'calendarWrite', update),
    ...both('DELETE', '/:eventId', 'events.delete', 'calendarWrite', remove),
    ...both('POST', '/:eventId/accept', 'events.accept', 'calendarWrite', respond('accepted')),
    ...both('POST', '/:eventId/decline', 'events.decline', 'calendarWrite', respond('declined')),
    ...both(
      'POST',
      '/:eventId/tentativelyAccept',
      'events.tentativelyAccept',
      'calendarWrite',
      respond('tentativelyAccepted'),
    ),
    ...both('POST', '/:eventId/cancel', 'events.cancel', 'calendarWrite', cancel),
  ];
}

/** Deletes what an instance stands for: a whole event or series, or one occurrence of a series. */
export function deleteInstance(calendar: CalendarRecord, instance: Instance): void {
  if (instance.type === 'singleInstance' || instance.type === 'seriesMaster') {
    calendar.events.delete(instance.id);
    for (const e of [...calendar.events.values()]) {
      if (e.seriesMasterId === instance.id) {
        calendar.events.delete(e.id);
      }
    }
    return;
  }
  const master = calendar.events.get(instance.seriesMasterId ?? '');
  calendar.events.delete(instance.id);
  if (master) {
    master.deleted ??= new Set();
    master.deleted.add(instance.originalStart as number);
  }
}
