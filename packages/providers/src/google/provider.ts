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
import type { GoogleAuth } from './credentials.ts';
import { apiRoot } from './endpoints.ts';
import { type FailureContext, failureOf, readOnlyMessage, UpstreamFailure } from './failure.ts';
import { queryFreeBusy } from './freebusy.ts';
import {
  accessRoleOf,
  toCalendarEvent,
  toCalendarInfo,
  toColorPalette,
  toGoogleCalendar,
  toGoogleEvent,
} from './mapping.ts';
import { clampPageSize } from './page-size.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, type RetryRuntime, realSleep, withRetry } from './retry.ts';
import { searchPages } from './search.ts';
import { type AccessTokenSource, OAuthTokenSource, ServiceAccountTokenSource } from './token-sources.ts';

const CALENDAR_LIST_PAGE = 250;
const MAX_LIST_PAGES = 200;
/** UIDs an import looks up one by one; more are found in one listing of the calendar. */
const FEW_UIDS = 10;
/** Pages of 2,500 events an import's UID listing reads at most. */
const MAX_UID_PAGES = 40;

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

interface CallOptions {
  signal?: AbortSignal | undefined;
  headers?: Record<string, string>;
  /** Set when an attempt ended without a clear answer, so a write may have been applied. */
  outcome?: { ambiguous: boolean };
  /**
   * The request creates something Google gives no id for in advance (quickAdd, calendars.insert):
   * after an attempt without a clear answer, trying again could create it twice, so stop.
   */
  notRepeatable?: boolean;
}

type Request<T> = (options: {
  headers: Record<string, string>;
  signal: AbortSignal;
  retry: false;
}) => Promise<{ data: T }>;

const SERVICE_ACCOUNT_ATTENDEES =
  'Service-account connections cannot invite or change attendees: Google does not allow service accounts to send invitations. Connect the account through OAuth to invite attendees.';

export class GoogleCalendarProvider implements CalendarProvider {
  readonly kind = 'google' as const;
  readonly authKind: 'oauth' | 'service_account';
  /** The service account's address (whom to share calendars with), for service-account providers. */
  readonly serviceAccountEmail: string | undefined;
  readonly #api: calendar_v3.Calendar;
  readonly #tokens: AccessTokenSource;
  readonly #runtime: RetryRuntime;
  readonly #account: string | undefined;

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

  async #call<T>(where: FailureContext, request: Request<T>, options: CallOptions = {}): Promise<T> {
    try {
      return await this.#attempts(where, request, options);
    } catch (error) {
      if (
        this.#account !== undefined &&
        error instanceof CalgateError &&
        error.context.readOnlyConnection === true
      ) {
        throw new CalgateError(error.code, readOnlyMessage(this.#account), { context: error.context });
      }
      throw error;
    }
  }

  async #attempts<T>(where: FailureContext, request: Request<T>, options: CallOptions): Promise<T> {
    let refreshed = false;
    const outcome = options.outcome ?? (options.notRepeatable ? { ambiguous: false } : undefined);
    const response = await withRetry(
      this.#runtime,
      where,
      async (attempt) => {
        if (options.notRepeatable && outcome?.ambiguous) {
          throw new CalgateError(
            'upstream_unavailable',
            `Google did not confirm ${where.operation}, so it may or may not have been applied; check before trying again.`,
            { context: { ...where, ambiguous: true } },
          );
        }
        const token = await this.#tokens.token(attempt.signal);
        try {
          return await request({
            headers: { ...options.headers, authorization: `Bearer ${token}` },
            signal: attempt.signal,
            retry: false,
          });
        } catch (error) {
          if (attempt.signal.aborted) {
            if (outcome) {
              outcome.ambiguous = true;
            }
            throw error;
          }
          const failure = failureOf(error, this.#runtime.now());
          if (failure === null) {
            throw error;
          }
          if (failure.kind === 'http' && failure.status === 401 && !refreshed) {
            refreshed = true;
            this.#tokens.invalidate(token);
            throw new UpstreamFailure(failure, true);
          }
          // No answer or a 5xx: a write may have been applied before the failure.
          if (outcome && (failure.kind !== 'http' || failure.status >= 500)) {
            outcome.ambiguous = true;
          }
          throw new UpstreamFailure(failure);
        }
      },
      options.signal,
    );
    return response.data;
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
  async findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    const wanted = new Set(uids);
    const keep = (items: calendar_v3.Schema$Event[] | undefined) => {
      for (const item of items ?? []) {
        const uid = item.iCalUID;
        if (
          uid &&
          item.id &&
          wanted.has(uid) &&
          !item.recurringEventId &&
          item.status !== 'cancelled' &&
          !out.has(uid)
        ) {
          out.set(uid, item.id);
        }
      }
    };
    const list = (params: calendar_v3.Params$Resource$Events$List) =>
      this.#call({ operation: 'events.list', calendarId: calendar.externalId }, (options) =>
        this.#api.events.list(
          { calendarId: calendar.externalId, maxResults: 2500, singleEvents: false, ...params },
          options,
        ),
      );
    if (wanted.size <= FEW_UIDS) {
      await Promise.all([...wanted].map(async (uid) => keep((await list({ iCalUID: uid })).items)));
      return out;
    }
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_UID_PAGES; page += 1) {
      const data = await list(pageToken === undefined ? {} : { pageToken });
      keep(data.items);
      if (!data.nextPageToken) {
        return out;
      }
      pageToken = data.nextPageToken;
    }
    throw new CalgateError(
      'invalid_argument',
      `This calendar has more than ${MAX_UID_PAGES * 2500} events, too many to look up an import's UIDs in; import into another calendar.`,
    );
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
  async createCalendar(input: NewCalendar): Promise<CalendarInfo> {
    if (this.authKind === 'service_account') {
      throw new CalgateError(
        'permission_denied',
        `This account is connected through a service account, which cannot create calendars for a person. Create the calendar in Google Calendar, share it with ${this.serviceAccountEmail ?? 'the service account'} ("Make changes to events"), then add it to Calgate.`,
        { context: { authKind: 'service_account' } },
      );
    }
    const requestBody = toGoogleCalendar(input);
    const data = await this.#call(
      { operation: 'calendars.insert' },
      (options) => this.#api.calendars.insert({ requestBody }, options),
      { notRepeatable: true },
    );
    return toCalendarInfo(data, 'owner', false);
  }

  /** Every calendar on the account's calendar list, all pages. */
  async listCalendars(signal?: AbortSignal): Promise<CalendarInfo[]> {
    const out: CalendarInfo[] = [];
    let pageToken: string | undefined;
    for (let page = 0; page < MAX_LIST_PAGES; page += 1) {
      const params: calendar_v3.Params$Resource$Calendarlist$List = { maxResults: CALENDAR_LIST_PAGE };
      if (pageToken !== undefined) {
        params.pageToken = pageToken;
      }
      const data = await this.#call(
        { operation: 'calendarList.list' },
        (options) => this.#api.calendarList.list(params, options),
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
  async getCalendar(externalId: string, signal?: AbortSignal): Promise<CalendarInfo> {
    const where = { calendarId: externalId };
    const calendar = await this.#call(
      { operation: 'calendars.get', ...where },
      (options) => this.#api.calendars.get({ calendarId: externalId }, options),
      { signal },
    );
    let entry: calendar_v3.Schema$CalendarListEntry | null = null;
    try {
      entry = await this.#call(
        { operation: 'calendarList.get', ...where },
        (options) => this.#api.calendarList.get({ calendarId: externalId }, options),
        { signal },
      );
    } catch (error) {
      if (!(isCalgateError(error) && error.code === 'not_found')) {
        throw error;
      }
    }
    if (entry === null && this.authKind === 'service_account') {
      entry = await this.#call(
        { operation: 'calendarList.insert', ...where },
        (options) => this.#api.calendarList.insert({ requestBody: { id: externalId } }, options),
        { signal },
      );
    }
    // Without a list entry, calendars.get proves read access and nothing more.
    const role = accessRoleOf(entry?.accessRole) ?? 'reader';
    return toCalendarInfo(entry ?? calendar, role, entry?.primary === true);
  }
}
