/**
 * The `ics` CalendarProvider: a subscribed iCalendar feed read as it is published. Calendars of
 * subscriptions are read through the mirror (kept by `icsSyncSource`); this provider answers what
 * the mirror sends upstream (single events, listings before the first sync or after a failed one,
 * `fresh` free/busy), from the same rows the mirror would hold, so both answer alike. The feed is
 * asked at most once per `reuseMs` and then with its validators. Nothing is ever written: the next
 * refresh would undo it, so every write is refused.
 */
import { CalgateError, eventMatcher } from '@calgate/core';
import type { TargetUrlPolicy } from '@calgate/scheduler';
import type { MirrorResourceRow } from '@calgate/store';
import { busyPerCalendar, mergeBusy } from '../busy.ts';
import { standardPalette } from '../colors.ts';
import { busyEventsOf } from '../local/busy.ts';
import { decodePageToken, encodePageToken } from '../local/page-token.ts';
import { instantOfKey, MAX_INSTANCES, parseInstanceId } from '../local/rows.ts';
import { CALENDAR_EVENT_FORMAT, calendarEventRow } from '../mirror/format.ts';
import { listingEvents, sortEvents } from '../mirror/listing.ts';
import type {
  CalendarEvent,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventPage,
  FreeBusyResult,
  ListEventsQuery,
} from '../types.ts';
import { fetchFeed } from './feed.ts';
import { feedEvents } from './ics-source.ts';

const DAY = 86_400_000;

export interface IcsProviderOptions {
  /** The feed's address (http, https or webcal). */
  url: () => Promise<string>;
  policy: TargetUrlPolicy;
  /** How long a fetched body answers without asking the feed again (ms; default 60 s). */
  reuseMs?: number;
  now?: () => number;
}

interface Copy {
  text: string;
  etag: string | undefined;
  lastModified: string | undefined;
  fetchedAt: number;
  rows: Map<string, MirrorResourceRow[]>;
}

function readOnly(): CalgateError {
  return new CalgateError(
    'permission_denied',
    'This calendar is a subscribed iCalendar feed and cannot be changed through Calgate; change it where the feed is published.',
  );
}

function bound(value: string | undefined, name: string): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) {
    throw new CalgateError('invalid_argument', `${name} '${value}' is not an RFC 3339 date-time.`);
  }
  return at;
}

export class IcsCalendarProvider implements CalendarProvider {
  readonly kind = 'ics' as const;
  readonly #options: IcsProviderOptions;
  readonly #now: () => number;
  #copy: Copy | undefined;
  #fetching: Promise<Copy> | undefined;

  constructor(options: IcsProviderOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** The feed's events as mirror rows, read in the calendar's zone. */
  async #rows(calendar: CalendarRef, signal?: AbortSignal): Promise<MirrorResourceRow[]> {
    const copy = await this.#current(signal);
    let rows = copy.rows.get(calendar.timeZone);
    if (rows === undefined) {
      rows = feedEvents(copy.text, calendar.timeZone).events.map((event) => {
        const row = calendarEventRow(event);
        return {
          eventId: row.eventId,
          recurringEventId: row.recurringEventId,
          originalStart: row.originalStart?.getTime() ?? null,
          status: row.status,
          etag: row.etag,
          raw: row.raw,
        };
      });
      copy.rows.set(calendar.timeZone, rows);
    }
    return rows;
  }

  /**
   * The feed's current copy. One fetch at a time, shared by every caller, so no caller's signal
   * stops it: the fetch's own time limit bounds it, and a caller that gave up just stops waiting.
   */
  async #current(signal?: AbortSignal): Promise<Copy> {
    const held = this.#copy;
    if (held !== undefined && this.#now() - held.fetchedAt < (this.#options.reuseMs ?? 60_000)) {
      return held;
    }
    this.#fetching ??= (async () => {
      try {
        const fetched = await fetchFeed(await this.#options.url(), {
          policy: this.#options.policy,
          etag: held?.etag,
          lastModified: held?.lastModified,
        });
        if (fetched.status === 'unchanged' && held !== undefined) {
          held.fetchedAt = this.#now();
          return held;
        }
        if (fetched.status === 'unchanged') {
          throw new CalgateError(
            'upstream_unavailable',
            'The feed answered 304 to a request without validators.',
          );
        }
        this.#copy = {
          text: fetched.text,
          etag: fetched.etag,
          lastModified: fetched.lastModified,
          fetchedAt: this.#now(),
          rows: new Map(),
        };
        return this.#copy;
      } finally {
        this.#fetching = undefined;
      }
    })();
    const fetching = this.#fetching;
    if (signal === undefined) {
      return fetching;
    }
    signal.throwIfAborted();
    return Promise.race([
      fetching,
      new Promise<never>((_resolve, reject) =>
        signal.addEventListener('abort', () => reject(signal.reason), { once: true }),
      ),
    ]);
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage> {
    if (query.orderBy === 'startTime' && !query.singleEvents) {
      throw new CalgateError('invalid_argument', "orderBy 'startTime' is only available with singleEvents.");
    }
    const timeMin = bound(query.timeMin, 'timeMin');
    const timeMax = bound(query.timeMax, 'timeMax');
    const offset = query.pageToken === undefined ? 0 : decodePageToken(query.pageToken);
    const events = listingEvents(
      await this.#rows(calendar, signal),
      calendar,
      {
        timeMin,
        timeMax,
        singleEvents: query.singleEvents,
        showDeleted: query.showDeleted ?? false,
        instanceLimit: Math.min(MAX_INSTANCES, offset + query.maxResults + 1),
      },
      CALENDAR_EVENT_FORMAT,
    );
    const match = query.query === undefined ? undefined : eventMatcher(query.query);
    const visible = match === undefined ? events : match === null ? [] : events.filter(match);
    sortEvents(visible, query.orderBy);
    const page: EventPage = { items: visible.slice(offset, offset + query.maxResults) };
    if (offset + query.maxResults < visible.length) {
      page.nextPageToken = encodePageToken(offset + query.maxResults);
    }
    return page;
  }

  async getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    const rows = await this.#rows(calendar, signal);
    const own = rows.find((row) => row.eventId === eventId && row.status !== 'cancelled');
    if (own !== undefined) {
      return CALENDAR_EVENT_FORMAT.toEvent(own);
    }
    const instance = parseInstanceId(eventId);
    const at = instance === null ? null : instantOfKey(instance.key, calendar.timeZone);
    if (instance !== null && at !== null && rows.some((row) => row.eventId === instance.masterId)) {
      const around = listingEvents(
        rows.filter((row) => row.eventId === instance.masterId || row.recurringEventId === instance.masterId),
        calendar,
        {
          timeMin: at - 2 * DAY,
          timeMax: at + 2 * DAY,
          singleEvents: true,
          showDeleted: false,
          instanceLimit: MAX_INSTANCES,
        },
        CALENDAR_EVENT_FORMAT,
      );
      const found = around.find((event) => event.id === eventId);
      if (found !== undefined) {
        return found;
      }
    }
    throw new CalgateError('not_found', `Event '${eventId}' was not found on this calendar.`);
  }

  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
  ): Promise<FreeBusyResult[]> {
    return busyPerCalendar(calendars, timeMin, timeMax, async (calendar, window) => {
      const listed = listingEvents(
        await this.#rows(calendar, signal),
        calendar,
        {
          timeMin: window.from,
          timeMax: window.to,
          singleEvents: true,
          showDeleted: false,
          instanceLimit: MAX_INSTANCES,
        },
        CALENDAR_EVENT_FORMAT,
      );
      const busy = busyEventsOf(listed, calendar.timeZone).map((event) => [event.start, event.end] as const);
      return mergeBusy(busy, window);
    });
  }

  async insertEvent(): Promise<CalendarEvent> {
    throw readOnly();
  }

  async patchEvent(): Promise<CalendarEvent> {
    throw readOnly();
  }

  async deleteEvent(): Promise<void> {
    throw readOnly();
  }

  async quickAdd(): Promise<CalendarEvent> {
    throw readOnly();
  }

  async colors(): Promise<ColorPalette> {
    return standardPalette();
  }
}
