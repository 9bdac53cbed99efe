/**
 * Listings in start order read only the rows they need (the first events by start, plus series
 * masters and moved occurrences). Checked against reading the whole window, on a real Postgres
 * mirror holding single, all-day and recurring events in a zone 14 hours ahead of UTC and one
 * behind it, with and without search text, page by page.
 */
import { CalgateError } from '@calgate/core';
import { type MirrorEventInput, MirrorRepository } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GOOGLE_MIRROR_FORMAT, toMirrorEvent } from '../src/google/sync.ts';
import { MirroredCalendarProvider } from '../src/index.ts';
import { listingEvents, sortEvents } from '../src/mirror/listing.ts';
import type { CalendarEvent, CalendarProvider, CalendarRef } from '../src/types.ts';
import { resources } from './mirror-resources.ts';

const TENANT = 'tnt_listing';
const neverUpstream = new Proxy({} as CalendarProvider, {
  get() {
    throw new Error('the listing went to Google; it should come from the mirror');
  },
});

describe('mirror listings read in start order', () => {
  let db: TestDatabase;
  let mirror: MirrorRepository;
  let provider: MirroredCalendarProvider;
  const calendars: CalendarRef[] = [
    { id: 'cal_kiritimati', externalId: 'k@group.calendar.google.com', timeZone: 'Pacific/Kiritimati' },
    { id: 'cal_azores', externalId: 'a@group.calendar.google.com', timeZone: 'Atlantic/Azores' },
  ];

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.tenant.create({ data: { id: TENANT, name: 'Listing' } });
    await db.prisma.connection.create({
      data: {
        id: 'con_listing',
        tenantId: TENANT,
        provider: 'google',
        accountEmail: 'ann@example.com',
        auth: 'oauth',
      },
    });
    mirror = new MirrorRepository(db);
    for (const [c, calendar] of calendars.entries()) {
      await db.prisma.calendar.create({
        data: {
          id: calendar.id,
          tenantId: TENANT,
          connectionId: 'con_listing',
          externalId: calendar.externalId,
          summary: calendar.id,
          timeZone: calendar.timeZone,
        },
      });
      const events: MirrorEventInput[] = resources(c + 1).map((raw) => toMirrorEvent(raw));
      await mirror.resetForFullSync(calendar.id, TENANT);
      await mirror.applyPage(calendar.id, TENANT, events, { nextSyncToken: 'listing' });
    }
    provider = new MirroredCalendarProvider(
      neverUpstream,
      GOOGLE_MIRROR_FORMAT,
      { tenantId: TENANT, connectionId: 'con_listing', auth: 'oauth' },
      {
        mirror,
        maxStalenessMs: 3_600_000,
        sync: () => Promise.reject(new CalgateError('upstream_unavailable', 'no syncs here')),
        requestSync: async () => {},
        touch: () => {},
      },
    );
  }, 60_000);

  it('knows when each finite series ends', async () => {
    const { rows } = await db.pool.query(
      `SELECT count(*)::int AS n FROM mirror_events WHERE cardinality(recurrence) > 0 AND series_end IS NOT NULL`,
    );
    expect(rows[0].n).toBe(24);
  });

  afterAll(async () => {
    await db?.close();
  });

  /**
   * Everything up to the window's end read and listed at once (no series skipped for having
   * ended, nothing cut by start): what the first-rows reading must agree with.
   */
  async function everything(
    calendar: CalendarRef,
    window: { timeMin?: string; timeMax?: string; query?: string },
  ) {
    const min = window.timeMin === undefined ? undefined : Date.parse(window.timeMin);
    const max = window.timeMax === undefined ? undefined : Date.parse(window.timeMax);
    const rows = await mirror.readResources([calendar.id], {
      ...(max === undefined ? {} : { timeMax: new Date(max + 14 * 3_600_000) }),
      ...(window.query === undefined ? {} : { query: window.query, withExceptions: true }),
      limit: 2500,
    });
    const events = listingEvents(
      rows.get(calendar.id) ?? [],
      calendar,
      {
        timeMin: min,
        timeMax: max,
        singleEvents: true,
        showDeleted: false,
        instanceLimit: 10_000,
      },
      GOOGLE_MIRROR_FORMAT,
    );
    sortEvents(events, 'startTime');
    return events.map((event) => event.id);
  }

  async function paged(
    calendar: CalendarRef,
    window: { timeMin?: string; timeMax?: string; query?: string },
    maxResults: number,
  ) {
    const ids: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await provider.listEvents(calendar, {
        ...window,
        singleEvents: true,
        orderBy: 'startTime',
        maxResults,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      expect(page.syncedAt).toBeDefined();
      ids.push(...page.items.map((event: CalendarEvent) => event.id));
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return ids;
  }

  const windows = [
    { name: 'the year', timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' },
    { name: 'a month', timeMin: '2026-06-01T00:00:00Z', timeMax: '2026-07-01T00:00:00Z' },
    { name: 'a day edge', timeMin: '2026-03-10T10:00:00Z', timeMax: '2026-03-12T10:00:00Z' },
    { name: 'open end', timeMin: '2026-11-15T00:00:00Z' },
  ];
  for (const calendar of calendars) {
    for (const window of windows) {
      for (const query of [undefined, 'budget', 'cafe', 'weekly', 'zz-no-match']) {
        it(`${calendar.timeZone}, ${window.name}${query === undefined ? '' : `, '${query}'`}: pages of 7 and 100 list exactly what the whole window holds`, async () => {
          const { name: _name, ...bounds } = window;
          const args = { ...bounds, ...(query === undefined ? {} : { query }) };
          const expected = await everything(calendar, args);
          if (query !== 'zz-no-match' && window.name === 'the year') {
            expect(expected.length).toBeGreaterThan(0);
          }
          expect(await paged(calendar, args, 7)).toEqual(expected);
          expect(await paged(calendar, args, 100)).toEqual(expected);
          // The first page alone, as search tools ask for it.
          const first = await provider.listEvents(calendar, {
            ...args,
            singleEvents: true,
            orderBy: 'startTime',
            maxResults: 25,
          });
          expect(first.items.map((event) => event.id)).toEqual(expected.slice(0, 25));
        });
      }
    }
  }
});
