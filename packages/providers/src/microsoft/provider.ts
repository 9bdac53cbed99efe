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
import { CalgateError, newEventId, parseQuickAdd } from '@calgate/core';
import { standardPalette } from '../colors.ts';
import { searchPages } from '../google/search.ts';
import type {
  CalendarEvent,
  CalendarInfo,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventInput,
  EventPage,
  EventPatch,
  FreeBusyOptions,
  FreeBusyResult,
  ListEventsQuery,
  NewCalendar,
  WriteOptions,
} from '../types.ts';
import { accountZone, createCalendar, discover, listCalendars, type MicrosoftAccount } from './account.ts';
import { type GraphClient, graphPath } from './client.ts';
import { freeBusy } from './free-busy.ts';
import type { GraphEvent } from './graph-types.ts';
import { findByICalUIDs, ICAL_UID_PROPERTY, occurrenceId } from './import-lookups.ts';
import {
  type GraphEventFacts,
  type MicrosoftCalendarInfo,
  toCalendarEvent,
  toGraphEvent,
} from './mapping.ts';
import { CLIENT_ID, eventByTransaction, getGraphEvent, PREFER, viewRequest } from './reads.ts';
import { respond, responseChange } from './responses.ts';

export type { MicrosoftAccount } from './account.ts';
export { ICAL_UID_PROPERTY } from './import-lookups.ts';

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

/**
 * The provider's parts live beside it by concern: reads (`reads.ts`), what imports look up
 * (`import-lookups.ts`), invitation answers (`responses.ts`), free/busy (`free-busy.ts`) and the
 * account with its calendars (`account.ts`).
 */
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
    const request = viewRequest(calendar, query, signal, this.#now);
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

  #get(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<GraphEvent> {
    return getGraphEvent(this.#client, calendar, eventId, signal);
  }

  async getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    if (CLIENT_ID.test(eventId)) {
      return this.#event(await eventByTransaction(this.#client, calendar, eventId, signal));
    }
    return this.#event(await this.#get(calendar, eventId, signal));
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
  findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    return findByICalUIDs(this.#client, calendar, uids);
  }

  /**
   * The occurrence of a series whose original start the instance key names, from the series'
   * instances in the days around it (an all-day key: any original start within 14 hours of that
   * date's UTC midnight, the zones' spread).
   */
  occurrenceId(calendar: CalendarRef, masterId: string, key: string): Promise<string | undefined> {
    return occurrenceId(this.#client, calendar, masterId, key);
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
      const response = responseChange(this.#account, currentEvent.attendees ?? [], patch.attendees);
      if (response !== undefined) {
        return respond(this.#client, calendar, eventId, currentEvent, response, options, patch, () =>
          this.getEvent(calendar, eventId),
        );
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
   * declined events do not count; all-day events are busy in their own zone; `withEvents` names
   * the events. Failures are per calendar.
   */
  freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
    options: FreeBusyOptions = {},
  ): Promise<FreeBusyResult[]> {
    return freeBusy(this.#client, calendars, timeMin, timeMax, signal, {
      withEvents: options.withEvents === true,
    });
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
  createCalendar(input: NewCalendar): Promise<CalendarInfo> {
    return createCalendar(this.#client, this.#account, this.#fallbackZone, input);
  }

  /** The mailbox's zone from /me/mailboxSettings; refused (no MailboxSettings.Read), the fallback. */
  accountZone(signal?: AbortSignal): Promise<{ timeZone: string; fromMailbox: boolean }> {
    return accountZone(this.#client, this.#fallbackZone, signal);
  }

  /** Who the account is (`/me.mail`, else its userPrincipalName), its zone and its calendars. */
  discover(signal?: AbortSignal): Promise<MicrosoftAccount> {
    return discover(this.#client, this.#account, this.#fallbackZone, signal);
  }

  /** Every calendar of the account (all pages): `canEdit: false` is read-only. */
  listCalendars(
    zone?: string,
    accountEmail?: string,
    signal?: AbortSignal,
  ): Promise<MicrosoftCalendarInfo[]> {
    return listCalendars(this.#client, this.#account, this.#fallbackZone, zone, accountEmail, signal);
  }
}
