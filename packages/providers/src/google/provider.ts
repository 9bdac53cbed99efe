/**
 * Google Calendar through googleapis. Every call runs inside the retry loop (retry.ts) with an
 * access token from this instance's token source; the gateway keeps one provider per
 * connection, so the token source's single-flight is per connection.
 */
import { CalgateError, isCalgateError, newEventId } from '@calgate/core';
import { type calendar_v3, calendar as googleCalendar } from '@googleapis/calendar';
import { freeBusyWindow } from '../busy.ts';
import type {
  CalendarEvent,
  CalendarInfo,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventInput,
  EventPage,
  EventPatch,
  FreeBusyResult,
  ListEventsQuery,
  NewCalendar,
  WriteOptions,
} from '../types.ts';
import { createCalendar, getCalendar, listCalendars } from './calendars.ts';
import { type Call, call } from './calls.ts';
import type { GoogleAuth } from './credentials.ts';
import { apiRoot } from './endpoints.ts';
import { queryFreeBusy } from './freebusy.ts';
import { findByICalUIDs } from './import-lookups.ts';
import { toCalendarEvent, toColorPalette, toGoogleEvent } from './mapping.ts';
import { clampPageSize } from './page-size.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, type RetryRuntime, realSleep } from './retry.ts';
import { searchPages } from './search.ts';
import { type AccessTokenSource, OAuthTokenSource, ServiceAccountTokenSource } from './token-sources.ts';

export interface GoogleProviderOptions {
  auth: GoogleAuth;
  /** The account's email, so errors such as a write through a read-only connection can name it. */
  account?: string;
  retry?: Partial<RetryPolicy>;
  /** Bound on one HTTP attempt; defaults to the whole budget. */
  requestTimeoutMs?: number;
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const SERVICE_ACCOUNT_ATTENDEES =
  'Service-account connections cannot invite or change attendees: Google does not allow service accounts to send invitations. Connect the account through OAuth to invite attendees.';

/**
 * The provider's parts live beside it by concern: each call (`calls.ts`), what imports look up
 * (`import-lookups.ts`) and the connection's calendars (`calendars.ts`).
 */
export class GoogleCalendarProvider implements CalendarProvider {
  readonly kind = 'google' as const;
  readonly authKind: 'oauth' | 'service_account';
  /** The service account's address (whom to share calendars with), for service-account providers. */
  readonly serviceAccountEmail: string | undefined;
  readonly #api: calendar_v3.Calendar;
  readonly #tokens: AccessTokenSource;
  readonly #runtime: RetryRuntime;
  readonly #account: string | undefined;
  /** One request: retries, token refresh and the read-only refusal (calls.ts). */
  readonly #call: Call = (where, request, options) =>
    call(this.#runtime, this.#tokens, this.#account, where, request, options);

  constructor(options: GoogleProviderOptions) {
    const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
    const now = options.now ?? Date.now;
    this.#runtime = {
      policy,
      requestTimeoutMs: options.requestTimeoutMs ?? policy.budgetMs,
      now,
      sleep: options.sleep ?? realSleep,
      random: options.random ?? Math.random,
    };
    const clock = { now, requestTimeoutMs: this.#runtime.requestTimeoutMs };
    const { auth } = options;
    this.#account = options.account;
    this.authKind = auth.kind;
    this.serviceAccountEmail = auth.kind === 'service_account' ? auth.key.client_email : undefined;
    const endpoints = auth.kind === 'oauth' ? auth.client.endpoints : auth.endpoints;
    this.#tokens =
      auth.kind === 'oauth'
        ? new OAuthTokenSource(auth.client, auth.credentials, clock)
        : new ServiceAccountTokenSource(auth.key, endpoints, clock);
    // googleapis' own retry is off: retry.ts owns retries, budgets and token refresh.
    this.#api = googleCalendar({ version: 'v3', rootUrl: apiRoot(endpoints), retry: false });
  }

  #refuseAttendeeChanges(attendees: EventInput['attendees'], patch: boolean): void {
    if (this.authKind !== 'service_account') {
      return;
    }
    if (patch ? attendees !== undefined : (attendees?.length ?? 0) > 0) {
      throw new CalgateError('permission_denied', SERVICE_ACCOUNT_ATTENDEES, {
        context: { authKind: 'service_account' },
      });
    }
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage> {
    if (query.query !== undefined) {
      // Searched here, as on every calendar; see search.ts.
      const { query: text, pageToken, ...rest } = query;
      return searchPages(text, clampPageSize(query.maxResults), pageToken, (token, pageSize) =>
        this.listEvents(
          calendar,
          { ...rest, maxResults: pageSize, ...(token === undefined ? {} : { pageToken: token }) },
          signal,
        ),
      );
    }
    const params: calendar_v3.Params$Resource$Events$List = {
      calendarId: calendar.externalId,
      maxResults: clampPageSize(query.maxResults),
      singleEvents: query.singleEvents,
    };
    if (query.timeMin !== undefined) {
      params.timeMin = query.timeMin;
    }
    if (query.timeMax !== undefined) {
      params.timeMax = query.timeMax;
    }
    if (query.orderBy !== undefined) {
      params.orderBy = query.orderBy;
    }
    if (query.pageToken !== undefined) {
      params.pageToken = query.pageToken;
    }
    if (query.showDeleted !== undefined) {
      params.showDeleted = query.showDeleted;
    }
    const data = await this.#call(
      { operation: 'events.list', calendarId: calendar.externalId },
      (options) => this.#api.events.list(params, options),
      { signal },
    );
    const page: EventPage = { items: (data.items ?? []).map(toCalendarEvent) };
    if (data.nextPageToken) {
      page.nextPageToken = data.nextPageToken;
    }
    return page;
  }

  async getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    const data = await this.#call(
      { operation: 'events.get', calendarId: calendar.externalId, eventId },
      (options) => this.#api.events.get({ calendarId: calendar.externalId, eventId }, options),
      { signal },
    );
    return toCalendarEvent(data);
  }

  /**
   * The ids of the live events (singles and masters) carrying these iCalendar UIDs, by UID: a
   * few are asked for one by one (events.list with `iCalUID`), many with one listing of the
   * whole calendar, a page per 2,500 events.
   */
  findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    return findByICalUIDs(this.#call, this.#api, calendar, uids);
  }

  /**
   * Inserts with a client-chosen id (the caller's, or a new one) so that a retry after a lost
   * answer cannot create a second event: it answers 409, and then the event is read back. An
   * event with an iCalendar UID (an import) goes in through events.import, which keeps the UID
   * and, keyed by it, makes a retry update rather than duplicate.
   */
  async insertEvent(
    calendar: CalendarRef,
    input: EventInput,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    this.#refuseAttendeeChanges(input.attendees, false);
    if (input.iCalUID !== undefined) {
      const { id: _id, ...body } = toGoogleEvent(input);
      const data = await this.#call(
        { operation: 'events.import', calendarId: calendar.externalId },
        (request) =>
          this.#api.events.import(
            { calendarId: calendar.externalId, requestBody: { ...body, iCalUID: input.iCalUID } },
            request,
          ),
      );
      return toCalendarEvent(data);
    }
    const eventId = input.id ?? newEventId();
    const params: calendar_v3.Params$Resource$Events$Insert = {
      calendarId: calendar.externalId,
      requestBody: { ...toGoogleEvent(input), id: eventId },
    };
    if (options.sendUpdates !== undefined) {
      params.sendUpdates = options.sendUpdates;
    }
    const outcome = { ambiguous: false };
    try {
      const data = await this.#call(
        { operation: 'events.insert', calendarId: calendar.externalId, eventId },
        (request) => this.#api.events.insert(params, request),
        { outcome },
      );
      return toCalendarEvent(data);
    } catch (error) {
      if (isCalgateError(error) && error.code === 'already_exists' && outcome.ambiguous) {
        return this.getEvent(calendar, eventId);
      }
      throw error;
    }
  }

  async patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    this.#refuseAttendeeChanges(patch.attendees, true);
    const params: calendar_v3.Params$Resource$Events$Patch = {
      calendarId: calendar.externalId,
      eventId,
      requestBody: toGoogleEvent(patch),
    };
    if (options.sendUpdates !== undefined) {
      params.sendUpdates = options.sendUpdates;
    }
    const data = await this.#call(
      { operation: 'events.patch', calendarId: calendar.externalId, eventId },
      (request) => this.#api.events.patch(params, request),
      options.ifMatch === undefined ? {} : { headers: { 'if-match': options.ifMatch } },
    );
    return toCalendarEvent(data);
  }

  /** A retry that finds the event gone after a lost answer counts as success: we deleted it. */
  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    const params: calendar_v3.Params$Resource$Events$Delete = { calendarId: calendar.externalId, eventId };
    if (options.sendUpdates !== undefined) {
      params.sendUpdates = options.sendUpdates;
    }
    const outcome = { ambiguous: false };
    try {
      await this.#call(
        { operation: 'events.delete', calendarId: calendar.externalId, eventId },
        (request) => this.#api.events.delete(params, request),
        { outcome, ...(options.ifMatch === undefined ? {} : { headers: { 'if-match': options.ifMatch } }) },
      );
    } catch (error) {
      if (isCalgateError(error) && error.code === 'not_found' && outcome.ambiguous) {
        return;
      }
      throw error;
    }
  }

  /**
   * freebusy.query in groups of 50 calendars, run in parallel. A group that fails (after the
   * usual retries) marks each of its calendars with the error; the others still answer.
   */
  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
  ): Promise<FreeBusyResult[]> {
    const window = freeBusyWindow(timeMin, timeMax);
    return queryFreeBusy(
      calendars,
      window,
      (requestBody) =>
        this.#call(
          { operation: 'freebusy.query' },
          (options) => this.#api.freebusy.query({ requestBody }, options),
          { signal },
        ),
      signal,
    );
  }

  /** events.quickAdd: Google reads the sentence in the calendar's zone and creates the event. */
  async quickAdd(calendar: CalendarRef, text: string, options: WriteOptions = {}): Promise<CalendarEvent> {
    if (text.trim() === '') {
      throw new CalgateError(
        'invalid_argument',
        'text is empty; describe the event, e.g. "Lunch with Ann tomorrow at noon".',
      );
    }
    const params: calendar_v3.Params$Resource$Events$Quickadd = { calendarId: calendar.externalId, text };
    if (options.sendUpdates !== undefined) {
      params.sendUpdates = options.sendUpdates;
    }
    const data = await this.#call(
      { operation: 'events.quickAdd', calendarId: calendar.externalId },
      (request) => this.#api.events.quickAdd(params, request),
      { notRepeatable: true },
    );
    return toCalendarEvent(data);
  }

  async colors(signal?: AbortSignal): Promise<ColorPalette> {
    const data = await this.#call(
      { operation: 'colors.get' },
      (options) => this.#api.colors.get({}, options),
      { signal },
    );
    return toColorPalette(data);
  }

  /**
   * calendars.insert on the OAuth account. A service account would own the new calendar itself,
   * invisible to the person, so that is refused before any request.
   */
  createCalendar(input: NewCalendar): Promise<CalendarInfo> {
    return createCalendar(this.#call, this.#api, this.authKind, this.serviceAccountEmail, input);
  }

  /** Every calendar on the account's calendar list, all pages. */
  listCalendars(signal?: AbortSignal): Promise<CalendarInfo[]> {
    return listCalendars(this.#call, this.#api, signal);
  }

  /**
   * One calendar by id: verifies that this connection can read it (calendars.get) and takes the
   * access role from the calendar list. A service account sees a shared calendar on its list
   * only after calendarList.insert, as Google requires, so it adds it there when missing.
   */
  getCalendar(externalId: string, signal?: AbortSignal): Promise<CalendarInfo> {
    return getCalendar(this.#call, this.#api, this.authKind, externalId, signal);
  }
}
