/**
 * Listings across calendars read from the mirror: the calendars' first rows are read together
 * (one merged read), each calendar's page is complete only up to where all of them together are
 * known, and the merge reads a calendar's next page only when it gets there. Checked against
 * every calendar's whole window merged by hand, page by page, on a real Postgres mirror with
 * calendars in zones from UTC−12 to UTC+14, with and without search text.
 */
import { CalgateError } from '@calgate/core';
import {
  type CalendarEvent,
  type CalendarProvider,
  type CalendarRef,
  GOOGLE_MIRROR_FORMAT,
  MirroredCalendarProvider,
  toMirrorEvent,
} from '@calgate/providers';
import { MirrorRepository } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resources } from '../../providers/test/mirror-resources.ts';
import type { CalendarHandle, KeyCalendar } from '../src/access.ts';
import { mergeEvents } from '../src/merge.ts';

const TENANT = 'tnt_merge';
const ZONES = [
  'Pacific/Kiritimati',
  'Atlantic/Azores',
  'UTC',
  'Europe/Berlin',
  'Pacific/Honolulu',
  'Asia/Kolkata',
  'Etc/GMT+12',
];

const neverUpstream = new Proxy({} as CalendarProvider, {
  get() {
    throw new Error('the listing went to Google; it should come from the mirror');
  },
});

/** The merge's order: by start (all-day events at their date's UTC midnight), ties by calendar. */
const startKey = (event: CalendarEvent) =>
  Date.parse(event.start.dateTime ?? `${event.start.date}T00:00:00Z`);

describe('listings across mirrored calendars', () => {
  let db: TestDatabase;
  let mirror: MirrorRepository;
  let handles: CalendarHandle[];
  let firstReads = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    await db.prisma.tenant.create({ data: { id: TENANT, name: 'Merge' } });
    await db.prisma.connection.create({
      data: {
        id: 'con_merge',
        tenantId: TENANT,
        provider: 'google',
        accountEmail: 'ann@example.com',
        auth: 'oauth',
      },
    });
    mirror = new MirrorRepository(db);
    const counted = new Proxy(mirror, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver);
        if (name === 'readFirst') {
          return (...args: Parameters<MirrorRepository['readFirst']>) => {
            firstReads += 1;
            return target.readFirst(...args);
          };
        }
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const provider = new MirroredCalendarProvider(
      neverUpstream,
      GOOGLE_MIRROR_FORMAT,
      { tenantId: TENANT, connectionId: 'con_merge', auth: 'oauth' },
      {
        mirror: counted,
        maxStalenessMs: 3_600_000,
        sync: () => Promise.reject(new CalgateError('upstream_unavailable', 'no syncs here')),
        requestSync: async () => {},
        touch: () => {},
      },
    );
    handles = [];
    for (const [c, timeZone] of ZONES.entries()) {
      const id = `cal_merge${c}`;
      const externalId = `m${c}@group.calendar.google.com`;
      await db.prisma.calendar.create({
        data: { id, tenantId: TENANT, connectionId: 'con_merge', externalId, summary: id, timeZone },
      });
      await mirror.resetForFullSync(id, TENANT);
      await mirror.applyPage(
        id,
        TENANT,
        resources(c + 11).map((raw) => toMirrorEvent(raw)),
        {
          nextSyncToken: 'merge',
        },
      );
      const calendar: KeyCalendar = {
        id,
        externalId,
        summary: id,
        timeZone,
        primary: false,
        enabled: true,
        accessRole: 'owner',
        connectionId: 'con_merge',
        provider: 'google',
        auth: 'oauth',
        accountEmail: 'ann@example.com',
        connectionStatus: 'active',
        canRead: true,
        canWrite: true,
      };
      const ref: CalendarRef = { id, externalId, timeZone };
      handles.push({ calendar, ref, provider });
    }
  }, 60_000);

  afterAll(async () => {
    await db?.close();
  });

  /** Every calendar's listing read alone, to its end, then merged the way the merge orders. */
  async function expected(query: Record<string, string>, of: CalendarHandle[] = handles): Promise<string[]> {
    const all: { calendarId: string; event: CalendarEvent; n: number }[] = [];
    for (const handle of of) {
      let pageToken: string | undefined;
      do {
        const page = await handle.provider.listEvents(handle.ref, {
          ...query,
          singleEvents: true,
          orderBy: 'startTime',
          maxResults: 2500,
          ...(pageToken === undefined ? {} : { pageToken }),
        });
        for (const event of page.items) {
          all.push({ calendarId: handle.calendar.id, event, n: all.length });
        }
        pageToken = page.nextPageToken;
      } while (pageToken !== undefined);
    }
    all.sort(
      (a, b) =>
        startKey(a.event) - startKey(b.event) ||
        (a.calendarId < b.calendarId ? -1 : a.calendarId > b.calendarId ? 1 : 0) ||
        a.n - b.n,
    );
    return all.map(({ calendarId, event }) => `${calendarId}/${event.id}`);
  }

  async function merged(
    query: Record<string, string>,
    maxResults: number,
    of: CalendarHandle[] = handles,
  ): Promise<string[]> {
    const out: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await mergeEvents(
        of,
        { ...query, singleEvents: true, orderBy: 'startTime' },
        maxResults,
        pageToken,
        new AbortController().signal,
      );
      expect(page.errors).toEqual([]);
      expect(page.syncedAt).toBeDefined();
      out.push(...page.items.map(({ calendarId, event }) => `${calendarId}/${event.id}`));
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    return out;
  }

  const windows: Record<string, string>[] = [
    { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' },
    { timeMin: '2026-06-01T00:00:00Z', timeMax: '2026-07-01T00:00:00Z' },
    { timeMin: '2026-03-10T10:00:00Z', timeMax: '2026-03-12T10:00:00Z' },
    { timeMin: '2026-11-15T00:00:00Z' },
  ];
  for (const window of windows) {
    for (const text of [undefined, 'budget', 'weekly', 'zz-no-match']) {
      const query: Record<string, string> = { ...window, ...(text === undefined ? {} : { query: text }) };
      // Paging re-reads each calendar up to the page (the mirror's tokens are positions): the
      // whole year of seven calendars is paged in larger pages to keep the test quick.
      const sizes = text === undefined && window.timeMax === '2027-01-01T00:00:00Z' ? [60, 250] : [7, 25];
      it(`${JSON.stringify(query)}: pages of ${sizes.join(' and ')} merge exactly what every calendar holds`, async () => {
        const all = await expected(query);
        if (text !== 'zz-no-match' && window.timeMax === '2027-01-01T00:00:00Z') {
          expect(all.length).toBeGreaterThan(100);
        }
        for (const size of sizes) {
          expect(await merged(query, size), `pages of ${size}`).toEqual(all);
        }
        // A year of seven calendars read page by page is CPU work: room for a run sharing two cores.
      }, 90_000);
    }
  }

  it('merges three of the seven calendars exactly (the others never show)', async () => {
    const some = [0, 3, 6].map((n) => handles[n] as CalendarHandle);
    const queries: Record<string, string>[] = [
      { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z', query: 'budget' },
      { timeMin: '2026-06-01T00:00:00Z', timeMax: '2026-07-01T00:00:00Z', query: 'review plan' },
      { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z', query: 'zz-no-match' },
      { timeMin: '2026-06-01T00:00:00Z', timeMax: '2026-07-01T00:00:00Z' },
    ];
    for (const query of queries) {
      const all = await expected(query, some);
      for (const size of [7, 25]) {
        const got = await merged(query, size, some);
        expect(got, `${JSON.stringify(query)}, pages of ${size}`).toEqual(all);
        expect(got.every((id) => some.some((h) => id.startsWith(`${h.calendar.id}/`)))).toBe(true);
      }
    }
  });

  it('reads the first page of seven calendars with one merged read', async () => {
    const window = { timeMin: '2026-01-01T00:00:00Z', timeMax: '2027-01-01T00:00:00Z' };
    for (const text of [undefined, 'budget']) {
      firstReads = 0;
      const page = await mergeEvents(
        handles,
        {
          ...window,
          ...(text === undefined ? {} : { query: text }),
          singleEvents: true,
          orderBy: 'startTime',
        },
        25,
        undefined,
        new AbortController().signal,
      );
      expect(page.items).toHaveLength(25);
      expect(new Set(page.items.map((item) => item.calendarId)).size).toBeGreaterThan(1);
      expect(firstReads, text ?? 'no text').toBe(1);
      expect(
        (await expected({ ...window, ...(text === undefined ? {} : { query: text }) })).slice(0, 25),
      ).toEqual(page.items.map(({ calendarId, event }) => `${calendarId}/${event.id}`));
    }
  });
});
