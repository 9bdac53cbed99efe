import type { calendar_v3 } from '@googleapis/calendar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleEmulator } from '../src/index.ts';
import { ANN, calendarFor, failure, reasonOf, startSeeded, timed } from './helpers.ts';

let emulator: GoogleEmulator;
let calendar: calendar_v3.Calendar;

beforeAll(async () => {
  emulator = await startSeeded();
  calendar = calendarFor(emulator, ANN);
});
afterAll(async () => {
  await emulator.close();
});

const meeting = (summary: string, day = 5, hour = 9): calendar_v3.Schema$Event => ({
  summary,
  start: timed(`2026-01-${String(day).padStart(2, '0')}T${String(hour).padStart(2, '0')}:00:00+01:00`),
  end: timed(`2026-01-${String(day).padStart(2, '0')}T${String(hour + 1).padStart(2, '0')}:00:00+01:00`),
});

async function newCalendar(summary: string): Promise<string> {
  const created = await calendar.calendars.insert({ requestBody: { summary, timeZone: 'Europe/Berlin' } });
  return created.data.id as string;
}

describe('events CRUD', () => {
  it('keeps etags, sequence and updated, and answers 412 on a stale If-Match', async () => {
    const inserted = await calendar.events.insert({
      calendarId: 'primary',
      requestBody: { id: 'crud0001', ...meeting('Planning') },
    });
    expect(inserted.data).toMatchObject({
      id: 'crud0001',
      status: 'confirmed',
      sequence: 0,
      kind: 'calendar#event',
    });
    expect(inserted.data.start?.dateTime).toBe('2026-01-05T09:00:00+01:00');
    const etag = inserted.data.etag as string;
    expect(etag).toMatch(/^"\d+"$/);

    const patched = await calendar.events.patch(
      {
        calendarId: 'primary',
        eventId: 'crud0001',
        requestBody: { ...meeting('Planning', 5, 10), location: 'Room 1' },
      },
      { headers: { 'If-Match': etag } },
    );
    expect(patched.data.etag).not.toBe(etag);
    expect(patched.data.sequence).toBe(1);
    expect(patched.data.location).toBe('Room 1');
    expect(Date.parse(patched.data.updated as string)).toBeGreaterThanOrEqual(
      Date.parse(inserted.data.updated as string),
    );

    const stale = await failure(
      calendar.events.update(
        { calendarId: 'primary', eventId: 'crud0001', requestBody: meeting('Stale') },
        { headers: { 'If-Match': etag } },
      ),
    );
    expect(stale.status).toBe(412);
    expect(reasonOf(stale.data)).toBe('conditionNotMet');

    const updated = await calendar.events.update({
      calendarId: 'primary',
      eventId: 'crud0001',
      requestBody: meeting('Replanned', 5, 10),
    });
    expect(updated.data.summary).toBe('Replanned');
    expect(updated.data.location).toBeUndefined();

    const staleDelete = await failure(
      calendar.events.delete(
        { calendarId: 'primary', eventId: 'crud0001' },
        { headers: { 'If-Match': etag } },
      ),
    );
    expect(staleDelete.status).toBe(412);
    await calendar.events.delete({ calendarId: 'primary', eventId: 'crud0001' });
    const gone = await calendar.events.get({ calendarId: 'primary', eventId: 'crud0001' });
    expect(gone.data.status).toBe('cancelled');
    const again = await failure(calendar.events.delete({ calendarId: 'primary', eventId: 'crud0001' }));
    expect(again.status).toBe(410);
    expect(reasonOf(again.data)).toBe('deleted');
    const reused = await failure(
      calendar.events.insert({ calendarId: 'primary', requestBody: { id: 'crud0001', ...meeting('Again') } }),
    );
    expect(reused.status).toBe(409);
    expect(reasonOf(reused.data)).toBe('duplicate');
  });

  it('validates ids and times the way Google does', async () => {
    const badId = await failure(
      calendar.events.insert({ calendarId: 'primary', requestBody: { id: 'Not_Base32', ...meeting('x') } }),
    );
    expect(badId.status).toBe(400);
    expect(reasonOf(badId.data)).toBe('invalid');
    const backwards = await failure(
      calendar.events.insert({
        calendarId: 'primary',
        requestBody: {
          summary: 'x',
          start: timed('2026-01-05T10:00:00Z'),
          end: timed('2026-01-05T09:00:00Z'),
        },
      }),
    );
    expect(reasonOf(backwards.data)).toBe('timeRangeEmpty');
    const noEnd = await failure(
      calendar.events.insert({
        calendarId: 'primary',
        requestBody: { summary: 'x', start: timed('2026-01-05T10:00:00Z') },
      }),
    );
    expect(noEnd.data).toMatchObject({ error: { code: 400, message: 'Missing end time.' } });
    expect(reasonOf(noEnd.data)).toBe('required');
    const mixed = await failure(
      calendar.events.insert({
        calendarId: 'primary',
        requestBody: { summary: 'x', start: { date: '2026-01-05' }, end: timed('2026-01-05T09:00:00Z') },
      }),
    );
    expect(mixed.status).toBe(400);
  });

  it('lets only the organizer change an invitation', async () => {
    const invitation = await calendar.events.import({
      calendarId: 'primary',
      requestBody: {
        iCalUID: 'invite-1@example.org',
        organizer: { email: 'carol@example.org' },
        attendees: [{ email: 'carol@example.org' }, { email: ANN }],
        ...meeting('Carol’s review'),
      },
    });
    const eventId = invitation.data.id as string;
    expect(invitation.data.organizer).toEqual({ email: 'carol@example.org' });
    expect(invitation.data.attendees?.find((a) => a.email === ANN)?.self).toBe(true);
    const retitle = await failure(
      calendar.events.patch({ calendarId: 'primary', eventId, requestBody: { summary: 'Mine' } }),
    );
    expect(retitle.status).toBe(403);
    expect(reasonOf(retitle.data)).toBe('forbiddenForNonOrganizer');
    const recolored = await calendar.events.patch({
      calendarId: 'primary',
      eventId,
      requestBody: { colorId: '5' },
    });
    expect(recolored.data.colorId).toBe('5');
    const target = await newCalendar('Elsewhere');
    const move = await failure(calendar.events.move({ calendarId: 'primary', eventId, destination: target }));
    expect(reasonOf(move.data)).toBe('forbiddenForNonOrganizer');
  });

  it('moves an event and imports by iCalUID', async () => {
    const target = await newCalendar('Archive');
    const event = await calendar.events.insert({ calendarId: 'primary', requestBody: meeting('Movable') });
    const moved = await calendar.events.move({
      calendarId: 'primary',
      eventId: event.data.id as string,
      destination: target,
    });
    expect(moved.data.organizer?.email).toBe(target);
    const source = await calendar.events.get({ calendarId: 'primary', eventId: event.data.id as string });
    expect(source.data.status).toBe('cancelled');

    const imported = await calendar.events.import({
      calendarId: target,
      requestBody: { iCalUID: 'external-1@example.org', ...meeting('Imported') },
    });
    const reimported = await calendar.events.import({
      calendarId: target,
      requestBody: { iCalUID: 'external-1@example.org', ...meeting('Imported v2') },
    });
    expect(reimported.data.id).toBe(imported.data.id);
    const byUid = await calendar.events.list({ calendarId: target, iCalUID: 'external-1@example.org' });
    expect(byUid.data.items?.map((e) => e.summary)).toEqual(['Imported v2']);
  });

  it('imports a series keeping its iCalUID on every occurrence; iCalUID lists the series and its exceptions', async () => {
    const target = await newCalendar('Imported series');
    const series = await calendar.events.import({
      calendarId: target,
      requestBody: {
        iCalUID: 'standup@example.org',
        summary: 'Standup',
        start: { dateTime: '2026-01-05T09:00:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-01-05T09:15:00', timeZone: 'Europe/Berlin' },
        recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
      },
    });
    expect(series.data.iCalUID).toBe('standup@example.org');
    const instances = await calendar.events.instances({
      calendarId: target,
      eventId: series.data.id as string,
    });
    expect(instances.data.items?.map((e) => e.iCalUID)).toEqual(Array(3).fill('standup@example.org'));
    const [, second, third] = instances.data.items ?? [];
    await calendar.events.patch({
      calendarId: target,
      eventId: second?.id as string,
      requestBody: { summary: 'Standup (late)' },
    });
    await calendar.events.delete({ calendarId: target, eventId: third?.id as string });
    // As Google documents: without singleEvents, a cancelled occurrence is listed even without
    // showDeleted; the series itself is listed only while it is not cancelled.
    const byUid = await calendar.events.list({ calendarId: target, iCalUID: 'standup@example.org' });
    expect(byUid.data.items?.map((e) => [e.status, e.summary ?? null, e.recurringEventId ?? null])).toEqual([
      ['confirmed', 'Standup', null],
      ['confirmed', 'Standup (late)', series.data.id],
      ['cancelled', null, series.data.id],
    ]);
    await calendar.events.delete({ calendarId: target, eventId: series.data.id as string });
    const gone = await calendar.events.list({ calendarId: target, iCalUID: 'standup@example.org' });
    expect(
      gone.data.items?.some((e) => e.recurringEventId === undefined || e.recurringEventId === null),
    ).toBe(false);
    const other = await calendar.events.list({ calendarId: target, iCalUID: 'nobody@example.org' });
    expect(other.data.items).toEqual([]);
  });
});

describe('events.list paging and sync', () => {
  it('pages to completion with a short last page and a sync token only at the end', async () => {
    const id = await newCalendar('Paging');
    for (let day = 1; day <= 7; day++) {
      await calendar.events.insert({ calendarId: id, requestBody: meeting(`Day ${day}`, day) });
    }
    const pages: number[] = [];
    let pageToken: string | undefined;
    let syncToken: string | undefined;
    do {
      const res = await calendar.events.list({
        calendarId: id,
        maxResults: 3,
        ...(pageToken ? { pageToken } : {}),
      });
      pages.push(res.data.items?.length ?? 0);
      pageToken = res.data.nextPageToken ?? undefined;
      syncToken = res.data.nextSyncToken ?? undefined;
      expect(Boolean(pageToken) !== Boolean(syncToken)).toBe(true);
    } while (pageToken);
    expect(pages).toEqual([3, 3, 1]);
    const ordered = await calendar.events.list({
      calendarId: id,
      singleEvents: true,
      orderBy: 'startTime',
      q: 'day',
    });
    expect(ordered.data.items?.map((e) => e.summary)).toEqual([1, 2, 3, 4, 5, 6, 7].map((d) => `Day ${d}`));
  });

  it('clamps maxResults to 2500 and defaults to 250', async () => {
    const events = Array.from({ length: 2600 }, (_, i) => ({
      summary: `Bulk ${i}`,
      start: { dateTime: new Date(Date.UTC(2026, 0, 1) + i * 3_600_000).toISOString() },
      end: { dateTime: new Date(Date.UTC(2026, 0, 1) + (i + 1) * 3_600_000).toISOString() },
    }));
    emulator.admin.seed({ accounts: [{ email: 'bulk@example.com', events }] });
    const bulk = calendarFor(emulator, 'bulk@example.com');
    const big = await bulk.events.list({ calendarId: 'primary', maxResults: 5000 });
    expect(big.data.items).toHaveLength(2500);
    expect(big.data.nextPageToken).toBeTruthy();
    const rest = await bulk.events.list({
      calendarId: 'primary',
      maxResults: 5000,
      pageToken: big.data.nextPageToken as string,
    });
    expect(rest.data.items).toHaveLength(100);
    const byDefault = await bulk.events.list({ calendarId: 'primary' });
    expect(byDefault.data.items).toHaveLength(250);
  });

  it('syncs incrementally, including deletions, and demands a full sync when the token expires', async () => {
    const id = await newCalendar('Sync');
    const keep = await calendar.events.insert({ calendarId: id, requestBody: meeting('Keep') });
    const drop = await calendar.events.insert({ calendarId: id, requestBody: meeting('Drop', 6) });
    const full = await calendar.events.list({ calendarId: id, timeMin: '2026-01-01T00:00:00Z' });
    const token = full.data.nextSyncToken as string;
    const quiet = await calendar.events.list({ calendarId: id, syncToken: token });
    expect(quiet.data.items).toEqual([]);

    await calendar.events.patch({
      calendarId: id,
      eventId: keep.data.id as string,
      requestBody: { summary: 'Kept' },
    });
    await calendar.events.delete({ calendarId: id, eventId: drop.data.id as string });
    const added = await calendar.events.insert({ calendarId: id, requestBody: meeting('Added', 7) });
    const delta = await calendar.events.list({ calendarId: id, syncToken: token });
    const byId = new Map(delta.data.items?.map((e) => [e.id, e]));
    expect(byId.get(keep.data.id)?.summary).toBe('Kept');
    expect(byId.get(drop.data.id)?.status).toBe('cancelled');
    expect(byId.get(added.data.id)?.summary).toBe('Added');
    expect(delta.data.items).toHaveLength(3);
    const next = delta.data.nextSyncToken as string;
    expect((await calendar.events.list({ calendarId: id, syncToken: next })).data.items).toEqual([]);

    const restricted = await failure(
      calendar.events.list({ calendarId: id, syncToken: next, timeMin: '2026-01-01T00:00:00Z' }),
    );
    expect(restricted.status).toBe(400);
    const notDeleted = await failure(
      calendar.events.list({ calendarId: id, syncToken: next, showDeleted: false }),
    );
    expect(notDeleted.status).toBe(400);

    emulator.admin.expireSyncTokens(id);
    const expired = await failure(calendar.events.list({ calendarId: id, syncToken: next }));
    expect(expired.status).toBe(410);
    expect(reasonOf(expired.data)).toBe('fullSyncRequired');
    const garbage = await failure(calendar.events.list({ calendarId: id, syncToken: 'not-a-token' }));
    expect(garbage.status).toBe(410);
    const resync = await calendar.events.list({ calendarId: id });
    expect(resync.data.items?.map((e) => e.summary).sort()).toEqual(['Added', 'Kept']);
    const fresh = await calendar.events.list({
      calendarId: id,
      syncToken: resync.data.nextSyncToken as string,
    });
    expect(fresh.data.items).toEqual([]);
  });

  it('filters by time window, text, updatedMin and deleted state', async () => {
    const id = await newCalendar('Filters');
    await calendar.events.insert({
      calendarId: id,
      requestBody: { ...meeting('Early sync', 3), description: 'alpha' },
    });
    const late = await calendar.events.insert({ calendarId: id, requestBody: meeting('Late review', 20) });
    const window = await calendar.events.list({
      calendarId: id,
      timeMin: '2026-01-10T00:00:00Z',
      timeMax: '2026-01-31T00:00:00Z',
    });
    expect(window.data.items?.map((e) => e.summary)).toEqual(['Late review']);
    const text = await calendar.events.list({ calendarId: id, q: 'ALPHA' });
    expect(text.data.items?.map((e) => e.summary)).toEqual(['Early sync']);
    await calendar.events.delete({ calendarId: id, eventId: late.data.id as string });
    expect((await calendar.events.list({ calendarId: id })).data.items).toHaveLength(1);
    expect((await calendar.events.list({ calendarId: id, showDeleted: true })).data.items).toHaveLength(2);
    const empty = await failure(
      calendar.events.list({
        calendarId: id,
        timeMin: '2026-01-10T00:00:00Z',
        timeMax: '2026-01-01T00:00:00Z',
      }),
    );
    expect(reasonOf(empty.data)).toBe('timeRangeEmpty');
    const ordering = await failure(calendar.events.list({ calendarId: id, orderBy: 'startTime' }));
    expect(ordering.status).toBe(400);
  });
});
