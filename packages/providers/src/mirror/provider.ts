/**
 * A calendar read from its mirror in Postgres instead of from its provider (Google today): the
 * upstream CalendarProvider answers what the mirror cannot, and the provider's MirrorFormat
 * (mirror/source.ts) turns its events into rows and back.
 *
 * Freshness rule: a listing is answered from the mirror when the calendar's first full sync is
 * done and either it was synced within `maxStalenessMs`, or a push channel is open and the
 * upstream has pushed nothing since the last sync. Otherwise one incremental sync runs first
 * (usually an empty page). Pages say which sync they reflect (`syncedAt`). When the mirror cannot
 * answer (no full sync yet, the sync failed, a window too large for one read) the upstream
 * answers, as before; a calendar never synced gets its first sync queued.
 *
 * Writes go to the upstream and their answers into the mirror at once (write-through), so a read
 * right after a write sees it. Free/busy is answered from the mirror under the same rule (see
 * mirror/busy.ts), and kept per calendar version until the events change (mirror/busy-cache.ts);
 * a listing's rows are kept per version the same way (mirror/batch.ts). Quick add, colours and
 * single-event fetches stay with the upstream, and so do listings and free/busy that ask for
 * `fresh` data (booking's conflict check).
 * The caller has already checked the key's grant on the calendar, as for every provider.
 */
import { CalgateError } from '@calgate/core';
import type { MirrorEventInput, MirrorRangeQuery, MirrorRepository } from '@calgate/store';
import { freeBusyWindow, type Window } from '../busy.ts';
import { parseBound, startKey } from '../local/rows.ts';
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
  NewCalendar,
  WriteOptions,
} from '../types.ts';
import { MirrorBatches } from './batch.ts';
import { mirrorBusy } from './busy.ts';
import { BusyCache, type CachedBusy } from './busy-cache.ts';
import { FreshnessRule } from './freshness.ts';
import { type ListingOptions, listingEvents, sortEvents } from './listing.ts';
import type { MirrorFormat } from './source.ts';
import type { MirrorVersionWatch } from './trusted.ts';
import { upstreamWriteOptions } from './write-options.ts';

/** Rows one mirror read takes at most; a window with more is read from the upstream instead. */
const READ_ROWS = 2_500;
/** All-day events are stored at UTC midnight: read this much around a window, then filter exactly. */
const ALL_DAY_SLACK_MS = 14 * 3_600_000;
const PAGE_TOKEN_PREFIX = 'm.';
const FIRST_SLACK = 8;

export interface MirrorConnection {
  tenantId: string;
  connectionId: string;
  auth: 'oauth' | 'service_account' | 'password';
}

export interface MirrorReadDeps {
  mirror: Pick<MirrorRepository, 'freshness' | 'readResources' | 'readFirst' | 'resources' | 'applyWrite'>;
  /** MIRROR_MAX_STALENESS in milliseconds. */
  maxStalenessMs: number;
  /** Runs one incremental sync of the calendar to its end (the same sync the worker runs). */
  sync(connection: MirrorConnection, calendar: CalendarRef): Promise<void>;
  /** Queues the calendar's first full sync for a worker. */
  requestSync(tenantId: string, calendarId: string): Promise<void>;
  /** Records that the calendar is being read (the planner keeps such calendars polled). */
  touch(calendarId: string): void;
  /** The upstream as users know it ('Google'), for messages; 'its provider' when not given. */
  upstreamName?: string;
  /** Told when the mirror could not answer and the upstream did instead. */
  onFallback?(calendarId: string, reason: string, error?: unknown): void;
  /**
   * Announcements of changed mirror state: given (and heard), free/busy reuses what it last read
   * of a calendar's sync state until the calendar is announced (see mirror/trusted.ts).
   */
  versions?: MirrorVersionWatch;
  now?: () => number;
}

/** A listing's events as read from the mirror; see #firstEvents for completeBefore. */
type FirstEvents = { events: CalendarEvent[]; completeBefore?: number };

export class MirroredCalendarProvider implements CalendarProvider {
  readonly readsLocally = true;
  readonly #upstream: CalendarProvider;
  readonly #format: MirrorFormat;
  readonly #connection: MirrorConnection;
  readonly #deps: MirrorReadDeps;
  readonly #now: () => number;
  /** Lookups of all providers sharing a mirror, coalesced per turn of the event loop. */
  static readonly #batches = new WeakMap<MirrorReadDeps['mirror'], MirrorBatches>();
  readonly #batch: MirrorBatches;
  /** Whether a calendar's mirror may answer (mirror/freshness.ts). */
  readonly #freshness: FreshnessRule;

  constructor(
    upstream: CalendarProvider,
    format: MirrorFormat,
    connection: MirrorConnection,
    deps: MirrorReadDeps,
  ) {
    this.#upstream = upstream;
    this.#format = format;
    this.#connection = connection;
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
    let batch = MirroredCalendarProvider.#batches.get(deps.mirror);
    if (batch === undefined) {
      batch = new MirrorBatches(deps.mirror);
      MirroredCalendarProvider.#batches.set(deps.mirror, batch);
    }
    this.#batch = batch;
    this.#freshness = new FreshnessRule(connection, deps, batch);
  }

  /** Imports find events by UID at the upstream (absent where the upstream cannot). */
  get findByICalUIDs():
    | ((calendar: CalendarRef, uids: readonly string[]) => Promise<Map<string, string>>)
    | undefined {
    const upstream = this.#upstream;
    const find = upstream.findByICalUIDs;
    return find === undefined ? undefined : (calendar, uids) => find.call(upstream, calendar, uids);
  }

  /** Occurrence ids of the upstream's own, where it has them (see CalendarProvider.occurrenceId). */
  get occurrenceId():
    | ((calendar: CalendarRef, masterId: string, key: string) => Promise<string | undefined>)
    | undefined {
    const upstream = this.#upstream;
    const find = upstream.occurrenceId;
    return find === undefined
      ? undefined
      : (calendar, masterId, key) => find.call(upstream, calendar, masterId, key);
  }

  /** The upstream's kind: a mirrored calendar is still its provider's. */
  get kind(): CalendarProvider['kind'] {
    return this.#upstream.kind;
  }

  async listEvents(calendar: CalendarRef, query: ListEventsQuery, signal?: AbortSignal): Promise<EventPage> {
    const mirrorToken = query.pageToken === undefined || query.pageToken.startsWith(PAGE_TOKEN_PREFIX);
    if (query.fresh === true || !mirrorToken) {
      return this.#upstream.listEvents(calendar, query, signal);
    }
    if (query.orderBy === 'startTime' && !query.singleEvents) {
      throw new CalgateError('invalid_argument', "orderBy 'startTime' is only available with singleEvents.");
    }
    this.#deps.touch(calendar.id);
    // With the version when announcements vouch for it: rows read at it are kept (MirrorBatches).
    const fresh = await this.#freshness.check(calendar, 'if-known');
    if (!fresh.ok) {
      return this.#fallback(calendar, query, fresh.reason, signal);
    }
    const timeMin = parseBound(query.timeMin, 'timeMin')?.getTime();
    const timeMax = parseBound(query.timeMax, 'timeMax')?.getTime();
    if (this.#format.covers !== undefined && !this.#format.covers(timeMin, timeMax, this.#now())) {
      return this.#fallback(calendar, query, 'window outside what the mirror keeps', signal);
    }
    const offset = query.pageToken === undefined ? 0 : decodeToken(query.pageToken);
    const wanted = offset + query.maxResults + 1;
    const text = query.query === undefined ? {} : { query: query.query, withExceptions: true };
    // First-rows reads take the window as it is (the repository allows all-day rows their
    // slack); whole-window reads take it widened by that slack.
    const exact: MirrorRangeQuery = {
      ...(timeMin === undefined ? {} : { timeMin: new Date(timeMin) }),
      ...(timeMax === undefined ? {} : { timeMax: new Date(timeMax) }),
      ...text,
      tenantId: this.#connection.tenantId,
    };
    const window: MirrorRangeQuery = {
      ...(timeMin === undefined ? {} : { timeMin: new Date(timeMin - ALL_DAY_SLACK_MS) }),
      ...(timeMax === undefined ? {} : { timeMax: new Date(timeMax + ALL_DAY_SLACK_MS) }),
      ...text,
    };
    const options = {
      timeMin,
      timeMax,
      singleEvents: query.singleEvents,
      showDeleted: query.showDeleted ?? false,
      instanceLimit: wanted,
    };
    let read: FirstEvents | null;
    if (query.singleEvents && query.orderBy !== 'updated') {
      read = await this.#firstEvents(calendar, exact, options, wanted, query.elastic === true, fresh.version);
    } else {
      const rows = await this.#batch.rows(calendar.id, { ...window, limit: READ_ROWS }, fresh.version);
      read =
        rows.length >= READ_ROWS ? null : { events: listingEvents(rows, calendar, options, this.#format) };
    }
    if (read === null) {
      return this.#fallback(calendar, query, 'window too large for one mirror read', signal);
    }
    const { events, completeBefore } = read;
    sortEvents(events, query.orderBy);
    const page: EventPage = {
      items: events.slice(offset, offset + query.maxResults),
      syncedAt: new Date(fresh.syncedAt).toISOString(),
    };
    if (offset + query.maxResults < events.length) {
      page.nextPageToken = `${PAGE_TOKEN_PREFIX}${offset + query.maxResults}`;
    } else if (completeBefore !== undefined) {
      // A short (or empty) page of a merged read: complete up to completeBefore, more may follow.
      page.nextPageToken = `${PAGE_TOKEN_PREFIX}${Math.max(offset, events.length)}`;
      page.completeBefore = completeBefore;
    }
    return page;
  }

  pageTokenAt(pageToken: string | undefined, index: number): string | undefined {
    if (pageToken !== undefined && !pageToken.startsWith(PAGE_TOKEN_PREFIX)) {
      return undefined; // the upstream's token: the upstream answered that listing
    }
    return `${PAGE_TOKEN_PREFIX}${(pageToken === undefined ? 0 : decodeToken(pageToken)) + index}`;
  }

  /**
   * The first `wanted` events of a listing in start order, reading only as many rows as that
   * takes: the rows come in start order, so every event starting before the last row read is
   * known (sort keys of all-day events are their UTC midnights, as start_at stores them). Reads
   * four times more when instances and cut-offs leave too few; null when even READ_ROWS do not.
   *
   * When the rows were read together with other calendars' for a merge that takes elastic
   * pages, the known events (possibly none) are returned with `completeBefore`: the merge needs
   * this calendar's events only up to where all the calendars together are known, and reads its
   * next page (not elastic then) only if it gets that far.
   */
  async #firstEvents(
    calendar: CalendarRef,
    window: MirrorRangeQuery,
    options: ListingOptions,
    wanted: number,
    elastic: boolean,
    version: string | undefined,
  ): Promise<FirstEvents | null> {
    // A few rows more than wanted: the last row read only bounds what is known (rows starting
    // at the same instant may follow it), so `wanted` rows alone would always need a second read.
    for (let first = wanted + FIRST_SLACK; ; first = Math.min(first * 4, READ_ROWS)) {
      const { rows, throughMs, shared } = await this.#batch.firstRows(
        calendar.id,
        { ...window, first },
        version,
      );
      if (throughMs === null) {
        return { events: listingEvents(rows, calendar, options, this.#format) };
      }
      // Series are expanded only as far as the rows are known (all-day instances sort by their
      // UTC midnight, up to a day from their instant in the calendar's zone).
      const expandUntil = throughMs + ALL_DAY_SLACK_MS;
      const events = listingEvents(rows, calendar, { ...options, expandUntil }, this.#format);
      const known = events.filter((event) => startKey(event) < throughMs);
      if (known.length >= wanted) {
        return { events: known };
      }
      if (shared && elastic) {
        return { events: known, completeBefore: throughMs };
      }
      if (first >= READ_ROWS) {
        return null;
      }
    }
  }

  async #fallback(
    calendar: CalendarRef,
    query: ListEventsQuery,
    reason: string,
    signal: AbortSignal | undefined,
  ): Promise<EventPage> {
    this.#deps.onFallback?.(calendar.id, reason);
    const { pageToken: _mirrorToken, ...upstreamQuery } = query;
    if (query.pageToken !== undefined) {
      // A mirror page token means nothing to the upstream: the listing starts over there.
      throw new CalgateError(
        'invalid_argument',
        `The page token has expired (the calendar is being read from ${this.#deps.upstreamName ?? 'its provider'} again); list from the first page.`,
      );
    }
    return this.#upstream.listEvents(calendar, upstreamQuery, signal);
  }

  getEvent(calendar: CalendarRef, eventId: string, signal?: AbortSignal): Promise<CalendarEvent> {
    return this.#upstream.getEvent(calendar, eventId, signal);
  }

  async insertEvent(
    calendar: CalendarRef,
    input: EventInput,
    options?: WriteOptions,
  ): Promise<CalendarEvent> {
    const event = await this.#upstream.insertEvent(calendar, input, options);
    await this.#keep(calendar, event);
    return event;
  }

  async quickAdd(calendar: CalendarRef, text: string, options?: WriteOptions): Promise<CalendarEvent> {
    const event = await this.#upstream.quickAdd(calendar, text, options);
    await this.#keep(calendar, event);
    return event;
  }

  async patchEvent(
    calendar: CalendarRef,
    eventId: string,
    patch: EventPatch,
    options: WriteOptions = {},
  ): Promise<CalendarEvent> {
    const upstreamOptions = await this.#upstreamOptions(calendar, eventId, options);
    const event = await this.#upstream.patchEvent(calendar, eventId, patch, upstreamOptions);
    await this.#keep(calendar, event);
    return event;
  }

  async deleteEvent(calendar: CalendarRef, eventId: string, options: WriteOptions = {}): Promise<void> {
    const upstreamOptions = await this.#upstreamOptions(calendar, eventId, options);
    await this.#upstream.deleteEvent(calendar, eventId, upstreamOptions);
    await this.#writeThrough(calendar, [this.#format.deletion(calendar, eventId, this.#now())]);
  }

  /** The write's options as the upstream checks them (see upstreamWriteOptions). */
  #upstreamOptions(calendar: CalendarRef, eventId: string, options: WriteOptions): Promise<WriteOptions> {
    return upstreamWriteOptions(this.#deps.mirror, this.#upstream, calendar, eventId, options);
  }

  /** Writes an event the upstream answered into the mirror, or syncs before the next read. */
  async #keep(calendar: CalendarRef, event: CalendarEvent): Promise<void> {
    if (this.#format.keeps !== undefined && !this.#format.keeps(event)) {
      this.#freshness.markDirty(calendar.id);
      return;
    }
    await this.#writeThrough(calendar, [this.#format.toMirrorEvent(event)]);
  }

  async #writeThrough(calendar: CalendarRef, events: MirrorEventInput[]): Promise<void> {
    try {
      if (await this.#deps.mirror.applyWrite(calendar.id, this.#connection.tenantId, events)) {
        // The next read here sees the write at once, before its announcement comes back.
        this.#freshness.written(calendar.id);
      } else {
        // A full sync is running (or none has run): it may have read the calendar before this
        // write, so the first read after it ends syncs once more.
        this.#freshness.markDirty(calendar.id);
      }
    } catch (error) {
      // The write is done upstream; the mirror catches up by syncing before the next read.
      this.#freshness.markDirty(calendar.id);
      this.#deps.onFallback?.(calendar.id, 'write-through failed', error);
    }
  }

  /**
   * Busy time from the mirror under the listings' freshness rule (each answer says which sync it
   * reflects); calendars the mirror cannot answer (not synced yet, the sync failed, too many rows
   * in the window) and `fresh` queries ask the upstream, in one query.
   */
  async freeBusy(
    calendars: readonly CalendarRef[],
    timeMin: string,
    timeMax: string,
    signal?: AbortSignal,
    options: FreeBusyOptions = {},
  ): Promise<FreeBusyResult[]> {
    const { fresh: _fresh, ...upstreamOptions } = options;
    if (options.fresh === true) {
      return this.#upstream.freeBusy(calendars, timeMin, timeMax, signal, upstreamOptions);
    }
    const window = freeBusyWindow(timeMin, timeMax);
    const answers = await Promise.all(
      calendars.map((calendar) => this.#mirrorFreeBusy(calendar, window, options.withEvents === true)),
    );
    const rest = calendars.filter((_calendar, i) => answers[i] === null);
    if (rest.length === 0) {
      return answers as FreeBusyResult[];
    }
    const upstream = await this.#upstream.freeBusy(rest, timeMin, timeMax, signal, upstreamOptions);
    const byId = new Map(upstream.map((result) => [result.calendarId, result]));
    return calendars.map(
      (calendar, i) =>
        answers[i] ??
        byId.get(calendar.id) ?? {
          calendarId: calendar.id,
          error: { code: 'upstream_unavailable', message: 'No free/busy answer for this calendar.' },
        },
    );
  }

  /** One calendar's free/busy from the mirror, or null when the upstream must answer. */
  async #mirrorFreeBusy(
    calendar: CalendarRef,
    window: Window,
    withEvents: boolean,
  ): Promise<FreeBusyResult | null> {
    this.#deps.touch(calendar.id);
    if (this.#format.covers !== undefined && !this.#format.covers(window.from, window.to, this.#now())) {
      this.#deps.onFallback?.(calendar.id, 'window outside what the mirror keeps');
      return null;
    }
    const fresh = await this.#freshness.check(calendar, 'always');
    if (!fresh.ok) {
      this.#deps.onFallback?.(calendar.id, fresh.reason);
      return null;
    }
    const answerOf = (answer: CachedBusy): FreeBusyResult => ({
      calendarId: calendar.id,
      busy: answer.busy,
      intervals: answer.intervals,
      syncedAt: new Date(fresh.syncedAt).toISOString(),
      ...(withEvents ? { events: answer.events } : {}),
    });
    const key =
      fresh.version === undefined
        ? undefined
        : BusyCache.key(calendar.id, fresh.version, calendar.timeZone, window.from, window.to);
    const cached = key === undefined ? undefined : busyCache.get(key);
    if (cached !== undefined) {
      return answerOf(cached);
    }
    const rows = await this.#batch.rows(calendar.id, {
      timeMin: new Date(window.from - ALL_DAY_SLACK_MS),
      timeMax: new Date(window.to + ALL_DAY_SLACK_MS),
      limit: READ_ROWS,
    });
    if (rows.length >= READ_ROWS) {
      this.#deps.onFallback?.(calendar.id, 'window too large for one mirror read');
      return null;
    }
    const answer = mirrorBusy(rows, calendar, window, this.#format);
    if (answer === null) {
      this.#deps.onFallback?.(calendar.id, 'events whose details are hidden');
      return null;
    }
    // Frozen: every later answer at this version shares them.
    const made: CachedBusy = Object.freeze({
      busy: Object.freeze(answer.busy.map((block) => Object.freeze(block))),
      intervals: Object.freeze(answer.intervals.map((interval) => Object.freeze(interval))),
      events: Object.freeze(answer.events.map((event) => Object.freeze(event))),
    });
    if (key !== undefined) {
      // Rows read after the version was: at least as new as it (a later version misses the key).
      busyCache.set(key, made);
    }
    return answerOf(made);
  }

  colors(signal?: AbortSignal): Promise<ColorPalette> {
    return this.#upstream.colors(signal);
  }

  createCalendar(input: NewCalendar) {
    if (this.#upstream.createCalendar === undefined) {
      throw new CalgateError('invalid_argument', 'This account cannot create calendars.');
    }
    return this.#upstream.createCalendar(input);
  }
}

/** Free/busy answers by calendar version, shared by every mirrored provider of this process. */
const busyCache = new BusyCache();

function decodeToken(token: string): number {
  const offset = Number(token.slice(PAGE_TOKEN_PREFIX.length));
  if (!Number.isSafeInteger(offset) || offset < 0) {
    throw new CalgateError(
      'invalid_argument',
      'The page token is not valid; pass nextPageToken as it was returned.',
    );
  }
  return offset;
}
