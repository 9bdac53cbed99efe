import { CalgateError, eventMatcher, isCalgateError, newEventId, parseQuickAdd } from '@calgate/core';
import type { LocalEventRow, LocalEventStore, LocalRangeQuery, NewLocalEvent } from '@calgate/store';
import { freeBusyWindow, mergeBusy, type Window } from '../busy.ts';
import { standardPalette } from '../colors.ts';
import type {
  CalendarEvent,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventInput,
  EventPage,
  EventPatch,
  FreeBusyOptions,
  FreeBusyResult,
  ListEventsQuery,
  WriteOptions,
} from '../types.ts';
import { busyEventsOf } from './busy.ts';
import { reconcileExceptions } from './exceptions.ts';
import { alreadyDeleted, changed, exceptionRow, type Instance, patchFields } from './instances.ts';
import { decodePageToken, encodePageToken } from './page-token.ts';
import {
  EVENT_ID,
  instanceEtag,
  instantOfKey,
  MAX_INSTANCES,
  MAX_ROWS,
  newEtag,
  notFound,
  parseBound,
  parseInstanceId,
  rowInWindow,
  startKeyAt,
  toEvent,
} from './rows.ts';
import { expandSeries, resolveTimes } from './times.ts';

export interface LocalProviderOptions {
  /** The clock quick add reads "today" and "tomorrow" from. */
  now?: () => number;
}

/**
 * Calendars Calgate keeps itself, in Postgres. Behaves like Google Calendar for the operations
 * the tools use: time-range semantics, recurring series expanded into instances with Google's
 * instance ids, ETags, sequences, soft deletion and opaque page tokens. Changing or deleting one
 * instance stores an exception row (`<masterId>_<start>`) that replaces the generated instance.
 */
export class LocalCalendarProvider implements CalendarProvider {
  readonly kind = 'local' as const;
  readonly readsLocally = true;
  readonly #store: LocalEventStore;
  readonly #now: () => number;

  constructor(store: LocalEventStore, options: LocalProviderOptions = {}) {
    this.#store = store;
    this.#now = options.now ?? Date.now;
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery): Promise<EventPage> {
    if (query.orderBy === 'startTime' && !query.singleEvents) {
      throw new CalgateError('invalid_argument', "orderBy 'startTime' is only available with singleEvents.");
    }
    const timeMin = parseBound(query.timeMin, 'timeMin');
    const timeMax = parseBound(query.timeMax, 'timeMax');
    const offset = query.pageToken === undefined ? 0 : decodePageToken(query.pageToken);
    const rows = await this.#windowRows(calendar, {
      ...(timeMin ? { timeMin } : {}),
      ...(timeMax ? { timeMax } : {}),
      ...(query.query === undefined ? {} : { query: query.query }),
      showDeleted: query.showDeleted ?? false,
    });
    // Start instants as the events are made, so sorting parses no text.
    const starts = new Map<CalendarEvent, number>();
    const events = query.singleEvents
      ? this.#expand(
          rows,
          calendar,
          timeMin,
          timeMax,
          offset + query.maxResults + 1,
          query.showDeleted ?? false,
          starts,
        )
      : rows
          .filter((row) => query.showDeleted || row.status !== 'cancelled')
          // Exceptions can be read because of their original start only; they show by their own times.
          .filter((row) => row.recurrence.length > 0 || rowInWindow(row, timeMin, timeMax))
          .map((row) => {
            const event = toEvent(row, calendar);
            starts.set(event, startKeyAt(event, row.startAt.getTime()));
            return event;
          });
    const match = query.query === undefined ? undefined : eventMatcher(query.query);
    const visible = match === undefined ? events : match === null ? [] : events.filter(match);
    if (query.orderBy === 'updated') {
      visible.sort((a, b) => (a.updated ?? '').localeCompare(b.updated ?? '') || a.id.localeCompare(b.id));
    } else {
      visible.sort(
        (a, b) => (starts.get(a) ?? 0) - (starts.get(b) ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
    }
    const items = visible.slice(offset, offset + query.maxResults);
    const page: EventPage = { items };
    if (offset + query.maxResults < visible.length) {
      page.nextPageToken = encodePageToken(offset + query.maxResults);
    }
    return page;
  }

  /**
   * The rows of a window, at most MAX_ROWS: a window with more is refused, as the rows past the
   * limit are unknown and a listing or free/busy answer without them would be wrong unsaid.
   */
  async #windowRows(calendar: CalendarRef, range: Omit<LocalRangeQuery, 'limit'>): Promise<LocalEventRow[]> {
    const rows = await this.#store.listRange(calendar.id, { ...range, limit: MAX_ROWS });
    if (rows.length >= MAX_ROWS) {
      throw new CalgateError(
        'invalid_argument',
        `This calendar has more than ${MAX_ROWS} events in the window; ask for a shorter window.`,
      );
    }
    return rows;
  }

  /** Singles and exceptions as they are; masters as their instances inside the window. */
  #expand(
    rows: LocalEventRow[],
    calendar: CalendarRef,
    timeMin: Date | undefined,
    timeMax: Date | undefined,
    limit: number,
    showDeleted: boolean,
    starts?: Map<CalendarEvent, number>,
  ): CalendarEvent[] {
    const overridden = new Set<string>();
    for (const row of rows) {
      if (row.recurringEventId !== null && row.originalStartTime !== null) {
        overridden.add(`${row.recurringEventId}@${row.originalStartTime.getTime()}`);
      }
    }
    const out: CalendarEvent[] = [];
    for (const row of rows) {
      if (row.recurrence.length === 0) {
        if ((showDeleted || row.status !== 'cancelled') && rowInWindow(row, timeMin, timeMax)) {
          const event = toEvent(row, calendar);
          starts?.set(event, startKeyAt(event, row.startAt.getTime()));
          out.push(event);
        }
        continue;
      }
      if (row.status === 'cancelled' && !showDeleted) {
        continue;
      }
      const master = toEvent(row, calendar);
      const instances = expandSeries(
        {
          recurrence: row.recurrence,
          start: master.start,
          end: master.end,
          defaultTimeZone: calendar.timeZone,
        },
        {
          ...(timeMin ? { from: timeMin.getTime() } : {}),
          ...(timeMax ? { to: timeMax.getTime() } : {}),
          limit,
          maxInstances: MAX_INSTANCES,
        },
      );
      if (!instances.ok) {
        throw instances.error;
      }
      const { recurrence: _recurrence, ...rest } = master;
      for (const instance of instances.value) {
        if (overridden.has(`${row.id}@${instance.startMs}`)) {
          continue;
        }
        const event: CalendarEvent = {
          ...rest,
          id: `${row.id}_${instance.key}`,
          etag: instanceEtag(row.etag, instance.key),
          start: instance.start,
          end: instance.end,
          recurringEventId: row.id,
          originalStartTime: instance.originalStart,
        };
        starts?.set(event, startKeyAt(event, instance.startMs));
        out.push(event);
      }
    }
    return out;
  }

  async getEvent(calendar: CalendarRef, eventId: string): Promise<CalendarEvent> {
    const row = await this.#store.get(calendar.id, eventId);
    if (row !== null) {
      return toEvent(row, calendar);
    }
    const instance = await this.#instance(calendar, eventId);
    if (instance === undefined) {
      throw notFound(eventId);
    }
    return instance.event;
  }

  /**
   * An unmodified instance of a series, addressed by Google's `<masterId>_<start>` id; undefined
   * when the id names no instance of a live series. `master` is set whenever the master exists.
   */
  async #instance(calendar: CalendarRef, eventId: string): Promise<Instance | undefined> {
    const parsed = parseInstanceId(eventId);
    if (parsed === null) {
      return undefined;
    }
    const masterRow = await this.#store.get(calendar.id, parsed.masterId);
    if (masterRow === null || masterRow.recurrence.length === 0 || masterRow.status === 'cancelled') {
      return undefined;
    }
    // Expand only around the instant the id names, so far-away instances of long series are cheap.
    const at = instantOfKey(parsed.key, calendar.timeZone);
    if (at === null) {
      return undefined;
    }
    const window = { from: new Date(at), to: new Date(at + 1) };
    const page = this.#expand([masterRow], calendar, window.from, window.to, 2, false);
    const event = page.find((candidate) => candidate.id === eventId);
    return event === undefined ? undefined : { master: masterRow, event, originalStart: new Date(at) };
  }

  /** Why an id that names no row is not there: a deleted series' instance was deleted with it. */
  async #missing(calendar: CalendarRef, eventId: string): Promise<CalgateError> {
    const parsed = parseInstanceId(eventId);
    const master = parsed === null ? null : await this.#store.get(calendar.id, parsed.masterId);
    return master !== null && master.recurrence.length > 0 && master.status === 'cancelled'
      ? alreadyDeleted(eventId)
      : notFound(eventId);
  }

  #newRow(calendar: CalendarRef, input: EventInput): NewLocalEvent {
    const id = input.id ?? newEventId();
    if (!EVENT_ID.test(id)) {
      throw new CalgateError(
        'invalid_argument',
        `Event id '${id}' is not valid: use 5–1024 characters from a–v and 0–9 (base32hex).`,
      );
    }
    const recurrence = input.recurrence ?? [];
    const times = resolveTimes(input.start, input.end, recurrence, calendar.timeZone);
    const row: NewLocalEvent = {
      calendarId: calendar.id,
      id,
      iCalUid: input.iCalUID ?? `${id}@calgate`,
      status: input.status ?? 'confirmed',
      summary: input.summary ?? null,
      description: input.description ?? null,
      location: input.location ?? null,
      ...times,
      recurrence,
      recurringEventId: null,
      originalStartTime: null,
      attendees: input.attendees ?? null,
      reminders: input.reminders ?? null,
      transparency: input.transparency ?? 'opaque',
      visibility: input.visibility ?? 'default',
      colorId: input.colorId ?? null,
      sequence: 0,
      etag: newEtag(),
    };
    return row;
  }

  async insertEvent(calendar: CalendarRef, input: EventInput): Promise<CalendarEvent> {
    return toEvent(await this.#store.insert(this.#newRow(calendar, input)), calendar);
  }

  /** Creates many events in one statement (imports): all or none; the ids made, in order. */
  async insertEvents(calendar: CalendarRef, inputs: readonly EventInput[]): Promise<string[]> {
    const rows = inputs.map((input) => this.#newRow(calendar, input));
    await this.#store.insertMany(rows);
    return rows.map((row) => row.id);
  }

  /** Stored events (not generated instances) by id, in one query: imports compare many at once. */
  async getEvents(calendar: CalendarRef, ids: readonly string[]): Promise<Map<string, CalendarEvent>> {
    const rows = await this.#store.getMany(calendar.id, ids);
    return new Map(rows.map((row) => [row.id, toEvent(row, calendar)]));
  }

  findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    return this.#store.idsByICalUid(calendar.id, uids);
  }

  /** Stores an exception for a generated instance; null when another writer stored one first. */
  async #storeException(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions,
  ): Promise<LocalEventRow | null> {
    const instance = await this.#instance(calendar, eventId);
    if (instance === undefined) {
      throw await this.#missing(calendar, eventId);
    }
    if (options.ifMatch !== undefined && options.ifMatch !== instance.event.etag) {
      throw changed(
        eventId,
        `changed since it was read (ETag ${instance.event.etag}, expected ${options.ifMatch}).`,
      );
    }
    try {
      return await this.#store.insert(exceptionRow(calendar, instance, patch));
    } catch (error) {
      if (isCalgateError(error) && error.code === 'already_exists') {
        return null;
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
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.#store.get(calendar.id, eventId);
      if (current === null && parseInstanceId(eventId) !== null) {
        if (patch.recurrence !== undefined) {
          throw new CalgateError(
            'invalid_argument',
            `'${eventId}' is one instance of a series and cannot have its own recurrence; change the series instead.`,
          );
        }
        const created = await this.#storeException(calendar, eventId, patch, options);
        if (created !== null) {
          return toEvent(created, calendar);
        }
        continue; // someone stored this exception meanwhile: patch it as a row
      }
      if (current === null || current.status === 'cancelled') {
        throw notFound(eventId);
      }
      if (options.ifMatch !== undefined && options.ifMatch !== current.etag) {
        throw changed(
          eventId,
          `changed since it was read (ETag ${current.etag}, expected ${options.ifMatch}).`,
        );
      }
      if (current.recurringEventId !== null && patch.recurrence !== undefined) {
        throw new CalgateError(
          'invalid_argument',
          `'${eventId}' is one instance of a series and cannot have its own recurrence; change the series instead.`,
        );
      }
      const before = toEvent(current, calendar);
      const recurrence = patch.recurrence ?? current.recurrence;
      const times =
        patch.start || patch.end || patch.recurrence
          ? resolveTimes(patch.start ?? before.start, patch.end ?? before.end, recurrence, calendar.timeZone)
          : {};
      const updated = await this.#store.update(calendar.id, eventId, current.etag, {
        ...times,
        ...patchFields(patch),
        ...(patch.recurrence === undefined ? {} : { recurrence: patch.recurrence }),
        sequence: current.sequence + 1,
        etag: newEtag(),
      });
      if (updated !== null) {
        if (current.recurrence.length > 0 && current.recurringEventId === null) {
          await reconcileExceptions(this.#store, calendar, current, updated);
        }
        return toEvent(updated, calendar);
      }
      if (options.ifMatch !== undefined) {
        throw changed(eventId, 'was changed concurrently; read it again.');
      }
    }
    throw new CalgateError('conflict', `Event '${eventId}' keeps changing concurrently; try again.`, {
      retry: true,
    });
  }

  /**
   * Deleting an instance stores a cancelled exception, so the series skips it. Deleting a
   * series' master deletes its exceptions with it.
   */
  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    const softDelete = () =>
      this.#store.softDelete(calendar.id, eventId, {
        etag: newEtag(),
        ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
      });
    const current = await this.#store.get(calendar.id, eventId);
    if (current !== null || parseInstanceId(eventId) === null) {
      await softDelete();
      return;
    }
    const created = await this.#storeException(calendar, eventId, { status: 'cancelled' }, options);
    if (created === null) {
      await softDelete();
    }
  }

  /**
   * Busy time per calendar from the same expansion as listEvents. A calendar whose events
   * cannot be read completely gets an error, never a partial "free".
   */
  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    _signal?: AbortSignal,
    options: FreeBusyOptions = {},
  ): Promise<FreeBusyResult[]> {
    const window = freeBusyWindow(timeMin, timeMax);
    return Promise.all(
      calendars.map(async (calendar): Promise<FreeBusyResult> => {
        try {
          const { busy, events } = await this.#busy(calendar, window);
          return { calendarId: calendar.id, busy, ...(options.withEvents === true ? { events } : {}) };
        } catch (error) {
          if (!isCalgateError(error)) {
            throw error;
          }
          return { calendarId: calendar.id, error: { code: error.code, message: error.message } };
        }
      }),
    );
  }

  async #busy(calendar: CalendarRef, window: Window) {
    const from = new Date(window.from);
    const to = new Date(window.to);
    const rows = await this.#windowRows(calendar, { timeMin: from, timeMax: to, showDeleted: false });
    const listed = this.#expand(rows, calendar, from, to, MAX_INSTANCES, false);
    const events = busyEventsOf(listed, calendar.timeZone)
      .filter((event) => event.start < window.to && event.end > window.from)
      .sort((a, b) => a.start - b.start || a.end - b.end);
    return {
      busy: mergeBusy(
        events.map((event) => [event.start, event.end] as const),
        window,
      ),
      events,
    };
  }

  /** Reads the sentence in the calendar's zone (see parseQuickAdd in @calgate/core) and inserts it. */
  async quickAdd(calendar: CalendarRef, text: string): Promise<CalendarEvent> {
    const parsed = parseQuickAdd(text, { now: this.#now(), timeZone: calendar.timeZone });
    if (!parsed.ok) {
      throw parsed.error;
    }
    const { summary, location, start, end } = parsed.value;
    return this.insertEvent(calendar, {
      start,
      end,
      ...(summary === undefined ? {} : { summary }),
      ...(location === undefined ? {} : { location }),
    });
  }

  async colors(): Promise<ColorPalette> {
    return standardPalette();
  }
}
