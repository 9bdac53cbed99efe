import { randomInt } from 'node:crypto';
import { CalgateError, newEventId, parseDateTime } from '@calgate/core';
import type { LocalEventRow, LocalEventStore, NewLocalEvent } from '@calgate/store';
import { freeBusyWindow, mergeBusy } from '../busy.ts';
import { standardPalette } from '../colors.ts';
import type {
  CalendarEvent,
  CalendarProvider,
  CalendarRef,
  ColorPalette,
  EventInput,
  EventPage,
  EventPatch,
  FreeBusyResult,
  ListEventsQuery,
  WriteOptions,
} from '../types.ts';
import { decodePageToken, encodePageToken } from './page-token.ts';
import { expandSeries, resolveTimes, toEventDateTime } from './times.ts';

const EVENT_ID = /^[a-v0-9]{5,1024}$/;
/** Rows one list request reads at most; windows are bounded by the tools, this bounds the rest. */
const MAX_ROWS = 20_000;
const MAX_INSTANCES = 10_000;

function newEtag(): string {
  return `"${Date.now()}${String(randomInt(0, 1_000_000)).padStart(6, '0')}"`;
}

function notFound(eventId: string): CalgateError {
  return new CalgateError('not_found', `Event '${eventId}' was not found in this calendar.`, {
    context: { eventId },
  });
}

function parseBound(value: string | undefined, name: string): Date | undefined {
  if (value === undefined) {
    return undefined;
  }
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) {
    throw new CalgateError('invalid_argument', `${name} '${value}' is not an RFC 3339 date-time.`);
  }
  return new Date(ms);
}

function toEvent(row: LocalEventRow, calendar: CalendarRef): CalendarEvent {
  const event: CalendarEvent = {
    id: row.id,
    status: row.status as CalendarEvent['status'],
    start: toEventDateTime(row.allDay, row.startDate, row.startAt, row.startTimeZone, calendar.timeZone),
    end: toEventDateTime(row.allDay, row.endDate, row.endAt, row.endTimeZone, calendar.timeZone),
    iCalUID: row.iCalUid,
    etag: row.etag,
    sequence: row.sequence,
    created: row.createdAt.toISOString(),
    updated: row.updatedAt.toISOString(),
    transparency: row.transparency as CalendarEvent['transparency'],
    visibility: row.visibility as CalendarEvent['visibility'],
  };
  if (row.summary !== null) {
    event.summary = row.summary;
  }
  if (row.description !== null) {
    event.description = row.description;
  }
  if (row.location !== null) {
    event.location = row.location;
  }
  if (row.recurrence.length > 0) {
    event.recurrence = row.recurrence;
  }
  if (row.recurringEventId !== null && row.originalStartTime !== null) {
    event.recurringEventId = row.recurringEventId;
    event.originalStartTime = toEventDateTime(
      row.allDay,
      null,
      row.originalStartTime,
      row.startTimeZone,
      calendar.timeZone,
    );
  }
  if (Array.isArray(row.attendees)) {
    event.attendees = row.attendees as CalendarEvent['attendees'];
  }
  if (row.reminders !== null && typeof row.reminders === 'object') {
    event.reminders = row.reminders as CalendarEvent['reminders'];
  }
  if (row.colorId !== null) {
    event.colorId = row.colorId;
  }
  return event;
}

function matches(event: CalendarEvent, query: string | undefined): boolean {
  if (query === undefined) {
    return true;
  }
  const needle = query.toLowerCase();
  const haystack = [
    event.summary,
    event.description,
    event.location,
    ...(event.attendees ?? []).map((a) => a.email),
  ];
  return haystack.some((text) => text?.toLowerCase().includes(needle));
}

/** The start instant an instance-id suffix names: `20260105T080000Z`, or a date in the calendar's zone. */
function instantOfKey(key: string, calendarZone: string): number | null {
  const m = /^(\d{4})(\d{2})(\d{2})(?:T(\d{2})(\d{2})(\d{2})Z)?$/.exec(key);
  if (m === null) {
    return null;
  }
  const text = `${m[1]}-${m[2]}-${m[3]}T${m[4] ?? '00'}:${m[5] ?? '00'}:${m[6] ?? '00'}${m[4] === undefined ? '' : 'Z'}`;
  const parsed = parseDateTime(text, calendarZone);
  return parsed.ok ? parsed.value : null;
}

function startKey(event: CalendarEvent): number {
  return Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);
}

/**
 * Calendars Calgate keeps itself, in Postgres. Behaves like Google Calendar for the operations
 * the tools use: time-range semantics, recurring series expanded into instances with Google's
 * instance ids, ETags, sequences, soft deletion and opaque page tokens.
 */
export class LocalCalendarProvider implements CalendarProvider {
  readonly kind = 'local' as const;
  readonly #store: LocalEventStore;

  constructor(store: LocalEventStore) {
    this.#store = store;
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery): Promise<EventPage> {
    if (query.orderBy === 'startTime' && !query.singleEvents) {
      throw new CalgateError('invalid_argument', "orderBy 'startTime' is only available with singleEvents.");
    }
    const timeMin = parseBound(query.timeMin, 'timeMin');
    const timeMax = parseBound(query.timeMax, 'timeMax');
    const offset = query.pageToken === undefined ? 0 : decodePageToken(query.pageToken);
    const rows = await this.#store.listRange(calendar.id, {
      ...(timeMin ? { timeMin } : {}),
      ...(timeMax ? { timeMax } : {}),
      ...(query.query === undefined ? {} : { query: query.query }),
      showDeleted: query.showDeleted ?? false,
      limit: MAX_ROWS,
    });
    const events = query.singleEvents
      ? this.#expand(
          rows,
          calendar,
          timeMin,
          timeMax,
          offset + query.maxResults + 1,
          query.showDeleted ?? false,
        )
      : rows
          .filter((row) => query.showDeleted || row.status !== 'cancelled')
          .map((row) => toEvent(row, calendar));
    const visible = events.filter((event) => matches(event, query.query));
    if (query.orderBy === 'updated') {
      visible.sort((a, b) => (a.updated ?? '').localeCompare(b.updated ?? '') || a.id.localeCompare(b.id));
    } else {
      const keys = new Map(visible.map((event) => [event, startKey(event)]));
      visible.sort(
        (a, b) => (keys.get(a) ?? 0) - (keys.get(b) ?? 0) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0),
      );
    }
    const items = visible.slice(offset, offset + query.maxResults);
    const page: EventPage = { items };
    if (offset + query.maxResults < visible.length) {
      page.nextPageToken = encodePageToken(offset + query.maxResults);
    }
    return page;
  }

  /** Singles and exceptions as they are; masters as their instances inside the window. */
  #expand(
    rows: LocalEventRow[],
    calendar: CalendarRef,
    timeMin: Date | undefined,
    timeMax: Date | undefined,
    limit: number,
    showDeleted: boolean,
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
        const inWindow =
          (timeMax === undefined || row.startAt < timeMax) &&
          (timeMin === undefined ||
            row.endAt > timeMin ||
            (row.endAt.getTime() === row.startAt.getTime() && row.startAt >= timeMin));
        if ((showDeleted || row.status !== 'cancelled') && inWindow) {
          out.push(toEvent(row, calendar));
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
      for (const instance of instances.value) {
        if (overridden.has(`${row.id}@${instance.startMs}`)) {
          continue;
        }
        const { recurrence: _recurrence, ...rest } = master;
        out.push({
          ...rest,
          id: `${row.id}_${instance.key}`,
          start: instance.start,
          end: instance.end,
          recurringEventId: row.id,
          originalStartTime: instance.originalStart,
        });
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
    return instance;
  }

  /** An unmodified instance of a series, addressed by Google's `<masterId>_<start>` id. */
  async #instance(calendar: CalendarRef, eventId: string): Promise<CalendarEvent | undefined> {
    const match = /^([a-v0-9]{5,1024})_(\d{8}(?:T\d{6}Z)?)$/.exec(eventId);
    if (match === null) {
      return undefined;
    }
    const [, masterId = '', key = ''] = match;
    const masterRow = await this.#store.get(calendar.id, masterId);
    if (masterRow === null || masterRow.recurrence.length === 0 || masterRow.status === 'cancelled') {
      return undefined;
    }
    // Expand only around the instant the id names, so far-away instances of long series are cheap.
    const at = instantOfKey(key, calendar.timeZone);
    if (at === null) {
      return undefined;
    }
    const window = { from: new Date(at), to: new Date(at + 1) };
    const page = this.#expand([masterRow], calendar, window.from, window.to, 2, false);
    return page.find((event) => event.id === eventId);
  }

  async insertEvent(calendar: CalendarRef, input: EventInput): Promise<CalendarEvent> {
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
      iCalUid: `${id}@calgate`,
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
    return toEvent(await this.#store.insert(row), calendar);
  }

  async patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    for (let attempt = 0; attempt < 5; attempt++) {
      const current = await this.#store.get(calendar.id, eventId);
      if (current === null || current.status === 'cancelled') {
        throw notFound(eventId);
      }
      if (options.ifMatch !== undefined && options.ifMatch !== current.etag) {
        throw new CalgateError(
          'precondition_failed',
          `Event '${eventId}' changed since it was read (ETag ${current.etag}, expected ${options.ifMatch}).`,
          { context: { eventId } },
        );
      }
      const before = toEvent(current, calendar);
      const start = patch.start ?? before.start;
      const end = patch.end ?? before.end;
      const recurrence = patch.recurrence ?? current.recurrence;
      const times =
        patch.start || patch.end || patch.recurrence
          ? resolveTimes(start, end, recurrence, calendar.timeZone)
          : {};
      const updated = await this.#store.update(calendar.id, eventId, current.etag, {
        ...times,
        ...(patch.summary === undefined ? {} : { summary: patch.summary }),
        ...(patch.description === undefined ? {} : { description: patch.description }),
        ...(patch.location === undefined ? {} : { location: patch.location }),
        ...(patch.recurrence === undefined ? {} : { recurrence: patch.recurrence }),
        ...(patch.attendees === undefined ? {} : { attendees: patch.attendees }),
        ...(patch.reminders === undefined ? {} : { reminders: patch.reminders }),
        ...(patch.transparency === undefined ? {} : { transparency: patch.transparency }),
        ...(patch.visibility === undefined ? {} : { visibility: patch.visibility }),
        ...(patch.colorId === undefined ? {} : { colorId: patch.colorId }),
        ...(patch.status === undefined ? {} : { status: patch.status }),
        sequence: current.sequence + 1,
        etag: newEtag(),
      });
      if (updated !== null) {
        return toEvent(updated, calendar);
      }
      if (options.ifMatch !== undefined) {
        throw new CalgateError(
          'precondition_failed',
          `Event '${eventId}' was changed concurrently; read it again.`,
          {
            context: { eventId },
          },
        );
      }
    }
    throw new CalgateError('conflict', `Event '${eventId}' keeps changing concurrently; try again.`, {
      retry: true,
    });
  }

  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    await this.#store.softDelete(calendar.id, eventId, {
      etag: newEtag(),
      ...(options.ifMatch === undefined ? {} : { ifMatch: options.ifMatch }),
    });
  }

  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
  ): Promise<FreeBusyResult[]> {
    const window = freeBusyWindow(timeMin, timeMax);
    const from = new Date(window.from);
    const to = new Date(window.to);
    return Promise.all(
      calendars.map(async (calendar) => {
        const rows = await this.#store.listRange(calendar.id, {
          timeMin: from,
          timeMax: to,
          showDeleted: false,
          limit: MAX_ROWS,
        });
        const events = this.#expand(rows, calendar, from, to, MAX_INSTANCES, false);
        const intervals = events
          .filter((event) => event.status !== 'cancelled' && event.transparency !== 'transparent')
          .map((event): [number, number] => [startKey(event), startKey({ ...event, start: event.end })]);
        return { calendarId: calendar.id, busy: mergeBusy(intervals, window) };
      }),
    );
  }

  async quickAdd(): Promise<CalendarEvent> {
    throw new CalgateError('unavailable', 'Quick add is not available on local calendars yet.');
  }

  async colors(): Promise<ColorPalette> {
    return standardPalette();
  }
}
