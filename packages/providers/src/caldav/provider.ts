/**
 * The `caldav` CalendarProvider: one CalDAV account (iCloud, Fastmail, Nextcloud, any server)
 * read and written through CaldavClient and the iCalendar model.
 *
 * Event ids name the object resource the server keeps the event in, never its UID, and stay in
 * Google's alphabet (base32hex) as every event id does: an object Calgate makes is `<id>.ics`
 * (its random ids start with `c`), so the id is the name without `.ics`; any other name is `vv`
 * + the name (UTF-8) in base32hex. Instances are `<id>_<key>` as everywhere else.
 */
import { randomUUID } from 'node:crypto';
import { CalgateError, eventMatcher, isCalgateError, parseQuickAdd } from '@calgate/core';
import ICAL from 'ical.js';
import { busyPerCalendar, mergeBusy, type Window } from '../busy.ts';
import { standardPalette } from '../colors.ts';
import { busyEventsOf } from '../local/busy.ts';
import { decodePageToken, encodePageToken } from '../local/page-token.ts';
import { instantOf } from '../local/rows.ts';
import type {
  BusyInterval,
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
import type { CaldavClient, CaldavObject } from './client.ts';
import { expandResource, resourceMaster } from './ical/expand.ts';
import { type IcsResource, parseCalendarText } from './ical/read.ts';
import { deleteInstanceIcs, newEventIcs, patchEventIcs } from './ical/write.ts';
import { eventsOfObjects } from './window.ts';

const BASE32HEX = '0123456789abcdefghijklmnopqrstuv';
const CALGATE_NAME = /^([a-v0-9]{5,1024})\.ics$/;
const EVENT_ID = /^[a-v0-9]{5,1024}$/;
/** Encoded names' ids begin so; Calgate's own ids never do. */
const ENCODED = 'vv';
const DAY = 86_400_000;
const MAX_OBJECTS = 10_000;

function base32hex(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32HEX[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
  }
  if (bits > 0) {
    out += BASE32HEX[(value << (5 - bits)) & 31];
  }
  return out;
}

function fromBase32hex(text: string): Uint8Array | undefined {
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const char of text) {
    const digit = BASE32HEX.indexOf(char);
    if (digit < 0) {
      return undefined;
    }
    value = (value << 5) | digit;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 255);
      bits -= 8;
      value &= (1 << bits) - 1;
    }
  }
  return Uint8Array.from(out);
}

function lastSegment(href: string): string {
  const path = href.split('?')[0] ?? href;
  const parts = path.split('/').filter((part) => part !== '');
  const last = parts[parts.length - 1] ?? '';
  try {
    return decodeURIComponent(last);
  } catch {
    return last;
  }
}

/** The event id of the object at `href`. */
export function caldavEventId(href: string): string {
  const name = lastSegment(href);
  const calgate = CALGATE_NAME.exec(name);
  return calgate?.[1] ?? `${ENCODED}${base32hex(new TextEncoder().encode(name))}`;
}

/**
 * The object names an event id may stand for, likeliest first: an encoded name, then
 * `<id>.ics` (a client-chosen id may begin like an encoded one).
 */
export function caldavObjectNames(eventId: string): string[] {
  if (!EVENT_ID.test(eventId)) {
    return [];
  }
  const names: string[] = [];
  if (eventId.startsWith(ENCODED)) {
    const bytes = fromBase32hex(eventId.slice(ENCODED.length));
    try {
      const name = bytes === undefined ? '' : new TextDecoder('utf-8', { fatal: true }).decode(bytes);
      // biome-ignore lint/suspicious/noControlCharactersInRegex: names with control characters are no names
      if (name !== '' && !/[/\u0000-\u001f]/.test(name) && caldavEventId(name) === eventId) {
        names.push(name);
      }
    } catch {}
  }
  names.push(`${eventId}.ics`);
  return names;
}

/** `<id>` or `<id>_<instance key>`. */
function splitId(eventId: string): { id: string; instance: string | undefined } {
  const at = eventId.lastIndexOf('_');
  return at < 0
    ? { id: eventId, instance: undefined }
    : { id: eventId.slice(0, at), instance: eventId.slice(at + 1) };
}

/**
 * The fields of `patch` that another client changed between two readings of an event (`was`,
 * then `now`) to something other than what the patch sets: applying the patch again would undo
 * that client's edit.
 */
function changedBoth(was: CalendarEvent, now: CalendarEvent, patch: EventPatch): string[] {
  const same = (a: unknown, b: unknown) => JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
  return Object.entries(patch).flatMap(([field, value]) => {
    if (value === undefined) {
      return [];
    }
    const before = was[field as keyof CalendarEvent];
    const after = now[field as keyof CalendarEvent];
    return same(before, after) || same(after, value) ? [] : [field];
  });
}

function collectionBase(calendar: CalendarRef): string {
  return calendar.externalId.endsWith('/') ? calendar.externalId : `${calendar.externalId}/`;
}

function notFound(eventId: string): CalgateError {
  return new CalgateError('not_found', `Event '${eventId}' was not found on this calendar.`);
}

function parseBound(value: string | undefined, name: string): number | undefined {
  if (value === undefined) {
    return undefined;
  }
  const at = Date.parse(value);
  if (Number.isNaN(at)) {
    throw new CalgateError('invalid_argument', `${name} '${value}' is not an RFC 3339 date-time.`);
  }
  return at;
}

/** An event's start and end as instants: all-day dates are midnights in the calendar's zone. */
function startInstant(event: CalendarEvent, zone: string): number {
  return instantOf(event.start, zone);
}

function endInstant(event: CalendarEvent, zone: string): number {
  return instantOf(event.end, zone);
}

/**
 * The events of one object as a listing without `singleEvents` shows them (or a sync keeps
 * them): the master or single event, and each RECURRENCE-ID override as an exception of it
 * (a cancelled override as a cancelled exception).
 */
export function resourceEvents(resource: IcsResource, eventId: string, etag?: string): CalendarEvent[] {
  const out: CalendarEvent[] = [];
  const master = resourceMaster(resource, eventId);
  if (master !== undefined) {
    out.push(master);
  }
  for (const override of resource.overrides) {
    const cancelled = override.getFirstPropertyValue('status')?.toString().toUpperCase() === 'CANCELLED';
    let component = override;
    if (cancelled) {
      component = new ICAL.Component(JSON.parse(JSON.stringify(override.toJSON())));
      component.updatePropertyWithValue('status', 'CONFIRMED');
    }
    const alone: IcsResource = { ...resource, master: undefined, overrides: [component] };
    for (const event of expandResource(alone, { eventId })) {
      out.push(cancelled ? { ...event, status: 'cancelled' } : event);
    }
  }
  return etag === undefined ? out : out.map((event) => ({ ...event, etag }));
}

/**
 * The events with the account's own attendee entry marked `self`, as Google marks it: whoever
 * reads them (free/busy from the mirror, rules, timesheets) then knows the account's answer. An
 * entry is the account's when it is the account's address, or a bare name (an ATTENDEE written
 * without a domain, as some clients do) equal to the address's name: a server that gives no
 * address makes the account `username@server`.
 */
export function markSelf(events: CalendarEvent[], account: string | undefined): CalendarEvent[] {
  const own = account?.toLowerCase();
  if (own === undefined || own === '') {
    return events;
  }
  const name = own.slice(0, Math.max(own.lastIndexOf('@'), 0)) || own;
  const isOwn = (email: string): boolean => {
    const address = email.toLowerCase();
    return address === own || (!address.includes('@') && address === name);
  };
  return events.map((event) =>
    event.attendees?.some((attendee) => attendee.self !== true && isOwn(attendee.email))
      ? {
          ...event,
          attendees: event.attendees.map((attendee) =>
            isOwn(attendee.email) ? { ...attendee, self: true } : attendee,
          ),
        }
      : event,
  );
}

export interface CaldavProviderOptions {
  /** The account's client (credentials are read when first needed). */
  client: () => Promise<CaldavClient>;
  /** The account's own address: events it declined are free in free/busy. */
  accountEmail?: string;
  now?: () => number;
}

export class CaldavCalendarProvider implements CalendarProvider {
  readonly kind = 'caldav' as const;
  readonly #client: () => Promise<CaldavClient>;
  readonly #account: string | undefined;
  readonly #now: () => number;

  constructor(options: CaldavProviderOptions) {
    this.#client = options.client;
    this.#account = options.accountEmail?.toLowerCase();
    this.#now = options.now ?? Date.now;
  }

  async #objects(calendar: CalendarRef, from?: number, to?: number, signal?: AbortSignal) {
    const client = await this.#client();
    const url = collectionBase(calendar);
    const [inRange, recurring] = await Promise.all([
      client.calendarQuery(url, from, to, signal),
      from === undefined && to === undefined ? Promise.resolve([]) : client.recurringObjects(url, signal),
    ]);
    const byHref = new Map<string, CaldavObject>();
    for (const object of [...inRange, ...recurring]) {
      byHref.set(object.href, object);
    }
    if (byHref.size > MAX_OBJECTS) {
      throw new CalgateError(
        'invalid_argument',
        `This calendar has more than ${MAX_OBJECTS} events in the window; ask for a shorter window.`,
      );
    }
    return [...byHref.values()];
  }

  /** Expanded events over [from, to), earliest first, each with its object's ETag. */
  async #window(
    calendar: CalendarRef,
    from: number,
    to: number,
    signal?: AbortSignal,
  ): Promise<CalendarEvent[]> {
    const objects = await this.#objects(calendar, from, to, signal);
    const read = eventsOfObjects(objects, calendar.timeZone, from, to, (object) =>
      caldavEventId(object.href),
    );
    return markSelf(
      read.events.map(({ event, etag }) => (etag === undefined ? event : { ...event, etag })),
      this.#account,
    );
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage> {
    if (query.orderBy === 'startTime' && !query.singleEvents) {
      throw new CalgateError('invalid_argument', "orderBy 'startTime' is only available with singleEvents.");
    }
    const from = parseBound(query.timeMin, 'timeMin');
    const to = parseBound(query.timeMax, 'timeMax');
    const offset = query.pageToken === undefined ? 0 : decodePageToken(query.pageToken);
    let events: CalendarEvent[];
    if (query.singleEvents) {
      events = await this.#window(
        calendar,
        from ?? this.#now() - 366 * DAY,
        to ?? this.#now() + 366 * DAY,
        signal,
      );
    } else {
      events = [];
      for (const object of await this.#objects(calendar, from, to, signal)) {
        try {
          for (const resource of parseCalendarText(object.data, calendar.timeZone).resources) {
            const read = resourceEvents(resource, caldavEventId(object.href), object.etag);
            for (const event of markSelf(read, this.#account)) {
              const inWindow =
                (event.recurrence?.length ?? 0) > 0 ||
                ((to === undefined || startInstant(event, calendar.timeZone) < to) &&
                  (from === undefined || endInstant(event, calendar.timeZone) > from));
              if (inWindow && (query.showDeleted || event.status !== 'cancelled')) {
                events.push(event);
              }
            }
          }
        } catch (error) {
          if (!isCalgateError(error)) {
            throw error;
          }
        }
      }
      const zone = calendar.timeZone;
      events.sort((a, b) => startInstant(a, zone) - startInstant(b, zone) || (a.id < b.id ? -1 : 1));
    }
    const match = query.query === undefined ? undefined : eventMatcher(query.query);
    const visible = match === undefined ? events : match === null ? [] : events.filter(match);
    if (query.orderBy === 'updated') {
      visible.sort((a, b) => (a.updated ?? '').localeCompare(b.updated ?? '') || a.id.localeCompare(b.id));
    }
    const page: EventPage = { items: visible.slice(offset, offset + query.maxResults) };
    if (offset + query.maxResults < visible.length) {
      page.nextPageToken = encodePageToken(offset + query.maxResults);
    }
    return page;
  }

  async #object(calendar: CalendarRef, eventId: string, signal?: AbortSignal) {
    const { id, instance } = splitId(eventId);
    const client = await this.#client();
    const base = collectionBase(calendar);
    for (const name of caldavObjectNames(id)) {
      try {
        const object = await client.get(encodeURIComponent(name), base, signal);
        return { client, base, object, id, instance };
      } catch (error) {
        if (!isCalgateError(error) || error.code !== 'not_found') {
          throw error;
        }
      }
    }
    throw notFound(eventId);
  }

  #eventOf(
    calendar: CalendarRef,
    object: CaldavObject,
    id: string,
    instance: string | undefined,
    eventId: string,
  ) {
    const resource = parseCalendarText(object.data, calendar.timeZone).resources[0];
    if (resource === undefined) {
      throw notFound(eventId);
    }
    let event: CalendarEvent | undefined;
    if (instance === undefined) {
      event = resourceMaster(resource, id) ?? resourceEvents(resource, id)[0];
    } else {
      const m = /^(\d{4})(\d{2})(\d{2})/.exec(instance);
      const around = m === null ? undefined : Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
      const candidates =
        around === undefined
          ? []
          : [
              ...expandResource(resource, { eventId: id, from: around - 2 * DAY, to: around + 3 * DAY }),
              ...resourceEvents(resource, id),
            ];
      event = candidates.find((candidate) => candidate.id === eventId && candidate.status !== 'cancelled');
    }
    if (event === undefined) {
      throw notFound(eventId);
    }
    const [marked] = markSelf(
      [object.etag === undefined ? event : { ...event, etag: object.etag }],
      this.#account,
    );
    return marked ?? event;
  }

  async getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    const { object, id, instance } = await this.#object(calendar, eventId, signal);
    return this.#eventOf(calendar, object, id, instance, eventId);
  }

  async insertEvent(calendar: CalendarRef, input: EventInput): Promise<CalendarEvent> {
    const id = input.id ?? `c${base32hex(Buffer.from(randomUUID().replaceAll('-', ''), 'hex'))}`;
    if (!EVENT_ID.test(id)) {
      throw new CalgateError(
        'invalid_argument',
        `Event id '${id}' is not valid: use 5 to 1024 characters of 0-9 and a-v.`,
      );
    }
    const client = await this.#client();
    // The UID is the one given (an import keeps the file's); the object's name stays Calgate's own.
    const text = newEventIcs(input, input.iCalUID ?? id, {
      calendarZone: calendar.timeZone,
      now: this.#now(),
    });
    const object = await client.create(collectionBase(calendar), text, `${id}.ics`);
    return this.#eventOf(calendar, object, id, undefined, id);
  }

  async patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    const { client, base, object, id, instance } = await this.#object(calendar, eventId);
    const current = this.#eventOf(calendar, object, id, instance, eventId);
    if (options.ifMatch !== undefined && options.ifMatch !== object.etag) {
      throw new CalgateError(
        'precondition_failed',
        `Event '${eventId}' was changed since it was read (its ETag is now ${object.etag}); read it again.`,
      );
    }
    const context = { calendarZone: calendar.timeZone, now: this.#now() };
    const written = await client.update(
      object.href,
      base,
      (text) => patchEventIcs(text, instance, patch, context),
      {
        label: current.summary ?? eventId,
        clash: (before, after) =>
          changedBoth(
            this.#eventOf(calendar, { ...object, data: before }, id, instance, eventId),
            this.#eventOf(calendar, { ...object, data: after }, id, instance, eventId),
            patch,
          ),
        ...(object.etag === undefined ? {} : { known: { etag: object.etag, data: object.data } }),
      },
    );
    if (instance === undefined) {
      return this.#eventOf(calendar, written, id, undefined, eventId);
    }
    const events = markSelf(
      resourceEvents(parseCalendarText(written.data, calendar.timeZone).resources[0] as IcsResource, id),
      this.#account,
    );
    const event = events.find((candidate) => candidate.id === eventId);
    if (event === undefined) {
      throw notFound(eventId);
    }
    return written.etag === undefined ? event : { ...event, etag: written.etag };
  }

  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    const { client, base, object, id, instance } = await this.#object(calendar, eventId);
    const current = this.#eventOf(calendar, object, id, instance, eventId);
    if (options.ifMatch !== undefined && options.ifMatch !== object.etag) {
      throw new CalgateError(
        'precondition_failed',
        `Event '${eventId}' was changed since it was read (its ETag is now ${object.etag}); read it again.`,
      );
    }
    if (instance === undefined) {
      await client.delete(object.href, base, {
        ...(object.etag === undefined ? {} : { ifMatch: object.etag }),
        label: current.summary ?? eventId,
      });
      return;
    }
    const context = { calendarZone: calendar.timeZone, now: this.#now() };
    await client.update(object.href, base, (text) => deleteInstanceIcs(text, instance, context), {
      label: current.summary ?? eventId,
      ...(object.etag === undefined ? {} : { known: { etag: object.etag, data: object.data } }),
    });
  }

  /**
   * The event ids of the objects carrying these UIDs, by UID, from one calendar-query for the
   * whole calendar (never one request per UID).
   */
  async findByICalUIDs(calendar: CalendarRef, uids: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (uids.length === 0) {
      return out;
    }
    const wanted = new Set(uids);
    const client = await this.#client();
    for (const { href, uid } of await client.uidIndex(collectionBase(calendar))) {
      if (wanted.has(uid) && !out.has(uid)) {
        out.set(uid, caldavEventId(href));
      }
    }
    return out;
  }

  /**
   * Busy from the events by the rule the mirror answers with (busyEventsOf): all-day events cover
   * their days in the calendar's zone; transparent, cancelled and declined (by the account's own
   * entry, `self`) events are free.
   */
  busyOf(calendar: CalendarRef, events: readonly CalendarEvent[], window: Window): BusyInterval[] {
    return mergeBusy(
      busyEventsOf(events, calendar.timeZone).map((event) => [event.start, event.end] as const),
      window,
    );
  }

  /** Free/busy read from the server (a mirror of the calendar answers from its copy). */
  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
  ): Promise<FreeBusyResult[]> {
    return busyPerCalendar(calendars, timeMin, timeMax, async (calendar, window) =>
      this.busyOf(calendar, await this.#window(calendar, window.from, window.to, signal), window),
    );
  }

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
