import { CalgateError } from '@calgate/core';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEventStore, type NewLocalEvent } from '../src/index.ts';

let db: TestDatabase;
let store: LocalEventStore;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_x', name: 'X' } });
  await db.prisma.connection.create({
    data: { id: 'con_x', tenantId: 'tnt_x', provider: 'local', accountEmail: 'local', auth: 'none' },
  });
  for (const id of ['cal_a', 'cal_b']) {
    await db.prisma.calendar.create({
      data: { id, tenantId: 'tnt_x', connectionId: 'con_x', externalId: id, summary: id, timeZone: 'UTC' },
    });
  }
  store = new LocalEventStore(db);
});

afterAll(async () => {
  await db.close();
});

const event = (
  id: string,
  start: string,
  end: string,
  extra: Partial<NewLocalEvent> = {},
): NewLocalEvent => ({
  calendarId: 'cal_a',
  id,
  iCalUid: `${id}@calgate`,
  status: 'confirmed',
  summary: id,
  description: null,
  location: null,
  allDay: false,
  startAt: new Date(start),
  endAt: new Date(end),
  startDate: null,
  endDate: null,
  startTimeZone: null,
  endTimeZone: null,
  recurrence: [],
  seriesEndAt: null,
  recurringEventId: null,
  originalStartTime: null,
  attendees: null,
  reminders: null,
  transparency: 'opaque',
  visibility: 'default',
  colorId: null,
  sequence: 0,
  etag: '"1"',
  ...extra,
});

async function codeOf(promise: Promise<unknown>): Promise<[string, Record<string, unknown>]> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(CalgateError);
    return [(error as CalgateError).code, (error as CalgateError).context];
  }
  return ['none', {}];
}

describe('LocalEventStore', () => {
  it('inserts and reads back, with JSON columns intact', async () => {
    const row = await store.insert(
      event('storeone1', '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z', {
        attendees: [{ email: 'a@example.com' }],
        reminders: { useDefault: false },
      }),
    );
    expect(row.id).toBe('storeone1');
    const read = await store.get('cal_a', 'storeone1');
    expect(read?.attendees).toEqual([{ email: 'a@example.com' }]);
    expect(read?.reminders).toEqual({ useDefault: false });
    expect(read?.recurrence).toEqual([]);
    expect(await store.get('cal_b', 'storeone1')).toBeNull();
  });

  it('reads every column back as written, defaults and the rest alike, by every read', async () => {
    const usual = event('storecols1', '2026-02-05T09:00:00Z', '2026-02-05T10:00:00Z', {
      calendarId: 'cal_b',
    });
    const unusual = event('storecols2', '2026-02-06T09:00:00Z', '2026-02-06T10:00:00Z', {
      calendarId: 'cal_b',
      status: 'tentative',
      transparency: 'transparent',
      visibility: 'private',
      colorId: '5',
      sequence: 3,
    });
    for (const written of [usual, unusual]) {
      const inserted = await store.insert(written);
      const { createdAt, updatedAt, ...rest } = inserted;
      expect(rest).toEqual(written);
      expect(await store.get('cal_b', written.id)).toEqual(inserted);
    }
    const listed = await store.listRange('cal_b', {
      timeMin: new Date('2026-02-01T00:00:00Z'),
      timeMax: new Date('2026-03-01T00:00:00Z'),
      showDeleted: false,
      limit: 10,
    });
    expect(listed).toEqual([await store.get('cal_b', 'storecols1'), await store.get('cal_b', 'storecols2')]);
  });

  it('maps a reused id in the same calendar to already_exists', async () => {
    await store.insert(event('storedup1', '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'));
    expect(
      (await codeOf(store.insert(event('storedup1', '2026-01-06T09:00:00Z', '2026-01-06T10:00:00Z'))))[0],
    ).toBe('already_exists');
    await store.insert({
      ...event('storedup1', '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'),
      calendarId: 'cal_b',
    });
  });

  it('updates only when the ETag still matches', async () => {
    await store.insert(event('storecas1', '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'));
    const updated = await store.update('cal_a', 'storecas1', '"1"', { summary: 'new', etag: '"2"' });
    expect(updated?.summary).toBe('new');
    expect(updated?.etag).toBe('"2"');
    expect(await store.update('cal_a', 'storecas1', '"1"', { summary: 'lost', etag: '"3"' })).toBeNull();
    expect((await store.get('cal_a', 'storecas1'))?.summary).toBe('new');
  });

  it('soft-deletes once, then reports already deleted; a stale ETag is a failed precondition', async () => {
    await store.insert(event('storedel1', '2026-01-05T09:00:00Z', '2026-01-05T10:00:00Z'));
    expect((await codeOf(store.softDelete('cal_a', 'storedel1', { etag: '"9"', ifMatch: '"0"' })))[0]).toBe(
      'precondition_failed',
    );
    const deleted = await store.softDelete('cal_a', 'storedel1', { etag: '"9"', ifMatch: '"1"' });
    expect(deleted.status).toBe('cancelled');
    expect(deleted.sequence).toBe(1);
    const [code, context] = await codeOf(store.softDelete('cal_a', 'storedel1', { etag: '"10"' }));
    expect(code).toBe('not_found');
    expect(context.alreadyDeleted).toBe(true);
    const [missing, missingContext] = await codeOf(store.softDelete('cal_a', 'nosuchrow', { etag: '"10"' }));
    expect(missing).toBe('not_found');
    expect(missingContext.alreadyDeleted).toBeUndefined();
  });

  it('finds singles overlapping the range and masters whose series overlaps it, in start order', async () => {
    const cal = 'cal_b';
    const put = (e: NewLocalEvent) => store.insert({ ...e, calendarId: cal });
    await put(event('rangeaaa1', '2026-03-01T09:00:00Z', '2026-03-01T10:00:00Z'));
    await put(
      event('rangeaaa2', '2026-03-01T10:00:00Z', '2026-03-01T11:00:00Z', { description: 'Quarterly PLAN' }),
    );
    await put(event('rangeaaa3', '2026-03-01T11:00:00Z', '2026-03-01T12:00:00Z', { location: '50%_off' }));
    await put(event('rangeaaa4', '2026-03-01T10:30:00Z', '2026-03-01T10:30:00Z'));
    await put(
      event('seriesbd1', '2026-01-01T08:00:00Z', '2026-01-01T08:30:00Z', {
        recurrence: ['RRULE:FREQ=DAILY;COUNT=60'],
        seriesEndAt: new Date('2026-03-01T08:30:00Z'),
      }),
    );
    await put(
      event('seriesun1', '2025-01-01T08:00:00Z', '2025-01-01T08:30:00Z', {
        recurrence: ['RRULE:FREQ=WEEKLY'],
      }),
    );
    await put(event('rangedel1', '2026-03-01T10:00:00Z', '2026-03-01T11:00:00Z', { status: 'cancelled' }));
    const ids = async (
      timeMin: string,
      timeMax: string,
      more: { query?: string; showDeleted?: boolean } = {},
    ) =>
      (
        await store.listRange(cal, {
          timeMin: new Date(timeMin),
          timeMax: new Date(timeMax),
          showDeleted: more.showDeleted ?? false,
          limit: 100,
          ...(more.query === undefined ? {} : { query: more.query }),
        })
      ).map((r) => r.id);
    expect(await ids('2026-03-01T10:00:00Z', '2026-03-01T11:00:00Z')).toEqual([
      'seriesun1',
      'rangeaaa2',
      'rangeaaa4',
    ]);
    expect(await ids('2026-03-01T08:00:00Z', '2026-03-01T09:00:00Z')).toEqual(['seriesun1', 'seriesbd1']);
    expect(await ids('2026-03-01T08:30:00Z', '2026-03-01T09:00:00Z')).toEqual(['seriesun1']);
    expect(await ids('2026-03-01T10:00:00Z', '2026-03-01T11:00:00Z', { showDeleted: true })).toContain(
      'rangedel1',
    );
    expect(await ids('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z', { query: 'plan' })).toEqual([
      'rangeaaa2',
    ]);
    // Words only: '%' and '_' separate words like any punctuation, and are no wildcards.
    expect(await ids('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z', { query: '50%_off' })).toEqual([
      'rangeaaa3',
    ]);
    expect(await ids('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z', { query: '0%_' })).toEqual([]);
    expect(await ids('2026-03-01T00:00:00Z', '2026-03-02T00:00:00Z', { query: '%' })).toEqual([]);
  });

  it('deletes a series together with its exceptions, each with a new ETag', async () => {
    const master = event('seriesdel1', '2026-05-04T09:00:00Z', '2026-05-04T10:00:00Z', {
      calendarId: 'cal_b',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
    });
    await store.insert(master);
    const exception = (key: string, extra: Partial<NewLocalEvent> = {}) =>
      event(
        `seriesdel1_${key}`,
        `2026-05-0${key.slice(7, 8)}T11:00:00Z`,
        `2026-05-0${key.slice(7, 8)}T12:00:00Z`,
        {
          calendarId: 'cal_b',
          recurringEventId: 'seriesdel1',
          originalStartTime: new Date(`2026-05-0${key.slice(7, 8)}T09:00:00Z`),
          ...extra,
        },
      );
    await store.insert(exception('20260505T090000Z'));
    await store.insert(exception('20260506T090000Z'));
    await store.insert(exception('20260507T090000Z', { status: 'cancelled', etag: '"7"' }));
    await store.softDelete('cal_b', 'seriesdel1', { etag: '"50"' });
    const rows = await store.exceptionsOf('cal_b', 'seriesdel1');
    expect(rows.map((r) => r.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    const etags = rows.map((r) => r.etag);
    expect(new Set(etags).size).toBe(3);
    expect(etags).toContain('"7"');
    // Deleting an exception alone leaves its siblings.
    await store.insert(
      event('single01', '2026-05-04T09:00:00Z', '2026-05-04T10:00:00Z', { calendarId: 'cal_b' }),
    );
    await store.softDelete('cal_b', 'single01', { etag: '"51"' });
  });

  it('reads an exception by its original start even when it was moved out of the range', async () => {
    await store.insert(
      event('seriesmov1', '2026-06-01T09:00:00Z', '2026-06-01T10:00:00Z', {
        recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
        seriesEndAt: new Date('2026-06-03T10:00:00Z'),
      }),
    );
    await store.insert(
      event('seriesmov1_20260602T090000Z', '2026-08-01T09:00:00Z', '2026-08-01T10:00:00Z', {
        recurringEventId: 'seriesmov1',
        originalStartTime: new Date('2026-06-02T09:00:00Z'),
      }),
    );
    const ids = async (timeMin: string, timeMax: string) =>
      (
        await store.listRange('cal_a', {
          timeMin: new Date(timeMin),
          timeMax: new Date(timeMax),
          showDeleted: false,
          limit: 100,
        })
      ).map((r) => r.id);
    expect(await ids('2026-06-02T00:00:00Z', '2026-06-03T00:00:00Z')).toEqual([
      'seriesmov1',
      'seriesmov1_20260602T090000Z',
    ]);
    expect(await ids('2026-07-31T00:00:00Z', '2026-08-02T00:00:00Z')).toEqual([
      'seriesmov1_20260602T090000Z',
    ]);
    expect(await ids('2026-09-01T00:00:00Z', '2026-09-02T00:00:00Z')).toEqual([]);
  });

  it('reads exactly the rows its conditions name over a long history, without walking it', async () => {
    // cal_b: two years of hourly-ish singles, long events spanning windows, zero-length events on
    // the bounds, ended and open series, exceptions moved near and far from their original start,
    // cancelled rows. Every window must give exactly what the conditions say over all rows.
    const day = 86_400_000;
    const base = Date.parse('2025-01-01T00:00:00Z');
    const rows: NewLocalEvent[] = [];
    const at = (ms: number) => new Date(ms).toISOString();
    for (let i = 0; i < 1500; i++) {
      const start = base + i * 11 * 3_600_000;
      rows.push({ ...event(`hist${i}`, at(start), at(start + 3_600_000)), calendarId: 'cal_b' });
    }
    const spans: [string, number, number][] = [
      ['span1', base + 100 * day, base + 400 * day],
      ['span2', base + 300 * day, base + 310 * day],
      ['zero1', base + 200 * day, base + 200 * day],
      ['zero2', base + 230 * day, base + 230 * day],
    ];
    for (const [id, start, end] of spans) {
      rows.push({ ...event(id, at(start), at(end)), calendarId: 'cal_b' });
    }
    rows.push({
      ...event('cancelled1', at(base + 201 * day), at(base + 201 * day + 3_600_000), { status: 'cancelled' }),
      calendarId: 'cal_b',
    });
    const masters: [string, number, number | null][] = [
      ['seriesended', base + 10 * day, base + 50 * day],
      ['seriesopen', base + 20 * day, null],
      ['serieslate', base + 500 * day, base + 560 * day],
    ];
    for (const [id, start, end] of masters) {
      rows.push({
        ...event(id, at(start), at(start + 3_600_000), {
          recurrence: ['RRULE:FREQ=WEEKLY'],
          seriesEndAt: end === null ? null : new Date(end),
        }),
        calendarId: 'cal_b',
      });
    }
    const exceptions: [string, number, number, string][] = [
      ['seriesopen_near', base + 201 * day, base + 202 * day, 'confirmed'],
      ['seriesopen_far', base + 27 * day, base + 600 * day, 'confirmed'],
      ['seriesopen_back', base + 230 * day, base + 30 * day, 'confirmed'],
      ['seriesopen_gone', base + 216 * day, base + 216 * day, 'cancelled'],
    ];
    for (const [id, original, start, status] of exceptions) {
      rows.push({
        ...event(id, at(start), at(start + 3_600_000), {
          recurringEventId: 'seriesopen',
          originalStartTime: new Date(original),
          status,
        }),
        calendarId: 'cal_b',
      });
    }
    for (const row of rows) {
      await store.insert(row);
    }
    await db.pool.query('ANALYZE local_events');

    const all = await store.listRange('cal_b', { showDeleted: true, limit: 100_000 });
    // (cal_b also holds rows of the tests above.)
    expect(all.length).toBeGreaterThanOrEqual(rows.length);
    const reach = 31 * day;
    const oracle = (min: number | undefined, max: number | undefined, showDeleted: boolean) =>
      all
        .filter((row) => {
          const start = row.startAt.getTime();
          const end = row.endAt.getTime();
          const original = row.originalStartTime?.getTime() ?? null;
          if (!showDeleted && row.status === 'cancelled' && row.recurringEventId === null) {
            return false;
          }
          if (max !== undefined && !(start < max || (original !== null && original < max))) {
            return false;
          }
          if (min === undefined) {
            return true;
          }
          const own =
            row.recurrence.length > 0
              ? row.seriesEndAt === null || row.seriesEndAt.getTime() > min
              : end > min || (end === start && start >= min);
          return own || (original !== null && original >= min - reach);
        })
        .map((row) => row.id);
    const windows: [number | undefined, number | undefined][] = [
      [base + 200 * day, base + 230 * day],
      [base + 200 * day, base + 200 * day],
      [base + 216 * day, base + 217 * day],
      [base + 305 * day, base + 306 * day],
      [base + 700 * day, base + 760 * day],
      [base - 30 * day, base + 5 * day],
      [base + 230 * day, undefined],
      [undefined, base + 15 * day],
      [base + 240 * day, base + 220 * day],
    ];
    for (const [min, max] of windows) {
      for (const showDeleted of [false, true]) {
        const read = await store.listRange('cal_b', {
          ...(min === undefined ? {} : { timeMin: new Date(min) }),
          ...(max === undefined ? {} : { timeMax: new Date(max) }),
          showDeleted,
          limit: 100_000,
        });
        expect(
          read.map((row) => row.id),
          `${min} ${max} ${showDeleted}`,
        ).toEqual(oracle(min, max, showDeleted));
      }
    }
  });

  it('answers a range query on a larger calendar through the start index', async () => {
    await db.pool.query(
      `INSERT INTO local_events (calendar_id, id, ical_uid, start_at, end_at, etag, updated_at)
       SELECT 'cal_a', 'bulk' || g, 'bulk' || g, now() + g * interval '1 hour', now() + g * interval '1 hour' + interval '30 minutes', '"1"', now()
       FROM generate_series(1, 20000) g`,
    );
    await db.pool.query('ANALYZE local_events');
    const t0 = performance.now();
    const rows = await store.listRange('cal_a', {
      timeMin: new Date(Date.now() + 100 * 3_600_000),
      timeMax: new Date(Date.now() + 124 * 3_600_000),
      showDeleted: false,
      limit: 250,
    });
    expect(rows.length).toBeGreaterThanOrEqual(23);
    expect(performance.now() - t0).toBeLessThan(200);
  });
});
