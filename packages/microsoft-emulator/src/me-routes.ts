/** `/me`, `/me/mailboxSettings` and `/me/calendars` (paged with absolute `@odata.nextLink`). */
import { GRAPH_PREFIX, graphRoute, linkTo, skipOf, topOf } from './api.ts';
import { graphErrors } from './errors.ts';
import { json, type RequestContext, type Route } from './http.ts';
import { renderCalendar } from './render.ts';
import { addCalendar } from './seed.ts';
import type { CalendarRecord, MicrosoftState } from './state.ts';

export interface Paging {
  /** Answer each first page one item short of `$top` (Graph may answer shorter pages than asked). */
  shortPages: boolean;
}

export function calendarFor(state: MicrosoftState, mailbox: string, id: string | undefined): CalendarRecord {
  const calendar = id === undefined ? state.defaultCalendar(mailbox) : state.calendars.get(id);
  if (!calendar || calendar.mailbox !== mailbox) {
    throw graphErrors.notFound();
  }
  return calendar;
}

/** One page of `items` from `skip`, `top` long (one short on a first page when pages are short). */
export function page<T>(
  items: T[],
  skip: number,
  top: number,
  paging: Paging,
): { items: T[]; next?: number } {
  const size = paging.shortPages && skip === 0 && top > 1 ? top - 1 : top;
  const slice = items.slice(skip, skip + size);
  return skip + size < items.length ? { items: slice, next: skip + size } : { items: slice };
}

export function context(ctx: RequestContext, what: string): string {
  return `${ctx.baseUrl}${GRAPH_PREFIX}/$metadata#${what}`;
}

export function meRoutes(state: MicrosoftState, paging: Paging): Route[] {
  return [
    graphRoute(state, 'GET', '/me', 'me.get', 'profile', (ctx, { user }) =>
      json({
        '@odata.context': context(ctx, 'users/$entity'),
        businessPhones: [],
        displayName: user.displayName,
        givenName: user.displayName.split(' ')[0] ?? null,
        jobTitle: null,
        mail: user.mail,
        mobilePhone: null,
        officeLocation: null,
        preferredLanguage: 'en-US',
        surname: user.displayName.split(' ').slice(1).join(' ') || null,
        userPrincipalName: user.userPrincipalName,
        id: user.id,
      }),
    ),
    graphRoute(
      state,
      'GET',
      '/me/mailboxSettings',
      'mailboxSettings.get',
      'mailboxSettings',
      (ctx, { user }) =>
        json({
          '@odata.context': context(ctx, `users('${user.id}')/mailboxSettings`),
          archiveFolder: 'AAMkAGArchive',
          timeZone: user.timeZone,
          delegateMeetingMessageDeliveryOptions: 'sendToDelegateOnly',
          dateFormat: 'M/d/yyyy',
          timeFormat: 'h:mm tt',
          userPurpose: user.accountType === 'personal' ? 'user' : 'user',
          automaticRepliesSetting: { status: 'disabled', externalAudience: 'all' },
          language: { locale: 'en-US', displayName: 'English (United States)' },
          workingHours: {
            daysOfWeek: ['monday', 'tuesday', 'wednesday', 'thursday', 'friday'],
            startTime: '08:00:00.0000000',
            endTime: '17:00:00.0000000',
            timeZone: { name: user.timeZone },
          },
        }),
    ),
    graphRoute(state, 'GET', '/me/calendars', 'calendars.list', 'calendarRead', (ctx, { mailbox }) => {
      const all = state.calendarsOf(mailbox);
      const skip = skipOf(ctx.query);
      const result = page(all, skip, topOf(ctx.query, 10), paging);
      return json({
        '@odata.context': context(ctx, `users('${mailbox}')/calendars`),
        value: result.items.map(renderCalendar),
        ...(result.next === undefined
          ? {}
          : { '@odata.nextLink': linkTo(ctx, { $skip: String(result.next) }) }),
      });
    }),
    graphRoute(state, 'POST', '/me/calendars', 'calendars.create', 'calendarWrite', (ctx, { mailbox }) => {
      const name = typeof ctx.body.name === 'string' ? ctx.body.name.trim() : '';
      if (name === '') {
        throw graphErrors.badRequest("The property 'name' is required.");
      }
      if (state.calendarsOf(mailbox).some((c) => c.name.toLowerCase() === name.toLowerCase())) {
        throw graphErrors.badRequest(`A folder with the specified name already exists., ${name}`);
      }
      const created = addCalendar(state, mailbox, { name });
      return json(
        {
          '@odata.context': context(ctx, `users('${mailbox}')/calendars/$entity`),
          ...renderCalendar(created),
        },
        201,
      );
    }),
    graphRoute(state, 'GET', '/me/calendar', 'calendars.get', 'calendarRead', (ctx, { mailbox }) =>
      json({
        '@odata.context': context(ctx, 'calendars/$entity'),
        ...renderCalendar(calendarFor(state, mailbox, undefined)),
      }),
    ),
    graphRoute(
      state,
      'GET',
      '/me/calendars/:calendarId',
      'calendars.get',
      'calendarRead',
      (ctx, { mailbox }) =>
        json({
          '@odata.context': context(ctx, 'calendars/$entity'),
          ...renderCalendar(calendarFor(state, mailbox, ctx.params.calendarId)),
        }),
    ),
  ];
}
