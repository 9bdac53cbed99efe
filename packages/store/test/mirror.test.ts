import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRepository } from '../src/index.ts';
import { mirrorEvent } from './mirror-events.ts';
import { failure } from './support.ts';

let db: TestDatabase;
let mirror: MirrorRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  for (const tenant of ['tnt_a', 'tnt_b']) {
    await db.prisma.tenant.create({ data: { id: tenant, name: tenant } });
  }
  const calendars = [
    ['tnt_a', 'con_a', 'cal_a1'],
    ['tnt_a', 'con_a', 'cal_a2'],
    ['tnt_a', 'con_a2', 'cal_a3'],
    ['tnt_b', 'con_b', 'cal_b1'],
  ] as const;
  for (const [tenantId, connectionId, id] of calendars) {
    await db.prisma.connection.upsert({
      where: { id: connectionId },
      update: {},
      create: {
        id: connectionId,
        tenantId,
        provider: 'google',
        accountEmail: `${connectionId}@example.com`,
        auth: 'oauth',
      },
    });
    await db.prisma.calendar.create({
      data: { id, tenantId, connectionId, externalId: `${id}@example.com`, summary: id, timeZone: 'UTC' },
    });
  }
  mirror = new MirrorRepository(db);
});

afterAll(async () => {
  await db.close();
});

const event = mirrorEvent;

async function feedFor(calendarId: string): Promise<string[]> {
  const { changes } = await mirror.changesSince(0n, 10_000);
  return changes.filter((c) => c.calendarId === calendarId).map((c) => `${c.kind}:${c.eventId}`);
}

describe('applyPage', () => {
  it('stores a full sync page by page, keeps the tokens, and feeds every new event once', async () => {
    await mirror.resetForFullSync('cal_a1', 'tnt_a');
    const first = await mirror.applyPage('cal_a1', 'tnt_a', [event('e1'), event('e2')], {
      nextPageToken: 'p2',
    });
    expect(first).toEqual({ upserted: 2, deleted: 0, swept: 0 });
    expect(await mirror.syncState('cal_a1')).toMatchObject({
      syncToken: null,
      pageToken: 'p2',
      status: 'syncing',
      syncedAt: null,
    });

    // The same page again (a sync that stopped before its next page was stored): no new feed rows.
    expect(
      await mirror.applyPage('cal_a1', 'tnt_a', [event('e1'), event('e2')], { nextPageToken: 'p2' }),
    ).toEqual({
      upserted: 0,
      deleted: 0,
      swept: 0,
    });
    await mirror.applyPage('cal_a1', 'tnt_a', [event('e3', { attendees: [{ email: 'ann@example.com' }] })], {
      nextSyncToken: 's1',
    });
    const state = await mirror.syncState('cal_a1');
    expect(state).toMatchObject({ syncToken: 's1', pageToken: null, status: 'ok', error: null });
    expect(state?.syncedAt).toBeInstanceOf(Date);
    expect(state?.fullSyncAt).toBeInstanceOf(Date);
    expect(await feedFor('cal_a1')).toEqual(['upsert:e1', 'upsert:e2', 'upsert:e3']);

    const rows = await mirror.read('cal_a1');
    expect(rows.map((r) => r.eventId)).toEqual(['e1', 'e2', 'e3']);
    expect(rows[2]).toMatchObject({
      tenantId: 'tnt_a',
      attendees: [{ email: 'ann@example.com' }],
      raw: { id: 'e3', summary: 'e3' },
      startAt: new Date('2026-03-02T09:00:00Z'),
    });
  });

  it('records a sync as of when it began reading the upstream, never later than its commit', async () => {
    const began = Date.now() - 5_000;
    await mirror.applyPage('cal_a1', 'tnt_a', [], { nextSyncToken: 's-read', readAt: began });
    expect((await mirror.syncState('cal_a1'))?.syncedAt?.getTime()).toBe(began);
    // A clock ahead of the database's does not date the sync in the future.
    await mirror.applyPage('cal_a1', 'tnt_a', [], {
      nextSyncToken: 's-ahead',
      readAt: Date.now() + 3_600_000,
    });
    expect((await mirror.syncState('cal_a1'))?.syncedAt?.getTime()).toBeLessThanOrEqual(Date.now() + 1_000);
  });

  it('applies updates and deletions: a cancelled event goes, a cancelled instance stays as a tombstone', async () => {
    const master = event('series', {
      recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
      startAt: new Date('2026-03-01T08:00:00Z'),
      endAt: new Date('2026-03-01T08:30:00Z'),
    });
    const cancelledInstance = event('series_20260303T080000Z', {
      status: 'cancelled',
      recurringEventId: 'series',
      originalStart: new Date('2026-03-03T08:00:00Z'),
      startAt: null,
      endAt: null,
      summary: null,
    });
    const outcome = await mirror.applyPage(
      'cal_a1',
      'tnt_a',
      [
        event('e1', { summary: 'e1 renamed', etag: '"e1-2"' }),
        event('e2', { status: 'cancelled', etag: '"e2-2"' }),
        master,
        cancelledInstance,
      ],
      { nextSyncToken: 's2' },
    );
    expect(outcome).toEqual({ upserted: 2, deleted: 2, swept: 0 });
    const rows = await mirror.read('cal_a1');
    expect(rows.map((r) => [r.eventId, r.status, r.summary])).toEqual([
      ['series', 'confirmed', 'series'],
      ['e1', 'confirmed', 'e1 renamed'],
      ['e3', 'confirmed', 'e3'],
      ['series_20260303T080000Z', 'cancelled', null],
    ]);
    expect(await feedFor('cal_a1')).toEqual([
      'upsert:e1',
      'upsert:e2',
      'upsert:e3',
      'upsert:e1',
      'upsert:series',
      'delete:series_20260303T080000Z',
      'delete:e2',
    ]);

    // Deleting the master takes its exceptions with it.
    await mirror.applyPage('cal_a1', 'tnt_a', [event('series', { status: 'cancelled', etag: '"x"' })], {
      nextSyncToken: 's3',
    });
    expect((await mirror.read('cal_a1')).map((r) => r.eventId)).toEqual(['e1', 'e3']);
  });

  it('a full sync after a reset removes what it did not see, and keeps rows readable meanwhile', async () => {
    await mirror.resetForFullSync('cal_a1', 'tnt_a');
    expect(await mirror.syncState('cal_a1')).toMatchObject({
      syncToken: null,
      pageToken: null,
      status: 'syncing',
    });
    await mirror.applyPage('cal_a1', 'tnt_a', [event('e1', { summary: 'e1 renamed', etag: '"e1-2"' })], {
      nextPageToken: 'p2',
    });
    expect((await mirror.read('cal_a1')).map((r) => r.eventId)).toEqual(['e1', 'e3']);
    const last = await mirror.applyPage('cal_a1', 'tnt_a', [event('e4')], { nextSyncToken: 's4' });
    expect(last).toEqual({ upserted: 1, deleted: 0, swept: 1 });
    expect((await mirror.read('cal_a1')).map((r) => r.eventId)).toEqual(['e1', 'e4']);
    expect((await feedFor('cal_a1')).slice(-2)).toEqual(['upsert:e4', 'delete:e3']);
  });

  it('refuses a calendar of another tenant, an unknown calendar, and a page without a token', async () => {
    expect(
      (await failure(mirror.applyPage('cal_b1', 'tnt_a', [event('x')], { nextSyncToken: 's' }))).code,
    ).toBe('not_found');
    expect((await failure(mirror.resetForFullSync('cal_nope', 'tnt_a'))).code).toBe('not_found');
    expect((await failure(mirror.applyPage('cal_a1', 'tnt_a', [event('x')], {}))).code).toBe(
      'invalid_argument',
    );
    expect(await mirror.syncState('cal_b1')).toBeNull();
  });
});

describe('read and search', () => {
  beforeAll(async () => {
    await mirror.applyPage(
      'cal_a2',
      'tnt_a',
      [
        event('cafe', { summary: 'Café with Zoë', location: 'Crème Brûlée Bar' }),
        event('meeting', {
          summary: 'Weekly Meeting',
          description: 'Agenda: budget review',
          startAt: new Date('2026-04-01T10:00:00Z'),
          endAt: new Date('2026-04-01T11:00:00Z'),
        }),
        event('allday', {
          summary: 'Offsite',
          allDay: true,
          startAt: new Date('2026-04-10T00:00:00Z'),
          endAt: new Date('2026-04-12T00:00:00Z'),
          startDate: '2026-04-10',
          endDate: '2026-04-12',
        }),
        event('gone', {
          summary: 'Meeting that was cancelled',
          status: 'cancelled',
          recurringEventId: 'someseries',
          originalStart: new Date('2026-04-02T10:00:00Z'),
          startAt: null,
          endAt: null,
        }),
      ],
      { nextSyncToken: 's' },
    );
    await mirror.applyPage('cal_b1', 'tnt_b', [event('other', { summary: 'Meeting of tenant B, café' })], {
      nextSyncToken: 's',
    });
  });

  const ids = async (calendarIds: string[], text: string) =>
    (await mirror.search(calendarIds, text)).map((hit) => hit.event.eventId);

  it('folds accents both ways and matches words by their beginning', async () => {
    expect(await ids(['cal_a2'], 'cafe')).toEqual(['cafe']);
    expect(await ids(['cal_a2'], 'CAFÉ zoe')).toEqual(['cafe']);
    expect(await ids(['cal_a2'], 'creme brulee')).toEqual(['cafe']);
    expect(await ids(['cal_a2'], 'meet')).toEqual(['meeting']);
    expect(await ids(['cal_a2'], 'budg')).toEqual(['meeting']);
    expect(await ids(['cal_a2'], 'review budget weekly')).toEqual(['meeting']);
    // Only at the beginning of a word.
    expect(await ids(['cal_a2'], 'eekly')).toEqual([]);
    expect(await ids(['cal_a2'], 'standup')).toEqual([]);
    expect(await ids(['cal_a2'], '%_\\')).toEqual([]);
  });

  it('never answers from a calendar it was not given', async () => {
    expect(await ids(['cal_a2'], 'meeting')).toEqual(['meeting']);
    expect((await ids(['cal_a2', 'cal_b1'], 'meeting')).sort()).toEqual(['meeting', 'other']);
    expect(await ids(['cal_b1'], 'cafe')).toEqual(['other']);
    expect(await ids([], 'cafe')).toEqual([]);
    expect((await mirror.read('cal_b1', { query: 'weekly' })).map((r) => r.eventId)).toEqual([]);
  });

  it('reads the first rows of several calendars together, complete up to one instant for all', async () => {
    expect(await mirror.readFirst([], { first: 5 })).toEqual(new Map());
    const window = { timeMin: new Date('2026-03-01T00:00:00Z'), timeMax: new Date('2026-05-01T00:00:00Z') };
    // Two rows in all: the earliest of cal_a2 (cafe, 2 March) and cal_b1 (other, 2 March), in
    // (start, id) order across both; everything else starts at or after the second's start.
    // Moved and cancelled occurrences of the window (gone) always come along.
    const two = await mirror.readFirst(['cal_a2', 'cal_b1'], { ...window, first: 2 });
    const rows = (id: string) =>
      two
        .get(id)
        ?.rows.map((row) => row.eventId)
        .sort();
    expect(rows('cal_a2')).toEqual(['cafe', 'gone']);
    expect(rows('cal_b1')).toEqual(['other']);
    expect(two.get('cal_a2')?.throughMs).toBe(Date.parse('2026-03-02T09:00:00Z'));
    expect(two.get('cal_b1')?.throughMs).toBe(Date.parse('2026-03-02T09:00:00Z'));
    // Enough rows: complete (null), and text narrows every calendar.
    const all = await mirror.readFirst(['cal_a2', 'cal_b1'], { ...window, first: 10 });
    expect(
      all
        .get('cal_a2')
        ?.rows.map((row) => row.eventId)
        .sort(),
    ).toEqual(['allday', 'cafe', 'gone', 'meeting']);
    expect(all.get('cal_a2')?.throughMs).toBeNull();
    const cafe = await mirror.readFirst(['cal_a2', 'cal_b1'], { ...window, query: 'cafe', first: 10 });
    expect(
      cafe
        .get('cal_a2')
        ?.rows.filter((row) => row.matched !== false)
        .map((row) => row.eventId),
    ).toEqual(['cafe']);
    expect(cafe.get('cal_b1')?.rows.map((row) => row.eventId)).toEqual(['other']);
    // With the tenant named, text over several calendars walks the tenant's rows once: the same
    // rows and bound as a branch per calendar, and nothing of a calendar not asked for.
    const byCalendar = await mirror.readFirst(['cal_a1', 'cal_a2'], { ...window, query: 'meet', first: 1 });
    const walked = await mirror.readFirst(['cal_a1', 'cal_a2'], {
      ...window,
      query: 'meet',
      first: 1,
      tenantId: 'tnt_a',
    });
    expect(walked).toEqual(byCalendar);
    for (const first of [1, 2, 10]) {
      // Without text too, at every page size.
      expect(await mirror.readFirst(['cal_a1', 'cal_a2'], { ...window, first, tenantId: 'tnt_a' })).toEqual(
        await mirror.readFirst(['cal_a1', 'cal_a2'], { ...window, first }),
      );
    }
    expect(walked.get('cal_a2')?.rows.map((row) => row.eventId)).toContain('meeting');
    const none = await mirror.readFirst(['cal_a1', 'cal_a3'], {
      ...window,
      query: 'meet',
      first: 5,
      tenantId: 'tnt_a',
    });
    expect([...none.values()].flatMap((entry) => entry.rows)).toEqual([]);
  });

  it('reads a window, with text, including exceptions by their original start', async () => {
    const window = { timeMin: new Date('2026-04-01T00:00:00Z'), timeMax: new Date('2026-04-11T00:00:00Z') };
    expect((await mirror.read('cal_a2', window)).map((r) => r.eventId)).toEqual([
      'meeting',
      'allday',
      'gone',
    ]);
    const allDay = (await mirror.read('cal_a2', window)).find((r) => r.eventId === 'allday');
    expect(allDay).toMatchObject({ allDay: true, startDate: '2026-04-10', endDate: '2026-04-12' });
    expect((await mirror.read('cal_a2', { ...window, query: 'meet' })).map((r) => r.eventId)).toEqual([
      'meeting',
      'gone',
    ]);
  });
});

describe('forgetting a mirror', () => {
  it('deleteCalendar, deleteConnection and deleting the calendar row remove events, state and feed rows', async () => {
    const rowsOf = async (calendarId: string) => {
      const { rows } = await db.pool.query<{ e: number; s: number; c: number }>(
        `SELECT (SELECT count(*)::int FROM mirror_events WHERE calendar_id = $1) AS e,
                (SELECT count(*)::int FROM mirror_sync_state WHERE calendar_id = $1) AS s,
                (SELECT count(*)::int FROM mirror_changes WHERE calendar_id = $1) AS c`,
        [calendarId],
      );
      return rows[0];
    };
    await mirror.applyPage('cal_a3', 'tnt_a', [event('x1'), event('x2')], { nextSyncToken: 's' });
    expect(await rowsOf('cal_a3')).toEqual({ e: 2, s: 1, c: 2 });
    expect(await mirror.deleteConnection('tnt_b', 'con_a2')).toBe(0);
    expect(await mirror.deleteConnection('tnt_a', 'con_a2')).toBe(2);
    expect(await rowsOf('cal_a3')).toEqual({ e: 0, s: 0, c: 0 });

    expect(await mirror.deleteCalendar('cal_a2')).toBe(4);
    expect(await rowsOf('cal_a2')).toEqual({ e: 0, s: 0, c: 0 });
    expect((await mirror.search(['cal_b1'], 'cafe')).length).toBe(1);

    await db.prisma.calendar.delete({ where: { id: 'cal_b1' } });
    expect(await rowsOf('cal_b1')).toEqual({ e: 0, s: 0, c: 0 });
  });
});
