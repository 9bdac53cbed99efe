/**
 * Outlook calendars (Microsoft 365 and Outlook.com) through Microsoft Graph, behind the
 * CalendarProvider contract. Listings read `calendarView` (occurrences, exceptions and single
 * events, never series masters; occurrences the organizer cancelled are hidden); occurrence ids
 * are Graph's own, so "this occurrence" is a PATCH or DELETE on that id. Creates go to the
 * calendar's own `events` with a `transactionId`, so a create repeated after a lost answer
 * yields the first event again; updates carry `If-Match`. Graph sends invitations and updates to
 * attendees itself: a write that asks Calgate to keep them back is refused rather than sent
 * anyway. Quick add reads the sentence with Calgate's own parser (Graph has none). Free/busy reads
 * calendarView of each calendar (`getSchedule` covers only the mailbox's default calendar).
 */
import { CalgateError, isCalgateError, newEventId, parseQuickAdd } from '@calgate/core';
import { busyPerCalendar, mergeBusy } from '../busy.ts';
import { parseInstanceKey } from '../caldav/ical/expand.ts';
import { standardPalette } from '../colors.ts';
import { searchPages } from '../google/search.ts';
import type {
  CalendarEvent,
  CalendarInfo,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventAttendee,
  EventInput,
  EventPage,
  EventPatch,
  FreeBusyResult,
  ListEventsQuery,
  NewCalendar,
  WriteOptions,
} from '../types.ts';
import { type GraphClient, graphPath } from './client.ts';
import type { GraphCalendar, GraphEvent, GraphMailboxSettings, GraphUser } from './graph-types.ts';
import {
  accountEmailOf,
  type GraphEventFacts,
  type MicrosoftCalendarInfo,
  mailboxZoneOf,
  PREFER_TEXT_BODY,
  toCalendarEvent,
  toCalendarInfo,
  toGraphEvent,
} from './mapping.ts';
import { graphRangeBound, readGraphTime } from './times.ts';
import { windowsZoneFor } from './zones.ts';

/** Times are asked for in UTC: the mapping writes them in each event's own zone. */
const PREFER_UTC = 'outlook.timezone="UTC"';
const PREFER: readonly string[] = [PREFER_UTC, PREFER_TEXT_BODY];
/** Graph's largest calendarView page. */
const MAX_TOP = 1000;
const DAY_MS = 86_400_000;
/** A listing without one of its bounds spans this much on that side (calendarView needs both). */
const OPEN_SPAN_MS = 366 * DAY_MS;

/**
 * Calgate's client-chosen event ids (base32hex, lower case): never a Graph id, which is base64
 * with upper-case letters and padding.
 */
const CLIENT_ID = /^[0-9a-v]{5,1024}$/;
/**
 * Where an imported event keeps its iCalendar UID: Graph sets `iCalUId` itself, so the UID goes
 * into a single-value extended property of Calgate's own name (PublicStrings namespace), written
 * on create and found with `$filter=singleValueExtendedProperties/Any(…)`. Graph answers the id
 * with the GUID in lower case, as written here.
 */
export const ICAL_UID_PROPERTY = 'String {00020329-0000-0000-c000-000000000046} Name Calgate.iCalUID';
/** UIDs up to this many are looked up one by one; more with one listing of the calendar. */
const UIDS_ONE_BY_ONE = 10;

const SEND_UPDATES_REFUSAL =
  'Outlook sends invitations, updates and cancellations to attendees itself; Calgate cannot hold them back on an Outlook calendar. Leave sendUpdates out (or pass "all").';

export interface MicrosoftProviderOptions {
  client: GraphClient;
  /** The account's address (its attendee entry is `self`; named in messages). */
  account?: string;
  /**
   * The zone calendars get when `/me/mailboxSettings` cannot be read: the workspace's, when it
   * has one (else UTC).
   */
  fallbackZone?: () => Promise<string | null | undefined>;
  now?: () => number;
}

/** What discovery found on the account: who it is, its zone, and its calendars. */
export interface MicrosoftAccount {
  email: string;
  displayName?: string;
  /** The mailbox's zone (IANA), or the fallback when mailboxSettings was refused. */
  timeZone: string;
  /** Whether the zone came from mailboxSettings (false: the fallback, e.g. no MailboxSettings.Read). */
  zoneFromMailbox: boolean;
  calendars: MicrosoftCalendarInfo[];
}

const RESPOND_PATH = {
  accepted: 'accept',
  declined: 'decline',
  tentative: 'tentativelyAccept',
} as const;

const emailKey = (email: string | undefined) => (email ?? '').trim().toLowerCase();

export class MicrosoftCalendarProvider implements CalendarProvider {
  readonly kind = 'microsoft' as const;
  readonly #client: GraphClient;
  readonly #account: string | undefined;
  readonly #fallbackZone: () => Promise<string | null | undefined>;
  readonly #now: () => number;

  constructor(options: MicrosoftProviderOptions) {
    this.#client = options.client;
    this.#account = options.account;
    this.#fallbackZone = options.fallbackZone ?? (async () => undefined);
    this.#now = options.now ?? Date.now;
  }

  get client(): GraphClient {
    return this.#client;
  }

  /** A Graph event as Calgate carries it, with the account's own response on its attendee entry. */
  #facts(event: GraphEvent): GraphEventFacts {
    const mapped = toCalendarEvent(event, this.#account);
    if (!mapped.ok) {
      throw mapped.error;
    }
    const own = event.responseStatus?.response;
    const attendees = mapped.value.event.attendees;
    if (own && own !== 'none' && attendees !== undefined && this.#account !== undefined) {
      const self = attendees.find((attendee) => attendee.self === true);
      const status = (
        {
          organizer: 'accepted',
          accepted: 'accepted',
          tentativelyAccepted: 'tentative',
          declined: 'declined',
          notResponded: 'needsAction',
        } as const
      )[own];
      if (self !== undefined && status !== undefined) {
        self.responseStatus = status;
      }
    }
    return mapped.value;
  }

  #event(event: GraphEvent): CalendarEvent {
    return this.#facts(event).event;
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage> {
    if (query.query !== undefined) {
      // The matcher every calendar uses; Graph's $search means something else.
      const { query: text, pageToken, ...rest } = query;
      return searchPages(text, Math.max(1, Math.min(query.maxResults, 2500)), pageToken, (token, pageSize) =>
        this.listEvents(
          calendar,
          { ...rest, maxResults: pageSize, ...(token === undefined ? {} : { pageToken: token }) },
          signal,
        ),
      );
    }
    const request = this.#viewRequest(calendar, query, signal);
    // A page token is the nextLink Graph gave, followed as given.
    const page = await this.#client.page<GraphEvent>(request, query.pageToken);
    const items: CalendarEvent[] = [];
    for (const raw of page.value) {
      const facts = this.#facts(raw);
      if (facts.hidden && query.showDeleted !== true) {
        continue;
      }
      items.push(facts.event);
    }
    return page.nextLink === undefined ? { items } : { items, nextPageToken: page.nextLink };
  }

  #viewRequest(calendar: CalendarRef, query: ListEventsQuery, signal: AbortSignal | undefined) {
    const min = query.timeMin === undefined ? undefined : Date.parse(query.timeMin);
    const max = query.timeMax === undefined ? undefined : Date.parse(query.timeMax);
    if ((min !== undefined && Number.isNaN(min)) || (max !== undefined && Number.isNaN(max))) {
      throw new CalgateError('invalid_argument', 'timeMin and timeMax must be RFC 3339 date-times.');
    }
    const from = min ?? (max ?? this.#now()) - OPEN_SPAN_MS;
    const to = max ?? from + OPEN_SPAN_MS;
    return {
      path: graphPath`/me/calendars/${calendar.externalId}/calendarView`,
      query: {
        startDateTime: graphRangeBound(from),
        endDateTime: graphRangeBound(to),
        $top: Math.max(1, Math.min(query.maxResults, MAX_TOP)),
        ...(query.orderBy === 'updated'
          ? { $orderby: 'lastModifiedDateTime' }
          : query.orderBy === 'startTime'
            ? { $orderby: 'start/dateTime' }
            : {}),
      },
      prefer: PREFER,
      operation: 'events.list',
      calendarId: calendar.externalId,
      ...(signal === undefined ? {} : { signal }),
    };
  }

  async #get(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<GraphEvent> {
    return this.#client.request<GraphEvent>({
      path: graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`,
      prefer: PREFER,
      operation: 'events.get',
      calendarId: calendar.externalId,
      eventId,
      ...(signal === undefined ? {} : { signal }),
    });
  }

  async getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    if (CLIENT_ID.test(eventId)) {
      return this.#event(await this.#byTransaction(calendar, eventId, signal));
    }
    return this.#event(await this.#get(calendar, eventId, signal));
  }

  /**
   * The event a create with this client-chosen id made: Graph has no client ids, so the id went
   * as the create's transactionId, and the event is found by it.
   */
  async #byTransaction(calendar: CalendarRef, id: string, signal?: AbortSignal): Promise<GraphEvent> {
    const page = await this.#client.page<GraphEvent>({
      path: graphPath`/me/calendars/${calendar.externalId}/events`,
      query: { $filter: `transactionId eq '${id}'`, $top: 1 },
      prefer: PREFER,
      operation: 'events.get',
      calendarId: calendar.externalId,
      eventId: id,
      ...(signal === undefined ? {} : { signal }),
    });
    const [found] = page.value;
    if (found === undefined) {
      throw new CalgateError('not_found', `Event '${id}' was not found in Microsoft 365.`, {
        context: { calendarId: calendar.externalId, eventId: id },
      });
    }
    return found;
  }

  /** Graph sends to attendees itself: refuse a write that asks it not to, when there is someone to tell. */
  #checkSendUpdates(options: WriteOptions, attendees: readonly unknown[] | undefined): void {
    if (
      options.sendUpdates !== undefined &&
      options.sendUpdates !== 'all' &&
      attendees !== undefined &&
      attendees.length > 0
    ) {
      throw new CalgateError('invalid_argument', SEND_UPDATES_REFUSAL, {
        context: { sendUpdates: options.sendUpdates },
      });
    }
  }

  async insertEvent(
    calendar: CalendarRef,
    input: EventInput,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    this.#checkSendUpdates(options, input.attendees);
    // Graph has no client ids: the id (the caller's or a new one) becomes the transactionId, so a
    // create repeated after a lost answer gets the first event back.
    const body = toGraphEvent(
      { ...input, id: input.id ?? newEventId() },
      { calendarZone: calendar.timeZone },
    );
    if (!body.ok) {
      throw body.error;
    }
    const created = await this.#client.request<GraphEvent>({
      method: 'POST',
      path: graphPath`/me/calendars/${calendar.externalId}/events`,
      body:
        input.iCalUID === undefined
          ? body.value
          : {
              ...body.value,
              singleValueExtendedProperties: [{ id: ICAL_UID_PROPERTY, value: input.iCalUID }],
            },
      prefer: PREFER,
      operation: 'events.insert',
      calendarId: calendar.externalId,
    });
    return this.#event(created);
  }

  /**
   * The events an import wrote, by the UID it kept in ICAL_UID_PROPERTY: up to UIDS_ONE_BY_ONE
   * UIDs with a filtered listing each, more with one listing of the calendar's events (ids and
   * the property alone, a page of 100 at a time). Graph compares the value without regard to
   * case, so each match is checked exactly.
   */
  async findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    const wanted = new Set(uids);
    const found = new Map<string, string>();
    const keep = (events: readonly GraphEvent[]) => {
      for (const event of events) {
        const uid = event.singleValueExtendedProperties?.find(
          (property) => property.id?.toLowerCase() === ICAL_UID_PROPERTY.toLowerCase(),
        )?.value;
        if (typeof uid === 'string' && wanted.has(uid) && !found.has(uid) && typeof event.id === 'string') {
          found.set(uid, event.id);
        }
      }
    };
    const request = (query: Record<string, string | number>) => ({
      path: graphPath`/me/calendars/${calendar.externalId}/events`,
      query: {
        $select: 'id',
        $expand: `singleValueExtendedProperties($filter=id eq '${ICAL_UID_PROPERTY}')`,
        ...query,
      },
      operation: 'events.list',
      calendarId: calendar.externalId,
    });
    if (wanted.size <= UIDS_ONE_BY_ONE) {
      for (const uid of wanted) {
        const quoted = uid.replace(/'/g, "''");
        const page = await this.#client.page<GraphEvent>(
          request({
            $filter: `singleValueExtendedProperties/Any(ep: ep/id eq '${ICAL_UID_PROPERTY}' and ep/value eq '${quoted}')`,
            $top: 10,
          }),
        );
        keep(page.value);
      }
      return found;
    }
    for await (const page of this.#client.pages<GraphEvent>(request({ $top: 100 }))) {
      keep(page.value);
    }
    return found;
  }

  /**
   * The occurrence of a series whose original start the instance key names, from the series'
   * instances in the days around it (an all-day key: any original start within 14 hours of that
   * date's UTC midnight, the zones' spread).
   */
  async occurrenceId(calendar: CalendarRef, masterId: string, key: string): Promise<string | undefined> {
    const parsed = parseInstanceKey(key);
    if (parsed === undefined) {
      return undefined;
    }
    const DAY = 86_400_000;
    const slack = parsed.allDay ? 14 * 3_600_000 : 0;
    const instances = await this.#client.all<GraphEvent>({
      path: graphPath`/me/calendars/${calendar.externalId}/events/${masterId}/instances`,
      query: {
        startDateTime: new Date(parsed.key - DAY).toISOString(),
        endDateTime: new Date(parsed.key + 2 * DAY).toISOString(),
        $select: 'id,originalStart',
        $top: 100,
      },
      prefer: PREFER,
      operation: 'events.instances',
      calendarId: calendar.externalId,
      eventId: masterId,
    });
    const found = instances.find((instance) => {
      const at = Date.parse(String(instance.originalStart ?? '').replace(/(\.\d{3})\d+/, '$1'));
      return Number.isFinite(at) && Math.abs(at - parsed.key) <= slack;
    });
    return typeof found?.id === 'string' ? found.id : undefined;
  }

  async patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    const needsCurrent =
      patch.attendees !== undefined ||
      (patch.recurrence !== undefined && patch.recurrence.length > 0 && patch.start === undefined) ||
      (options.sendUpdates !== undefined && options.sendUpdates !== 'all');
    const current = needsCurrent ? await this.#get(calendar, eventId) : undefined;
    const currentEvent = current === undefined ? undefined : this.#event(current);
    if (currentEvent !== undefined && patch.attendees !== undefined) {
      const response = this.#responseChange(currentEvent.attendees ?? [], patch.attendees);
      if (response !== undefined) {
        return this.#respond(calendar, eventId, currentEvent, response, options, patch);
      }
    }
    this.#checkSendUpdates(options, patch.attendees ?? currentEvent?.attendees);
    const body = toGraphEvent(patch, {
      calendarZone: calendar.timeZone,
      ...(currentEvent === undefined ? {} : { currentStart: currentEvent.start }),
    });
    if (!body.ok) {
      throw body.error;
    }
    const updated = await this.#client.request<GraphEvent>({
      method: 'PATCH',
      path: graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`,
      body: body.value,
      prefer: PREFER,
      ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
      operation: 'events.patch',
      calendarId: calendar.externalId,
      eventId,
    });
    return this.#event(updated);
  }

  /**
   * A patch that changes only the account's own response (and comment) on its attendee entry is
   * an answer to the invitation: Graph takes it through accept / decline / tentativelyAccept.
   */
  #responseChange(
    before: readonly EventAttendee[],
    after: readonly EventAttendee[],
  ): { status: 'accepted' | 'declined' | 'tentative'; comment?: string } | undefined {
    const me = emailKey(this.#account);
    if (me === '' || before.length !== after.length) {
      return undefined;
    }
    let change: { status: 'accepted' | 'declined' | 'tentative'; comment?: string } | undefined;
    for (const [i, next] of after.entries()) {
      const prior = before[i];
      if (prior === undefined || emailKey(prior.email) !== emailKey(next.email)) {
        return undefined;
      }
      const mine = emailKey(next.email) === me || next.self === true;
      const same =
        prior.responseStatus === next.responseStatus &&
        prior.comment === next.comment &&
        (prior.optional ?? false) === (next.optional ?? false);
      if (same) {
        continue;
      }
      if (!mine || next.responseStatus === undefined || next.responseStatus === 'needsAction') {
        return undefined;
      }
      change = {
        status: next.responseStatus,
        ...(next.comment === undefined ? {} : { comment: next.comment }),
      };
    }
    return change;
  }

  async #respond(
    calendar: CalendarRef,
    eventId: string,
    current: CalendarEvent,
    response: { status: 'accepted' | 'declined' | 'tentative'; comment?: string },
    options: WriteOptions,
    patch: EventPatch,
  ): Promise<CalendarEvent> {
    if (current.organizer?.self === true) {
      // Graph refuses an organizer's answer to their own meeting; Outlook counts them as attending.
      if (response.status === 'accepted') {
        return current;
      }
      throw new CalgateError(
        'invalid_argument',
        `The account organises event '${eventId}', and Outlook takes no answer from a meeting's organizer: it always counts them as attending. To call the meeting off, delete it with delete_event.`,
        { context: { eventId } },
      );
    }
    const action = RESPOND_PATH[response.status];
    await this.#client.request<void>({
      method: 'POST',
      path: `${graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`}/${action}`,
      body: {
        // Graph's own switch for telling the organizer: sendUpdates 'none' keeps the answer quiet.
        sendResponse: options.sendUpdates === undefined || options.sendUpdates === 'all',
        ...(response.comment === undefined ? {} : { comment: response.comment }),
      },
      operation: 'events.respond',
      calendarId: calendar.externalId,
      eventId,
    });
    try {
      return await this.getEvent(calendar, eventId);
    } catch (error) {
      // Outlook takes a declined meeting off the attendee's calendar: answer what was written.
      if (isCalgateError(error) && error.code === 'not_found' && response.status === 'declined') {
        return { ...current, ...(patch.attendees === undefined ? {} : { attendees: patch.attendees }) };
      }
      throw error;
    }
  }

  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    if (options.sendUpdates !== undefined && options.sendUpdates !== 'all') {
      const current = this.#event(await this.#get(calendar, eventId));
      if (current.organizer?.self !== false) {
        this.#checkSendUpdates(options, current.attendees);
      }
    }
    await this.#client.request<void>({
      method: 'DELETE',
      path: graphPath`/me/calendars/${calendar.externalId}/events/${eventId}`,
      ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
      operation: 'events.delete',
      calendarId: calendar.externalId,
      eventId,
    });
  }

  /**
   * Busy intervals from each calendar's calendarView: getSchedule answers only for the mailbox's
   * default calendar (and not for personal accounts). Free (`showAs: free`), cancelled and
   * declined events do not count. Failures are per calendar.
   */
  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
  ): Promise<FreeBusyResult[]> {
    const failure = (error: unknown) =>
      signal?.aborted
        ? undefined
        : isCalgateError(error)
          ? error
          : new CalgateError('upstream_unavailable', 'Microsoft Graph did not answer.');
    return busyPerCalendar(
      calendars,
      timeMin,
      timeMax,
      async (calendar, window) => {
        const items = await this.#client.all<GraphEvent>({
          path: graphPath`/me/calendars/${calendar.externalId}/calendarView`,
          query: {
            startDateTime: graphRangeBound(window.from),
            endDateTime: graphRangeBound(window.to),
            $top: MAX_TOP,
            $select: 'start,end,isAllDay,showAs,isCancelled,responseStatus,originalStartTimeZone',
          },
          prefer: [PREFER_UTC],
          operation: 'freebusy.query',
          calendarId: calendar.externalId,
          ...(signal === undefined ? {} : { signal }),
        });
        const intervals: [number, number][] = [];
        for (const item of items) {
          if (item.isCancelled === true || item.showAs === 'free') {
            continue;
          }
          if (item.responseStatus?.response === 'declined') {
            continue;
          }
          const start = readGraphTime(item.start);
          const end = readGraphTime(item.end);
          if (start.ok && end.ok && end.value.instant > start.value.instant) {
            intervals.push([start.value.instant, end.value.instant]);
          }
        }
        return mergeBusy(intervals, window);
      },
      failure,
    );
  }

  /** Graph has no quick add: the sentence is read by Calgate's parser in the calendar's zone. */
  async quickAdd(calendar: CalendarRef, text: string, options: WriteOptions = {}): Promise<CalendarEvent> {
    const parsed = parseQuickAdd(text, { now: this.#now(), timeZone: calendar.timeZone });
    if (!parsed.ok) {
      throw parsed.error;
    }
    const { summary, location, start, end } = parsed.value;
    return this.insertEvent(
      calendar,
      {
        start,
        end,
        ...(summary === undefined ? {} : { summary }),
        ...(location === undefined ? {} : { location }),
      },
      options,
    );
  }

  /** Outlook colours events by category, not by colorId: the palette Calgate shows everywhere. */
  async colors(): Promise<ColorPalette> {
    return standardPalette();
  }

  /** A new calendar on the account (POST /me/calendars); it lives in the mailbox's zone. */
  async createCalendar(input: NewCalendar): Promise<CalendarInfo> {
    if (input.description !== undefined && input.description !== '') {
      throw new CalgateError(
        'invalid_argument',
        'Outlook calendars have no description; leave description out to create one on an Outlook account.',
      );
    }
    if (input.timeZone !== undefined) {
      const windows = windowsZoneFor(input.timeZone);
      if (!windows.ok) {
        throw windows.error;
      }
    }
    const created = await this.#client.request<GraphCalendar>({
      method: 'POST',
      path: '/me/calendars',
      body: { name: input.summary },
      operation: 'calendars.insert',
    });
    const zone = input.timeZone ?? (await this.accountZone()).timeZone;
    return toCalendarInfo({ ...created, canEdit: true }, zone, this.#account);
  }

  /** The mailbox's zone from /me/mailboxSettings; refused (no MailboxSettings.Read), the fallback. */
  async accountZone(signal?: AbortSignal): Promise<{ timeZone: string; fromMailbox: boolean }> {
    try {
      const settings = await this.#client.request<GraphMailboxSettings>({
        path: '/me/mailboxSettings',
        operation: 'mailboxSettings.get',
        ...(signal === undefined ? {} : { signal }),
      });
      return settings?.timeZone
        ? { timeZone: mailboxZoneOf(settings), fromMailbox: true }
        : { timeZone: (await this.#fallbackZone()) || 'UTC', fromMailbox: false };
    } catch (error) {
      // Calgate asks only for Calendars.* and User.Read: reading mailbox settings is usually refused.
      if (isCalgateError(error) && (error.code === 'permission_denied' || error.code === 'not_found')) {
        return { timeZone: (await this.#fallbackZone()) || 'UTC', fromMailbox: false };
      }
      throw error;
    }
  }

  /** Who the account is (`/me.mail`, else its userPrincipalName), its zone and its calendars. */
  async discover(signal?: AbortSignal): Promise<MicrosoftAccount> {
    const me = await this.#client.request<GraphUser>({
      path: '/me',
      operation: 'me.get',
      ...(signal === undefined ? {} : { signal }),
    });
    const email = accountEmailOf(me);
    if (email === undefined) {
      throw new CalgateError(
        'upstream_unavailable',
        'Microsoft Graph answered /me without a mail address or user principal name.',
      );
    }
    const zone = await this.accountZone(signal);
    const calendars = await this.listCalendars(zone.timeZone, email, signal);
    return {
      email: email.toLowerCase(),
      ...(me.displayName ? { displayName: me.displayName } : {}),
      timeZone: zone.timeZone,
      zoneFromMailbox: zone.fromMailbox,
      calendars,
    };
  }

  /** Every calendar of the account (all pages): `canEdit: false` is read-only. */
  async listCalendars(
    zone?: string,
    accountEmail?: string,
    signal?: AbortSignal,
  ): Promise<MicrosoftCalendarInfo[]> {
    const timeZone = zone ?? (await this.accountZone(signal)).timeZone;
    const calendars = await this.#client.all<GraphCalendar>({
      path: '/me/calendars',
      query: { $top: 100 },
      operation: 'calendars.list',
      ...(signal === undefined ? {} : { signal }),
    });
    return calendars
      .filter((calendar) => typeof calendar.id === 'string' && calendar.id !== '')
      .map((calendar) => toCalendarInfo(calendar, timeZone, accountEmail ?? this.#account));
  }
}
