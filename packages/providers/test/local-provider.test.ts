import { CalgateError } from '@calgate/core';
import { LocalEventStore } from '@calgate/store';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarRef,
  type EventInput,
  type ListEventsQuery,
  LocalCalendarProvider,
} from '../src/index.ts';

let db: TestDatabase;
let provider: LocalCalendarProvider;
const berlin: CalendarRef = { id: 'cal_berlin', externalId: 'cal_berlin', timeZone: 'Europe/Berlin' };
const other: CalendarRef = { id: 'cal_other', externalId: 'cal_other', timeZone: 'America/New_York' };
let fresh = 0;

/** A new empty calendar in Berlin, so tests do not see each other's events. */
async function newCalendar(timeZone = 'Europe/Berlin'): Promise<CalendarRef> {
  fresh += 1;
  const id = `cal_t${fresh}`;
  await db.prisma.calendar.create({
    data: { id, tenantId: 'tnt_x', connectionId: 'con_x', externalId: id, summary: id, timeZone },
  });
  return { id, externalId: id, timeZone };
}

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_x', name: 'Tenant X' } });
  await db.prisma.connection.create({
    data: { id: 'con_x', tenantId: 'tnt_x', provider: 'local', accountEmail: 'local', auth: 'none' },
  });
  for (const cal of [berlin, other]) {
    await db.prisma.calendar.create({
      data: {
        id: cal.id,
        tenantId: 'tnt_x',
        connectionId: 'con_x',
        externalId: cal.externalId,
        summary: cal.id,
        timeZone: cal.timeZone,
      },
    });
  }
  provider = new LocalCalendarProvider(new LocalEventStore(db));
});

afterAll(async () => {
  await db.close();
});

const timed = (start: string, end: string, extra: Partial<EventInput> = {}): EventInput => ({
  summary: 'Meeting',
  start: { dateTime: start, timeZone: 'Europe/Berlin' },
  end: { dateTime: end, timeZone: 'Europe/Berlin' },
  ...extra,
});

const list = (cal: CalendarRef, q: Partial<ListEventsQuery> = {}) =>
  provider.listEvents(cal, { maxResults: 250, singleEvents: false, ...q });

async function rejects(promise: Promise<unknown>, code: string, message?: string): Promise<CalgateError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CalgateError);
    const e = error as CalgateError;
    expect(e.code).toBe(code);
    if (message !== undefined) {
      expect(e.message).toContain(message);
    }
    return e;
  }
  throw new Error(`expected a ${code} error`);
}

describe('LocalCalendarProvider CRUD', () => {
  it('creates, reads, patches and deletes an event', async () => {
    const created = await provider.insertEvent(
      berlin,
      timed('2026-01-05T09:00:00', '2026-01-05T10:00:00', {
        description: 'Weekly sync',
        location: 'Room 1',
        attendees: [{ email: 'ada@example.com' }],
      }),
    );
    expect(created.id).toMatch(/^[a-v0-9]{26}$/);
    expect(created.etag).toMatch(/^"\d+"$/);
    expect(created.status).toBe('confirmed');
    expect(created.start).toEqual({ dateTime: '2026-01-05T09:00:00+01:00', timeZone: 'Europe/Berlin' });
    expect(created.sequence).toBe(0);

    const read = await provider.getEvent(berlin, created.id);
    expect(read).toEqual(created);

    const patched = await provider.patchEvent(
      berlin,
      created.id,
      { summary: 'Renamed' },
      { ifMatch: created.etag },
    );
    expect(patched.summary).toBe('Renamed');
    expect(patched.description).toBe('Weekly sync');
    expect(patched.start).toEqual(created.start);
    expect(patched.sequence).toBe(1);
    expect(patched.etag).not.toBe(created.etag);
    expect(Date.parse(patched.updated ?? '')).toBeGreaterThanOrEqual(Date.parse(created.updated ?? ''));

    await provider.deleteEvent(berlin, created.id);
    const gone = await provider.getEvent(berlin, created.id);
    expect(gone.status).toBe('cancelled');
    const again = await rejects(provider.deleteEvent(berlin, created.id), 'not_found', 'already deleted');
    expect(again.context.alreadyDeleted).toBe(true);
    await rejects(provider.patchEvent(berlin, created.id, { summary: 'x' }), 'not_found');
    await rejects(provider.getEvent(berlin, 'nosuchevent'), 'not_found');
    await rejects(provider.deleteEvent(berlin, 'nosuchevent'), 'not_found');
  });

  it('makes a reused id a conflict, even for a deleted event, but not across calendars', async () => {
    const input = timed('2026-02-01T09:00:00', '2026-02-01T10:00:00', { id: 'reusedid01' });
    await provider.insertEvent(berlin, input);
    await rejects(provider.insertEvent(berlin, input), 'already_exists', 'reusedid01');
    await provider.deleteEvent(berlin, 'reusedid01');
    await rejects(provider.insertEvent(berlin, input), 'already_exists');
    const elsewhere = await provider.insertEvent(other, input);
    expect(elsewhere.id).toBe('reusedid01');
  });

  it('enforces If-Match', async () => {
    const created = await provider.insertEvent(berlin, timed('2026-02-02T09:00:00', '2026-02-02T10:00:00'));
    const first = await provider.patchEvent(berlin, created.id, { location: 'A' }, { ifMatch: created.etag });
    await rejects(
      provider.patchEvent(berlin, created.id, { location: 'B' }, { ifMatch: created.etag }),
      'precondition_failed',
    );
    await rejects(provider.deleteEvent(berlin, created.id, { ifMatch: created.etag }), 'precondition_failed');
    await provider.deleteEvent(berlin, created.id, { ifMatch: first.etag });
  });

  it('lets concurrent patches without If-Match all land', async () => {
    const created = await provider.insertEvent(berlin, timed('2026-02-03T09:00:00', '2026-02-03T10:00:00'));
    await Promise.all(
      ['a', 'b', 'c', 'd'].map((s) => provider.patchEvent(berlin, created.id, { description: s })),
    );
    const final = await provider.getEvent(berlin, created.id);
    expect(final.sequence).toBe(4);
  });

  it.each([
    [{ start: { dateTime: '2026-01-05T10:00:00Z' }, end: { dateTime: '2026-01-05T09:00:00Z' } }, 'end'],
    [{ start: { date: '2026-01-05' }, end: { dateTime: '2026-01-05T09:00:00Z' } }, 'both be dates'],
    [{ start: { date: '2026-01-05' }, end: { date: '2026-01-05' } }, 'exclusive'],
    [{ start: { date: '2026-02-30' }, end: { date: '2026-03-01' } }, "'2026-02-30'"],
    [
      {
        start: { dateTime: '2026-01-05T09:00:00', timeZone: 'Mars/Base' },
        end: { dateTime: '2026-01-05T10:00:00Z' },
      },
      'Mars/Base',
    ],
    [{ start: { dateTime: 'tomorrow' }, end: { dateTime: '2026-01-05T10:00:00Z' } }, 'tomorrow'],
    [{ start: {}, end: { dateTime: '2026-01-05T10:00:00Z' } }, 'dateTime'],
    [
      {
        start: { dateTime: '2026-01-05T09:00:00Z' },
        end: { dateTime: '2026-01-05T10:00:00Z' },
        recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=XX'],
      },
      'BYDAY',
    ],
    [
      {
        id: 'UPPER-case!',
        start: { dateTime: '2026-01-05T09:00:00Z' },
        end: { dateTime: '2026-01-05T10:00:00Z' },
      },
      'base32hex',
    ],
  ] as [EventInput, string][])('rejects invalid input %#', async (input, message) => {
    await rejects(provider.insertEvent(berlin, input), 'invalid_argument', message);
  });

  it('keeps an event time zone and writes times in it; without one, uses the calendar zone', async () => {
    const cal = await newCalendar();
    const tokyo = await provider.insertEvent(cal, {
      start: { dateTime: '2026-01-05T09:00:00+09:00', timeZone: 'Asia/Tokyo' },
      end: { dateTime: '2026-01-05T10:00:00+09:00', timeZone: 'Asia/Tokyo' },
    });
    expect(tokyo.start).toEqual({ dateTime: '2026-01-05T09:00:00+09:00', timeZone: 'Asia/Tokyo' });
    const plain = await provider.insertEvent(cal, {
      start: { dateTime: '2026-01-05T08:00:00Z' },
      end: { dateTime: '2026-01-05T09:00:00Z' },
    });
    expect(plain.start).toEqual({ dateTime: '2026-01-05T09:00:00+01:00' });
  });
});

describe('time ranges', () => {
  it('includes events that end after timeMin and start before timeMax', async () => {
    const cal = await newCalendar();
    const a = await provider.insertEvent(
      cal,
      timed('2026-03-02T09:00:00', '2026-03-02T10:00:00', { summary: 'a' }),
    );
    const b = await provider.insertEvent(
      cal,
      timed('2026-03-02T10:00:00', '2026-03-02T11:00:00', { summary: 'b' }),
    );
    const c = await provider.insertEvent(
      cal,
      timed('2026-03-02T11:00:00', '2026-03-02T12:00:00', { summary: 'c' }),
    );
    const ids = async (timeMin: string, timeMax: string) =>
      (await list(cal, { timeMin, timeMax })).items.map((e) => e.summary);
    // [10:00, 11:00) Berlin = [09:00Z, 10:00Z): a ends at the boundary, c starts at it.
    expect(await ids('2026-03-02T09:00:00Z', '2026-03-02T10:00:00Z')).toEqual(['b']);
    expect(await ids('2026-03-02T08:59:59Z', '2026-03-02T10:00:01Z')).toEqual(['a', 'b', 'c']);
    expect(await ids('2026-03-02T09:30:00Z', '2026-03-02T09:30:01Z')).toEqual(['b']);
    expect(await ids('2026-03-02T11:00:00Z', '2026-03-02T12:00:00Z')).toEqual([]);
    expect([a.id, b.id, c.id]).toHaveLength(3);
    await rejects(list(cal, { timeMin: 'yesterday' }), 'invalid_argument', 'timeMin');
  });

  it('stores all-day events as midnights in the calendar zone, across a DST change', async () => {
    const cal = await newCalendar();
    const weekend = await provider.insertEvent(cal, {
      summary: 'DST weekend',
      start: { date: '2026-03-28' },
      end: { date: '2026-03-30' },
    });
    expect(weekend.start).toEqual({ date: '2026-03-28' });
    expect(weekend.end).toEqual({ date: '2026-03-30' });
    const row = await db.pool.query('SELECT start_at, end_at FROM local_events WHERE id = $1', [weekend.id]);
    expect((row.rows[0].start_at as Date).toISOString()).toBe('2026-03-27T23:00:00.000Z');
    // The 29th has 23 hours in Berlin: midnight on the 30th is 22:00Z.
    expect((row.rows[0].end_at as Date).toISOString()).toBe('2026-03-29T22:00:00.000Z');
    const hit = (timeMin: string, timeMax: string) =>
      list(cal, { timeMin, timeMax }).then((p) => p.items.map((e) => e.summary));
    expect(await hit('2026-03-29T21:59:00Z', '2026-03-29T23:00:00Z')).toEqual(['DST weekend']);
    expect(await hit('2026-03-29T22:00:00Z', '2026-03-29T23:00:00Z')).toEqual([]);
    expect(await hit('2026-03-27T22:00:00Z', '2026-03-27T23:00:00Z')).toEqual([]);
  });
});

describe('recurring events', () => {
  it('expands a series with EXDATE across DST into Google-style instances', async () => {
    const cal = await newCalendar();
    const master = await provider.insertEvent(
      cal,
      timed('2026-03-23T09:00:00', '2026-03-23T10:00:00', {
        id: 'standup001',
        summary: 'Standup',
        recurrence: ['RRULE:FREQ=DAILY;COUNT=10', 'EXDATE;TZID=Europe/Berlin:20260325T090000'],
      }),
    );
    expect(master.recurrence).toHaveLength(2);
    const page = await provider.listEvents(cal, {
      maxResults: 50,
      singleEvents: true,
      orderBy: 'startTime',
      timeMin: '2026-03-27T00:00:00Z',
      timeMax: '2026-04-01T00:00:00Z',
    });
    expect(page.items.map((e) => e.id)).toEqual([
      'standup001_20260327T080000Z',
      'standup001_20260328T080000Z',
      'standup001_20260329T070000Z',
      'standup001_20260330T070000Z',
      'standup001_20260331T070000Z',
    ]);
    const sunday = page.items[2];
    expect(sunday).toMatchObject({
      recurringEventId: 'standup001',
      summary: 'Standup',
      start: { dateTime: '2026-03-29T09:00:00+02:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-29T10:00:00+02:00', timeZone: 'Europe/Berlin' },
      originalStartTime: { dateTime: '2026-03-29T09:00:00+02:00', timeZone: 'Europe/Berlin' },
    });
    expect(sunday?.recurrence).toBeUndefined();

    const all = await provider.listEvents(cal, { maxResults: 50, singleEvents: true, orderBy: 'startTime' });
    expect(all.items).toHaveLength(9);
    expect(all.items.map((e) => e.id)).not.toContain('standup001_20260325T080000Z');

    // Without singleEvents the master comes back once, if its series overlaps the window.
    const masters = await list(cal, { timeMin: '2026-03-30T00:00:00Z', timeMax: '2026-04-30T00:00:00Z' });
    expect(masters.items.map((e) => e.id)).toEqual(['standup001']);
    const after = await list(cal, { timeMin: '2026-04-02T00:00:00Z' });
    expect(after.items).toEqual([]);

    const instance = await provider.getEvent(cal, 'standup001_20260330T070000Z');
    expect(instance.start.dateTime).toBe('2026-03-30T09:00:00+02:00');
    await rejects(provider.getEvent(cal, 'standup001_20260325T080000Z'), 'not_found');
  });

  it('expands unbounded and all-day series within the window only', async () => {
    const cal = await newCalendar();
    await provider.insertEvent(cal, {
      id: 'anniv0001',
      summary: 'Anniversary',
      start: { date: '2000-03-29' },
      end: { date: '2000-03-30' },
      recurrence: ['RRULE:FREQ=YEARLY'],
    });
    const page = await provider.listEvents(cal, {
      maxResults: 10,
      singleEvents: true,
      timeMin: '2026-01-01T00:00:00Z',
      timeMax: '2028-01-01T00:00:00Z',
    });
    expect(page.items.map((e) => [e.id, e.start.date, e.end.date])).toEqual([
      ['anniv0001_20260329', '2026-03-29', '2026-03-30'],
      ['anniv0001_20270329', '2027-03-29', '2027-03-30'],
    ]);
    const far = await provider.getEvent(cal, 'anniv0001_20990329');
    expect(far.start).toEqual({ date: '2099-03-29' });
  });

  it('requires singleEvents for orderBy startTime', async () => {
    await rejects(
      provider.listEvents(berlin, { maxResults: 10, singleEvents: false, orderBy: 'startTime' }),
      'invalid_argument',
      'singleEvents',
    );
  });
});

describe('paging, search, deleted events and isolation', () => {
  it('pages through 120 events 50 at a time', async () => {
    const cal = await newCalendar();
    const base = Date.parse('2026-05-01T08:00:00Z');
    for (let i = 0; i < 120; i++) {
      const start = new Date(base + i * 3_600_000).toISOString();
      const end = new Date(base + i * 3_600_000 + 1_800_000).toISOString();
      await provider.insertEvent(cal, {
        summary: `e${i}`,
        start: { dateTime: start },
        end: { dateTime: end },
      });
    }
    const seen: string[] = [];
    let pageToken: string | undefined;
    const sizes: number[] = [];
    do {
      const page = await provider.listEvents(cal, {
        maxResults: 50,
        singleEvents: true,
        orderBy: 'startTime',
        ...(pageToken ? { pageToken } : {}),
      });
      sizes.push(page.items.length);
      seen.push(...page.items.map((e) => e.summary ?? ''));
      pageToken = page.nextPageToken;
    } while (pageToken);
    expect(sizes).toEqual([50, 50, 20]);
    expect(seen).toEqual(Array.from({ length: 120 }, (_, i) => `e${i}`));
    await rejects(
      provider.listEvents(cal, { maxResults: 50, singleEvents: true, pageToken: 'garbage!' }),
      'invalid_argument',
      'pageToken',
    );
    const forged = Buffer.from(JSON.stringify({ o: -5 })).toString('base64url');
    await rejects(
      provider.listEvents(cal, { maxResults: 50, singleEvents: true, pageToken: forged }),
      'invalid_argument',
    );
  });

  it('searches summary, description and location by word beginnings, case folded', async () => {
    const cal = await newCalendar();
    await provider.insertEvent(
      cal,
      timed('2026-06-01T09:00:00', '2026-06-01T10:00:00', { summary: 'Budget review' }),
    );
    await provider.insertEvent(
      cal,
      timed('2026-06-02T09:00:00', '2026-06-02T10:00:00', {
        summary: 'Lunch',
        description: 'talk about the BUDGET',
      }),
    );
    await provider.insertEvent(
      cal,
      timed('2026-06-03T09:00:00', '2026-06-03T10:00:00', { summary: 'Walk', location: '100% park' }),
    );
    const search = async (query: string) =>
      (await list(cal, { query, singleEvents: true, orderBy: 'startTime' })).items.map((e) => e.summary);
    expect(await search('budget')).toEqual(['Budget review', 'Lunch']);
    expect(await search('100%')).toEqual(['Walk']);
    expect(await search('udget')).toEqual([]);
    // No letters or digits: nothing to search for.
    expect(await search('%')).toEqual([]);
    expect(await search('nothing')).toEqual([]);
  });

  it('hides deleted events unless showDeleted, and orders by updated', async () => {
    const cal = await newCalendar();
    const a = await provider.insertEvent(
      cal,
      timed('2026-07-01T09:00:00', '2026-07-01T10:00:00', { summary: 'a' }),
    );
    const b = await provider.insertEvent(
      cal,
      timed('2026-07-02T09:00:00', '2026-07-02T10:00:00', { summary: 'b' }),
    );
    await provider.patchEvent(cal, a.id, { description: 'touched' });
    await provider.deleteEvent(cal, b.id);
    expect((await list(cal)).items.map((e) => e.summary)).toEqual(['a']);
    const withDeleted = await list(cal, { showDeleted: true, orderBy: 'updated' });
    expect(withDeleted.items.map((e) => [e.summary, e.status])).toEqual([
      ['a', 'confirmed'],
      ['b', 'cancelled'],
    ]);
  });

  it('keeps calendars apart', async () => {
    const one = await newCalendar();
    const two = await newCalendar('America/New_York');
    const mine = await provider.insertEvent(
      one,
      timed('2026-08-01T09:00:00', '2026-08-01T10:00:00', { summary: 'mine' }),
    );
    await provider.insertEvent(
      two,
      timed('2026-08-01T09:00:00', '2026-08-01T10:00:00', { summary: 'theirs' }),
    );
    expect((await list(one)).items.map((e) => e.summary)).toEqual(['mine']);
    expect((await list(two)).items.map((e) => e.summary)).toEqual(['theirs']);
    await rejects(provider.getEvent(two, mine.id), 'not_found');
    await rejects(provider.patchEvent(two, mine.id, { summary: 'stolen' }), 'not_found');
    await rejects(provider.deleteEvent(two, mine.id), 'not_found');
    expect((await provider.getEvent(one, mine.id)).summary).toBe('mine');
  });
});

describe('ordering by start', () => {
  it('orders singles, all-day events and series instances by their start instant, then id', async () => {
    const cal = await newCalendar('America/New_York');
    const inputs: EventInput[] = [
      // Same instant written in three zones, with milliseconds: ties fall back to the id.
      {
        summary: 'a',
        start: { dateTime: '2026-12-02T09:00:00.250+01:00' },
        end: { dateTime: '2026-12-02T10:00:00+01:00' },
      },
      {
        summary: 'b',
        start: { dateTime: '2026-12-02T08:00:00.250Z', timeZone: 'UTC' },
        end: { dateTime: '2026-12-02T09:00:00Z' },
      },
      {
        summary: 'c',
        start: { dateTime: '2026-12-02T03:00:00.250-05:00', timeZone: 'America/New_York' },
        end: { dateTime: '2026-12-02T04:00:00-05:00' },
      },
      {
        summary: 'd',
        start: { dateTime: '2026-12-02T08:00:00.249Z' },
        end: { dateTime: '2026-12-02T08:30:00Z' },
      },
      // All-day dates sort as UTC midnights (Google's order), whatever the calendar's zone.
      { summary: 'e', start: { date: '2026-12-02' }, end: { date: '2026-12-03' } },
      { summary: 'f', start: { date: '2026-12-01' }, end: { date: '2026-12-02' } },
      // 02:00Z: after the UTC midnight of 3 December, before New York's.
      {
        summary: 'h',
        start: { dateTime: '2026-12-03T02:00:00Z' },
        end: { dateTime: '2026-12-03T03:00:00Z' },
      },
      { summary: 'i', start: { date: '2026-12-03' }, end: { date: '2026-12-04' } },
      {
        summary: 'g',
        start: { dateTime: '2026-12-01T23:30:00', timeZone: 'Asia/Kolkata' },
        end: { dateTime: '2026-12-02T00:30:00', timeZone: 'Asia/Kolkata' },
        recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
      },
    ];
    for (const input of inputs) {
      await provider.insertEvent(cal, input);
    }
    const page = await list(cal, {
      singleEvents: true,
      orderBy: 'startTime',
      timeMin: '2026-11-30T00:00:00Z',
      timeMax: '2026-12-05T00:00:00Z',
    });
    const keyOf = (start: { date?: string; dateTime?: string }) =>
      Date.parse(start.dateTime ?? `${start.date}T00:00:00Z`);
    const expected = [...page.items].sort(
      (x, y) => keyOf(x.start) - keyOf(y.start) || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0),
    );
    expect(page.items).toHaveLength(11);
    expect(page.items.map((event) => event.id)).toEqual(expected.map((event) => event.id));
    const summaries = page.items.map((event) => event.summary);
    expect(summaries.slice(0, 2)).toEqual(['f', 'g']);
    expect(summaries.indexOf('i')).toBeLessThan(summaries.indexOf('h'));
  });
});

describe('a window with more rows than one read takes', () => {
  it('is refused with a clear error instead of a listing that silently ends early', async () => {
    const cal = await newCalendar('UTC');
    // 20,000 events, one a minute from 1 March 2027, written directly (the provider would take minutes).
    await db.pool.query(
      `INSERT INTO local_events (calendar_id, id, ical_uid, summary, start_at, end_at, recurrence, etag)
       SELECT $1, 'bulk' || n, 'bulk' || n || '@calgate', 'Bulk ' || n,
              timestamptz '2027-03-01T00:00:00Z' + n * interval '1 minute',
              timestamptz '2027-03-01T00:00:30Z' + n * interval '1 minute', '{}', '"1"'
         FROM generate_series(0, 19999) AS n`,
      [cal.id],
    );
    const message = 'This calendar has more than 20000 events in the window; ask for a shorter window.';
    const month = { timeMin: '2027-03-01T00:00:00Z', timeMax: '2027-04-01T00:00:00Z' };
    for (const singleEvents of [true, false]) {
      await rejects(
        provider.listEvents(cal, { ...month, maxResults: 10, singleEvents }),
        'invalid_argument',
        message,
      );
    }
    // Free/busy says so for the calendar, as Google does for a calendar it cannot answer.
    expect(await provider.freeBusy([cal], month.timeMin, month.timeMax)).toEqual([
      { calendarId: cal.id, error: { code: 'invalid_argument', message } },
    ]);
    // A shorter window lists, to its end.
    const day = await provider.listEvents(cal, {
      timeMin: '2027-03-02T00:00:00Z',
      timeMax: '2027-03-03T00:00:00Z',
      maxResults: 2500,
      singleEvents: true,
    });
    expect(day.items).toHaveLength(24 * 60);
    expect(day.nextPageToken).toBeUndefined();
  });
});
