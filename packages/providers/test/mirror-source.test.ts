/**
 * The mirror driven by a sync source that is not Google's: a source over a Calgate calendar
 * (through the CalendarProvider contract only, with the neutral CALENDAR_EVENT_FORMAT) feeds
 * syncMirror, and MirroredCalendarProvider answers from what it stored exactly as the calendar
 * itself answers. Full syncs (paged, and over a window), incremental syncs with changes and
 * removals, an expired cursor starting over, write-through and failures recorded, on a real
 * Postgres mirror.
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import { LocalEventStore, MirrorRepository } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CALENDAR_EVENT_FORMAT,
  type CalendarEvent,
  type CalendarProvider,
  type CalendarRef,
  type EventInput,
  type ListEventsQuery,
  LocalCalendarProvider,
  MirroredCalendarProvider,
  type SyncCalendar,
  type SyncSource,
  type SyncStep,
  type SyncWindow,
  syncMirror,
} from '../src/index.ts';
import { type LocalFixture, localFixture } from './local-fixtures.ts';

const TENANT = 'tnt_x';
const ZONE = 'Europe/Berlin';
/** Sync runs are compared against `updated` stamps written by Postgres' clock: a margin for that. */
const MARGIN_MS = 200;
const settle = () => new Promise((resolve) => setTimeout(resolve, MARGIN_MS + 50));

interface LocalSourceOptions {
  pageSize: number;
  /** Cursors made before this instant are refused as expired (a CalDAV sync token gone stale). */
  expiredBefore?: () => number;
  /** Calls to the upstream, for the tests to count. */
  calls?: string[];
  /** Report deleted single events by id alone, as Graph's `@removed` entries do. */
  removalsById?: boolean;
}

/**
 * A sync source over any CalendarProvider that can list masters, exceptions and cancelled events
 * (singleEvents=false, showDeleted): a full sync lists them page by page; an incremental one
 * lists again and keeps what was updated since the cursor (the instant the last sync started).
 * Page tokens carry the sync's start and the upstream's page token.
 */
function providerSource(upstream: CalendarProvider, options: LocalSourceOptions): SyncSource {
  const refOf = (calendar: SyncCalendar): CalendarRef => ({
    id: calendar.externalId,
    externalId: calendar.externalId,
    timeZone: ZONE,
  });
  const list = async (
    calendar: SyncCalendar,
    page: { since: number | null; pageToken: string | null; window?: SyncWindow | undefined },
    signal?: AbortSignal,
  ): Promise<SyncStep> => {
    const [startedText, upstreamToken] = page.pageToken === null ? [] : page.pageToken.split(' ');
    const startedAt = startedText === undefined ? Date.now() - MARGIN_MS : Number(startedText);
    const query: ListEventsQuery = {
      singleEvents: false,
      showDeleted: true,
      maxResults: options.pageSize,
      ...(upstreamToken === undefined ? {} : { pageToken: upstreamToken }),
      ...(page.window?.timeMin === undefined ? {} : { timeMin: page.window.timeMin.toISOString() }),
      ...(page.window?.timeMax === undefined ? {} : { timeMax: page.window.timeMax.toISOString() }),
    };
    const listed = await upstream.listEvents(refOf(calendar), query, signal);
    const since = page.since;
    const items =
      since === null
        ? listed.items
        : listed.items.filter((event) => Date.parse(event.updated ?? '') >= since);
    const removed = (event: CalendarEvent) =>
      options.removalsById === true && event.status === 'cancelled' && event.recurringEventId === undefined;
    return {
      kind: 'batch',
      upserts: items.filter((event) => !removed(event)).map(CALENDAR_EVENT_FORMAT.toMirrorEvent),
      removals: items.filter(removed).map((event) => event.id),
      received: items.length,
      next:
        listed.nextPageToken === undefined
          ? { cursor: String(startedAt) }
          : { pageToken: `${startedAt} ${listed.nextPageToken}` },
    };
  };
  return {
    provider: 'local',
    format: CALENDAR_EVENT_FORMAT,
    full: (calendar, page, signal) => {
      options.calls?.push('full');
      return list(calendar, { since: null, pageToken: page.pageToken, window: page.window }, signal);
    },
    changes: async (calendar, page, signal) => {
      options.calls?.push('changes');
      const since = Number(page.cursor);
      if (since < (options.expiredBefore?.() ?? Number.NEGATIVE_INFINITY)) {
        return { kind: 'expired' };
      }
      return list(calendar, { since, pageToken: page.pageToken }, signal);
    },
    failure: (error, calendar) =>
      isCalgateError(error) && error.code === 'not_found'
        ? {
            message: `listing ${calendar.externalId}: ${error.message}`,
            error: new CalgateError('not_found', error.message),
          }
        : null,
  };
}

let fixture: LocalFixture;
let mirror: MirrorRepository;
let local: LocalCalendarProvider;

beforeAll(async () => {
  fixture = await localFixture();
  mirror = new MirrorRepository(fixture.db);
  local = new LocalCalendarProvider(new LocalEventStore(fixture.db));
}, 120_000);

afterAll(async () => {
  await fixture?.db.close();
});

const timed = (summary: string, start: string, end: string, extra: Partial<EventInput> = {}): EventInput => ({
  summary,
  start: { dateTime: start, timeZone: ZONE },
  end: { dateTime: end, timeZone: ZONE },
  ...extra,
});

/** A calendar with a weekly series (one occurrence moved, one cancelled), singles and an all-day event. */
async function seeded(): Promise<{ calendar: CalendarRef; series: string; lunch: string; review: string }> {
  const calendar = await fixture.newCalendar(ZONE);
  const weekly = await local.insertEvent(
    calendar,
    timed('Standup', '2026-03-02T09:00:00', '2026-03-02T09:15:00', {
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=8'],
    }),
  );
  await local.patchEvent(calendar, `${weekly.id}_20260309T080000Z`, {
    start: { dateTime: '2026-03-09T11:00:00', timeZone: ZONE },
    end: { dateTime: '2026-03-09T11:15:00', timeZone: ZONE },
  });
  await local.deleteEvent(calendar, `${weekly.id}_20260316T080000Z`);
  const lunch = await local.insertEvent(
    calendar,
    timed('Lunch', '2026-03-04T12:00:00', '2026-03-04T13:00:00'),
  );
  const review = await local.insertEvent(
    calendar,
    timed('Review', '2026-03-05T15:00:00', '2026-03-05T16:00:00', { location: 'Room 4' }),
  );
  await local.insertEvent(calendar, {
    summary: 'Offsite',
    start: { date: '2026-03-06' },
    end: { date: '2026-03-07' },
  });
  await local.insertEvent(calendar, timed('Late one', '2026-09-01T10:00:00', '2026-09-01T11:00:00'));
  return { calendar, series: weekly.id, lunch: lunch.id, review: review.id };
}

const sync = (calendar: CalendarRef, source: SyncSource, window?: SyncWindow) =>
  syncMirror({
    source,
    calendarId: calendar.id,
    tenantId: TENANT,
    externalId: calendar.externalId,
    store: mirror,
    ...(window === undefined ? {} : { window }),
  });

const LISTING: ListEventsQuery = {
  timeMin: '2026-03-01T00:00:00Z',
  timeMax: '2026-05-01T00:00:00Z',
  singleEvents: true,
  orderBy: 'startTime',
  maxResults: 50,
};

const shape = (items: readonly { id: string; summary?: string; start: object; status: string }[]) =>
  items.map((event) => ({ id: event.id, summary: event.summary, start: event.start, status: event.status }));

function mirrored(source: SyncSource, requested: string[] = []): MirroredCalendarProvider {
  return new MirroredCalendarProvider(
    local,
    source.format,
    { tenantId: TENANT, connectionId: 'con_x', auth: 'oauth' },
    {
      mirror,
      maxStalenessMs: 3_600_000,
      sync: async (_connection, calendar) => {
        await sync(calendar, source);
      },
      requestSync: async (_tenant, calendarId) => {
        requested.push(calendarId);
      },
      touch: () => {},
    },
  );
}

describe('a sync source that is not Google drives the mirror', () => {
  it('a paged full sync stores what the calendar holds, and the mirror then answers like the calendar', async () => {
    const { calendar } = await seeded();
    const calls: string[] = [];
    const source = providerSource(local, { pageSize: 2, calls });
    const requested: string[] = [];
    const provider = mirrored(source, requested);

    // Never synced: the calendar answers and a first sync is asked for.
    const before = await provider.listEvents(calendar, LISTING);
    expect(before.syncedAt).toBeUndefined();
    expect(requested).toEqual([calendar.id]);

    const result = await sync(calendar, source);
    expect(result).toMatchObject({ mode: 'full', restarted: false, resumed: false, pages: 4 });
    // The master, its moved and its cancelled occurrence, and four single events.
    expect(result.received).toBe(7);
    expect(calls).toEqual(['full', 'full', 'full', 'full']);
    expect((await mirror.syncState(calendar.id))?.syncToken).toMatch(/^\d+$/);

    const fromMirror = await provider.listEvents(calendar, LISTING);
    expect(fromMirror.syncedAt).toBeDefined();
    const direct = await local.listEvents(calendar, LISTING);
    expect(shape(fromMirror.items)).toEqual(shape(direct.items));
    // 8 occurrences less the cancelled one, three singles in the window (the all-day one included).
    expect(fromMirror.items).toHaveLength(10);
    expect(fromMirror.items.map((event) => event.summary)).toContain('Offsite');
    // Text search reads the neutral rows' documents, with the calendar's own meaning.
    const searched = await provider.listEvents(calendar, { ...LISTING, query: 'room' });
    expect(searched.syncedAt).toBeDefined();
    expect(shape(searched.items)).toEqual(
      shape((await local.listEvents(calendar, { ...LISTING, query: 'room' })).items),
    );
    expect(searched.items.map((event) => event.summary)).toEqual(['Review']);

    // Masters and exceptions listed as they are, page by page.
    const masters = {
      ...LISTING,
      singleEvents: false,
      showDeleted: true,
      orderBy: 'updated' as const,
      maxResults: 3,
    };
    const first = await provider.listEvents(calendar, masters);
    const second = await provider.listEvents(calendar, {
      ...masters,
      pageToken: first.nextPageToken as string,
    });
    const all = await local.listEvents(calendar, { ...masters, maxResults: 50 });
    expect([...first.items, ...second.items].map((event) => event.id).sort()).toEqual(
      all.items.map((event) => event.id).sort(),
    );
  });

  it.each([
    ['as cancelled events', false],
    ['by id alone', true],
  ])('an incremental sync brings changes and removals (%s), and only them', async (_how, removalsById) => {
    const { calendar, lunch, review, series } = await seeded();
    const source = providerSource(local, { pageSize: 50, removalsById });
    await settle();
    await sync(calendar, source);
    await settle();

    await local.patchEvent(calendar, review, { summary: 'Review (moved room)', location: 'Room 9' });
    await local.deleteEvent(calendar, lunch);
    await local.deleteEvent(calendar, `${series}_20260323T080000Z`);
    const result = await sync(calendar, source);
    expect(result).toMatchObject({ mode: 'incremental', restarted: false });
    // The review, the lunch (now cancelled) and the new cancelled occurrence; nothing else.
    expect(result.received).toBe(3);
    expect(result.deleted).toBe(2);

    const provider = mirrored(source);
    const fromMirror = await provider.listEvents(calendar, LISTING);
    expect(shape(fromMirror.items)).toEqual(shape((await local.listEvents(calendar, LISTING)).items));
    const summaries = fromMirror.items.map((event) => event.summary);
    expect(summaries).toContain('Review (moved room)');
    expect(summaries).not.toContain('Lunch');
    expect(fromMirror.items.map((event) => event.id)).not.toContain(`${series}_20260323T080000Z`);
    expect((await mirror.read(calendar.id)).map((row) => row.eventId)).not.toContain(lunch);
  });

  it('an expired cursor starts a full sync over, which sweeps what the upstream no longer has', async () => {
    const { calendar, lunch } = await seeded();
    let expiredBefore = Number.NEGATIVE_INFINITY;
    const calls: string[] = [];
    const source = providerSource(local, { pageSize: 50, expiredBefore: () => expiredBefore, calls });
    await sync(calendar, source);
    // The lunch is deleted for good upstream (no cancelled copy left for a sync to see) …
    await fixture.db.pool.query('DELETE FROM local_events WHERE calendar_id = $1 AND id = $2', [
      calendar.id,
      lunch,
    ]);
    // … and the cursor has gone stale.
    expiredBefore = Date.now() + 60_000;
    const generation = (await mirror.syncState(calendar.id))?.generation ?? 0;
    const result = await sync(calendar, source);
    expect(result).toMatchObject({ mode: 'full', restarted: true, resumed: false, swept: 1 });
    expect(calls.slice(1)).toEqual(['changes', 'full']);
    expect((await mirror.syncState(calendar.id))?.generation).toBe(generation + 1);
    expect((await mirror.read(calendar.id)).map((row) => row.eventId)).not.toContain(lunch);
  });

  it('a full sync over a window stores only that window', async () => {
    const calendar = await fixture.newCalendar(ZONE);
    await local.insertEvent(calendar, timed('March', '2026-03-10T10:00:00', '2026-03-10T11:00:00'));
    await local.insertEvent(calendar, timed('September', '2026-09-10T10:00:00', '2026-09-10T11:00:00'));
    await sync(calendar, providerSource(local, { pageSize: 50 }), {
      timeMin: new Date('2026-03-01T00:00:00Z'),
      timeMax: new Date('2026-04-01T00:00:00Z'),
    });
    expect((await mirror.read(calendar.id)).map((row) => row.summary)).toEqual(['March']);
  });

  it('writes go to the upstream and into the mirror at once, in the neutral format', async () => {
    const { calendar, series } = await seeded();
    const source = providerSource(local, { pageSize: 50 });
    await sync(calendar, source);
    const provider = mirrored(source);

    const created = await provider.insertEvent(
      calendar,
      timed('Added', '2026-03-12T14:00:00', '2026-03-12T15:00:00'),
    );
    expect((await local.getEvent(calendar, created.id)).summary).toBe('Added');
    const row = (await mirror.resources(calendar.id, [created.id]))[0];
    expect(row?.raw).toMatchObject({ id: created.id, summary: 'Added', etag: created.etag });

    // Deleting one occurrence through the mirror hides it there before any sync.
    await provider.deleteEvent(calendar, `${series}_20260330T070000Z`);
    const listed = await provider.listEvents(calendar, LISTING);
    const ids = listed.items.map((event) => event.id);
    expect(ids).toContain(created.id);
    expect(ids).not.toContain(`${series}_20260330T070000Z`);
    expect(shape(listed.items)).toEqual(shape((await local.listEvents(calendar, LISTING)).items));
  });

  it("a failure the source recognises is recorded on the calendar's sync state and thrown", async () => {
    const calendar = await fixture.newCalendar(ZONE);
    const missing = {
      listEvents: () => Promise.reject(new CalgateError('not_found', 'The calendar was removed upstream.')),
    } as unknown as CalendarProvider;
    await expect(sync(calendar, providerSource(missing, { pageSize: 50 }))).rejects.toMatchObject({
      code: 'not_found',
    });
    const state = await mirror.syncState(calendar.id);
    expect(state).toMatchObject({ status: 'error', syncToken: null });
    expect(state?.error).toBe(`listing ${calendar.externalId}: The calendar was removed upstream.`);
  });
});

describe('free/busy from the mirror of a calendar that is not Google', () => {
  const MARCH = ['2026-03-01T00:00:00Z', '2026-04-01T00:00:00Z'] as const;

  it('answers as the calendar does, says its sync, names the busy events, and leaves fresh reads to the calendar', async () => {
    const { calendar, lunch } = await seeded();
    // Free time and a declined invitation make nobody busy; a cancelled single is absent.
    await local.insertEvent(
      calendar,
      timed('Focus', '2026-03-10T09:00:00', '2026-03-10T12:00:00', { transparency: 'transparent' }),
    );
    await local.insertEvent(
      calendar,
      timed('Declined', '2026-03-11T09:00:00', '2026-03-11T10:00:00', {
        attendees: [{ email: 'me@example.com', self: true, responseStatus: 'declined' }],
      }),
    );
    const cancelled = await local.insertEvent(
      calendar,
      timed('Gone', '2026-03-12T09:00:00', '2026-03-12T10:00:00'),
    );
    await local.deleteEvent(calendar, cancelled.id);
    const source = providerSource(local, { pageSize: 50 });
    const requested: string[] = [];
    const provider = mirrored(source, requested);

    // Not synced yet: the calendar answers (no syncedAt) and the first sync is asked for.
    const before = await provider.freeBusy([calendar], ...MARCH);
    expect(before[0]?.syncedAt).toBeUndefined();
    expect(requested).toEqual([calendar.id]);

    await sync(calendar, source);
    const [answer] = await provider.freeBusy([calendar], ...MARCH, undefined, { withEvents: true });
    const [direct] = await local.freeBusy([calendar], ...MARCH, undefined, { withEvents: true });
    expect(answer?.syncedAt).toBeDefined();
    expect(answer?.busy).toEqual(direct?.busy);
    expect(answer?.events).toEqual(direct?.events);
    // The series' March weeks (five, one moved, one cancelled), lunch, review and the offsite.
    expect(answer?.events?.map((event) => event.summary)).toEqual([
      'Standup',
      'Lunch',
      'Review',
      'Offsite',
      'Standup',
      'Standup',
      'Standup',
    ]);
    // The all-day event covers its day in the calendar's zone (Berlin, UTC+1 in March).
    expect(answer?.busy).toContainEqual({ start: '2026-03-05T23:00:00Z', end: '2026-03-06T23:00:00Z' });
    // Without withEvents no events are carried.
    expect((await provider.freeBusy([calendar], ...MARCH))[0]?.events).toBeUndefined();

    // A change upstream the mirror has not seen (an hour's staleness allowed): the mirror still
    // shows the lunch; a fresh query (booking's) asks the calendar, which no longer has it.
    await local.deleteEvent(calendar, lunch);
    const lunchTime = { start: '2026-03-04T11:00:00Z', end: '2026-03-04T12:00:00Z' };
    expect((await provider.freeBusy([calendar], ...MARCH))[0]?.busy).toContainEqual(lunchTime);
    const fresh = (await provider.freeBusy([calendar], ...MARCH, undefined, { fresh: true }))[0];
    expect(fresh?.syncedAt).toBeUndefined();
    expect(fresh?.busy).not.toContainEqual(lunchTime);
  });

  it('leaves a window with events it holds only as times to the calendar', async () => {
    const calendar = await fixture.newCalendar(ZONE);
    await local.insertEvent(calendar, timed('Visible', '2026-03-02T09:00:00', '2026-03-02T10:00:00'));
    const source = providerSource(local, { pageSize: 50 });
    await sync(calendar, source);
    // An event mirrored with its times alone (a private event as a reader sees it): free or not,
    // only the calendar knows.
    await mirror.applyWrite(calendar.id, TENANT, [
      CALENDAR_EVENT_FORMAT.toMirrorEvent({
        id: 'hiddenevent1',
        status: 'confirmed',
        start: { dateTime: '2026-03-03T09:00:00+01:00' },
        end: { dateTime: '2026-03-03T10:00:00+01:00' },
      }),
    ]);
    const provider = mirrored(source);
    const [around] = await provider.freeBusy([calendar], '2026-03-03T00:00:00Z', '2026-03-04T00:00:00Z');
    expect(around?.syncedAt).toBeUndefined();
    expect(around?.busy).toEqual([]);
    const [elsewhere] = await provider.freeBusy([calendar], '2026-03-02T00:00:00Z', '2026-03-03T00:00:00Z');
    expect(elsewhere?.syncedAt).toBeDefined();
    expect(elsewhere?.busy).toEqual([{ start: '2026-03-02T08:00:00Z', end: '2026-03-02T09:00:00Z' }]);
  });
});
