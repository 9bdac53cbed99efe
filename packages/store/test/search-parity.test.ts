/**
 * SQL decides a text search exactly as @calgate/core's matcher does: the same events, stored in
 * the mirror and in a local calendar, are searched in Postgres and by the matcher with queries
 * chosen to sit on every edge (accents, case, punctuation, word beginnings, phrases, people,
 * scripts without spaces, LIKE's wildcards), and the answers must be the same.
 */
import { eventMatcher, type SearchableEvent } from '@calgate/core';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalEventStore, MirrorRepository, migrate, type NewLocalEvent } from '../src/index.ts';
import { mirrorEvent } from './mirror-events.ts';

const TEXTS: SearchableEvent[] = [
  { summary: 'Lunch with Carla', location: 'Café Zoë, Zürich' },
  { summary: 'CAFÉ planning', description: 'Menü und Straße klären' },
  { summary: 'Board meeting', attendees: [{ email: 'pat@acme.com', displayName: 'Pat Smith' }] },
  { summary: 'Patent review', description: '50%_off \\ back_slash' },
  { summary: 'Compat check', organizer: { email: 'olga@partner.net', displayName: 'Olga Petrova' } },
  { summary: 'Réunion d’équipe', attendees: [{ email: 'jo@acme.com', displayName: "Jo O'Brien" }] },
  { summary: '定例会議 (週次)', location: 'İstanbul ofisi' },
  { summary: 'ΟΔΟΣ ﬁnance ①', description: 'line one\nline two\ttab' },
  { summary: 'Zoe', description: 'bring | pipes' },
  { summary: 'q3-review', attendees: [{ email: 'x@y.z' }, { email: 'noname@acme.com', displayName: '' }] },
  {},
];

const QUERIES = [
  'carla lunch',
  'cafe',
  'caf',
  'CAFÉ zoe',
  'zurich',
  'strasse',
  'straße menu',
  'pat',
  'pat@acme.com',
  'acme.com',
  'cme.com',
  'smith pat',
  'olga',
  'partner.net',
  "o'brien",
  'reunion equipe',
  'arla',
  '会議',
  '議会',
  'istanbul',
  'οδος',
  'finance 1',
  '50%',
  '0%_',
  '_off',
  'back_slash',
  '\\',
  '%',
  'zoe.bring',
  'zoe bring',
  'line two',
  'q3-rev',
  'q-review',
  'x@y',
  'noname',
  'e',
  'z',
];

const ids = TEXTS.map((_, index) => `searchdoc${String(index).padStart(3, '0')}`);

let db: TestDatabase;
let mirror: MirrorRepository;
let local: LocalEventStore;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_s', name: 'S' } });
  for (const [connection, provider] of [
    ['con_g', 'google'],
    ['con_l', 'local'],
  ] as const) {
    await db.prisma.connection.create({
      data: { id: connection, tenantId: 'tnt_s', provider, accountEmail: connection, auth: 'none' },
    });
  }
  for (const [id, connectionId] of [
    ['cal_g', 'con_g'],
    ['cal_l', 'con_l'],
  ] as const) {
    await db.prisma.calendar.create({
      data: { id, tenantId: 'tnt_s', connectionId, externalId: id, summary: id, timeZone: 'UTC' },
    });
  }
  mirror = new MirrorRepository(db);
  local = new LocalEventStore(db);
  await mirror.applyPage(
    'cal_g',
    'tnt_s',
    TEXTS.map((text, index) =>
      mirrorEvent(ids[index] as string, {
        summary: text.summary ?? null,
        raw: { id: ids[index], ...text },
      }),
    ),
    { nextSyncToken: 's' },
  );
  for (const [index, text] of TEXTS.entries()) {
    const id = ids[index] as string;
    const row: NewLocalEvent = {
      calendarId: 'cal_l',
      id,
      iCalUid: `${id}@calgate`,
      status: 'confirmed',
      summary: text.summary ?? null,
      description: text.description ?? null,
      location: text.location ?? null,
      allDay: false,
      startAt: new Date(Date.UTC(2026, 2, 2, index)),
      endAt: new Date(Date.UTC(2026, 2, 2, index + 1)),
      startDate: null,
      endDate: null,
      startTimeZone: null,
      endTimeZone: null,
      recurrence: [],
      seriesEndAt: null,
      recurringEventId: null,
      originalStartTime: null,
      attendees: text.attendees ?? null,
      reminders: null,
      transparency: 'opaque',
      visibility: 'default',
      colorId: null,
      sequence: 0,
      etag: '"1"',
    };
    await local.insert(row);
  }
});

afterAll(async () => {
  await db.close();
});

/** What the matcher says (local events have no organizer: Calgate's calendars record none). */
function expected(query: string, withOrganizer: boolean): string[] {
  const match = eventMatcher(query);
  return ids.filter((_, index) => {
    const { organizer, ...rest } = TEXTS[index] as SearchableEvent;
    return match?.(withOrganizer ? { ...rest, organizer } : rest) ?? false;
  });
}

describe('SQL decides as the matcher does', () => {
  it.each(QUERIES)('%s', async (query) => {
    const window = { timeMin: new Date('2026-03-01T00:00:00Z'), timeMax: new Date('2026-03-04T00:00:00Z') };
    const found = (rows: { eventId: string }[]) => rows.map((row) => row.eventId).sort();
    const want = expected(query, true);
    expect(found(await mirror.read('cal_g', { ...window, query }))).toEqual(want);
    expect(found((await mirror.search(['cal_g'], query, 100)).map((hit) => hit.event))).toEqual(want);
    const first = await mirror.readFirst(['cal_g'], { ...window, query, first: 100 });
    expect(found(first.get('cal_g')?.rows ?? [])).toEqual(want);
    const rows = await local.listRange('cal_l', { ...window, query, showDeleted: false, limit: 100 });
    expect(rows.map((row) => row.id).sort()).toEqual(expected(query, false));
  });

  it('has queries that find something and queries that find nothing', () => {
    const sizes = QUERIES.map((query) => expected(query, true).length);
    expect(sizes.filter((n) => n > 0).length).toBeGreaterThan(20);
    expect(sizes.filter((n) => n === 0).length).toBeGreaterThan(5);
  });
});

describe('local rows and their documents', () => {
  it('rewrites the document when the searched text changes', async () => {
    const id = ids[0] as string;
    const before = await local.get('cal_l', id);
    const updated = await local.update('cal_l', id, before?.etag ?? '', {
      summary: 'Dinner with Bruno',
      etag: '"2"',
    });
    expect(updated?.summary).toBe('Dinner with Bruno');
    const window = { timeMin: new Date('2026-03-01T00:00:00Z'), timeMax: new Date('2026-03-04T00:00:00Z') };
    const search = async (query: string) =>
      (await local.listRange('cal_l', { ...window, query, showDeleted: false, limit: 100 })).map((r) => r.id);
    expect(await search('bruno dinner')).toEqual([id]);
    expect(await search('carla')).toEqual([]);
    // The location was kept, and is still searched.
    expect(await search('zurich')).toEqual([id]);
    // A stale ETag changes nothing.
    expect(await local.update('cal_l', id, '"1"', { summary: 'Stale', etag: '"3"' })).toBeNull();
    expect(await search('stale')).toEqual([]);
  });

  it('reads rows written before documents were kept, for the caller to decide', async () => {
    const id = ids[1] as string;
    await db.pool.query('UPDATE local_events SET search_doc = NULL WHERE calendar_id = $1 AND id = $2', [
      'cal_l',
      id,
    ]);
    const window = { timeMin: new Date('2026-03-01T00:00:00Z'), timeMax: new Date('2026-03-04T00:00:00Z') };
    const rows = await local.listRange('cal_l', {
      ...window,
      query: 'nothing like it',
      showDeleted: false,
      limit: 100,
    });
    expect(rows.map((row) => row.id)).toEqual([id]);
    // Migrating fills the document in: the row is then decided in SQL like the others.
    expect((await migrate(db.pool)).applied).toEqual([]);
    const { rows: docs } = await db.pool.query<{ search_doc: string | null }>(
      'SELECT search_doc FROM local_events WHERE calendar_id = $1 AND id = $2',
      ['cal_l', id],
    );
    expect(docs).toEqual([{ search_doc: 'cafe planning | menu und strasse klaren' }]);
    const after = await local.listRange('cal_l', {
      ...window,
      query: 'nothing like it',
      showDeleted: false,
      limit: 100,
    });
    expect(after).toEqual([]);
  });
});
