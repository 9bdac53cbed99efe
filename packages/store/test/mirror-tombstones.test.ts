/**
 * A delete written through the mirror leaves a tombstone, so a sync page read from the upstream
 * before the delete (and applied after it) cannot bring the event back; a copy changed upstream
 * after the delete can. Real PostgreSQL; the race is played in a fixed order.
 */
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRepository } from '../src/index.ts';
import { mirrorEvent as event } from './mirror-events.ts';

let db: TestDatabase;
let mirror: MirrorRepository;

const DELETED_AT = new Date('2026-03-05T12:00:00Z');
const BEFORE = new Date('2026-03-05T11:00:00Z');
const AFTER = new Date('2026-03-05T13:00:00Z');

/** What the mirror provider writes through after deleting an event upstream. */
const deletion = (eventId: string, recurringEventId: string | null = null) =>
  event(eventId, {
    status: 'cancelled',
    recurringEventId,
    startAt: null,
    endAt: null,
    updated: DELETED_AT,
    etag: null,
  });

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_t', name: 'tnt_t' } });
  await db.prisma.connection.create({
    data: {
      id: 'con_t',
      tenantId: 'tnt_t',
      provider: 'google',
      accountEmail: 't@example.com',
      auth: 'oauth',
    },
  });
  for (const id of ['cal_t1', 'cal_t2', 'cal_t3']) {
    await db.prisma.calendar.create({
      data: {
        id,
        tenantId: 'tnt_t',
        connectionId: 'con_t',
        externalId: `${id}@x`,
        summary: id,
        timeZone: 'UTC',
      },
    });
  }
  mirror = new MirrorRepository(db);
});

afterAll(async () => {
  await db.close();
});

async function ids(calendarId: string): Promise<string[]> {
  return (await mirror.read(calendarId)).map((row) => row.eventId).sort();
}

/** A calendar whose first full sync is done, holding the given events. */
async function synced(calendarId: string, events: ReturnType<typeof event>[]): Promise<void> {
  await mirror.resetForFullSync(calendarId, 'tnt_t');
  await mirror.applyPage(calendarId, 'tnt_t', events, { nextSyncToken: 's1' });
}

describe('mirror tombstones', () => {
  it('a page read before a write-through delete and applied after it does not bring the event back', async () => {
    const stale = [event('gone', { updated: BEFORE }), event('kept', { updated: BEFORE })];
    await synced('cal_t1', stale);
    // The sync has read its page (the event still there upstream); the delete is written through.
    expect(await mirror.applyWrite('cal_t1', 'tnt_t', [deletion('gone')])).toBe(true);
    expect(await ids('cal_t1')).toEqual(['kept']);
    // The page read before the delete is applied now.
    const outcome = await mirror.applyPage('cal_t1', 'tnt_t', stale, { nextSyncToken: 's2' });
    expect(outcome).toEqual({ upserted: 0, deleted: 0, swept: 0 });
    expect(await ids('cal_t1')).toEqual(['kept']);
    // A later page (the upstream's own delete) changes nothing more.
    await mirror.applyPage('cal_t1', 'tnt_t', [event('gone', { status: 'cancelled', updated: AFTER })], {
      nextSyncToken: 's3',
    });
    expect(await ids('cal_t1')).toEqual(['kept']);
  });

  it("a deleted series' stale exceptions stay gone with it; a copy changed after the delete comes back", async () => {
    const series = event('series', { recurrence: ['RRULE:FREQ=DAILY;COUNT=5'], updated: BEFORE });
    const moved = event('series_20260303T090000Z', {
      recurringEventId: 'series',
      originalStart: new Date('2026-03-03T09:00:00Z'),
      updated: BEFORE,
    });
    await synced('cal_t2', [series, moved]);
    await mirror.applyWrite('cal_t2', 'tnt_t', [deletion('series')]);
    await mirror.applyPage('cal_t2', 'tnt_t', [series, moved], { nextSyncToken: 's2' });
    expect(await ids('cal_t2')).toEqual([]);
    // Made again upstream under the same id after the delete (a restore): newer than the tombstone.
    await mirror.applyPage('cal_t2', 'tnt_t', [{ ...series, updated: AFTER, etag: '"series-2"' }], {
      nextSyncToken: 's3',
    });
    expect(await ids('cal_t2')).toEqual(['series']);
  });

  it('a write-through create after a delete of the same id is stored; other calendars are not affected', async () => {
    await synced('cal_t3', [event('same', { updated: BEFORE })]);
    await mirror.applyWrite('cal_t1', 'tnt_t', [deletion('same')]);
    // The tombstone is cal_t1's: cal_t3's stale copy of an event with the same id is kept.
    await mirror.applyPage('cal_t3', 'tnt_t', [event('same', { updated: BEFORE })], { nextSyncToken: 's2' });
    expect(await ids('cal_t3')).toEqual(['same']);
    await mirror.applyWrite('cal_t3', 'tnt_t', [deletion('same')]);
    expect(await ids('cal_t3')).toEqual([]);
    await mirror.applyWrite('cal_t3', 'tnt_t', [event('same', { updated: AFTER, etag: '"same-2"' })]);
    expect(await ids('cal_t3')).toEqual(['same']);
  });
});
