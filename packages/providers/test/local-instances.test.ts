import { LocalEventStore } from '@calgate/store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalendarRef, type EventInput, LocalCalendarProvider } from '../src/index.ts';
import { type LocalFixture, localFixture, rejectsWith } from './local-fixtures.ts';

let fx: LocalFixture;
let provider: LocalCalendarProvider;

beforeAll(async () => {
  fx = await localFixture();
  provider = new LocalCalendarProvider(new LocalEventStore(fx.db));
});

afterAll(async () => {
  await fx.db.close();
});

/** Daily 09:00–10:00 Berlin, five days from Monday 2026-03-23 (DST starts on the 29th). */
const daily = (extra: Partial<EventInput> = {}): EventInput => ({
  summary: 'Standup',
  location: 'Room 1',
  start: { dateTime: '2026-03-23T09:00:00', timeZone: 'Europe/Berlin' },
  end: { dateTime: '2026-03-23T10:00:00', timeZone: 'Europe/Berlin' },
  recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
  ...extra,
});

const instances = async (
  cal: CalendarRef,
  timeMin = '2026-03-01T00:00:00Z',
  timeMax = '2026-05-01T00:00:00Z',
) =>
  (
    await provider.listEvents(cal, {
      maxResults: 250,
      singleEvents: true,
      orderBy: 'startTime',
      timeMin,
      timeMax,
    })
  ).items;

describe('single instances of a local series', () => {
  it('patches one instance into an exception that list and get return instead', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    const id = `${master.id}_20260325T080000Z`;
    const before = await provider.getEvent(cal, id);
    expect(before).toMatchObject({ recurringEventId: master.id, summary: 'Standup' });
    expect(before.etag).not.toBe(master.etag);
    expect((await instances(cal)).find((e) => e.id === id)?.etag).toBe(before.etag);

    const patched = await provider.patchEvent(
      cal,
      id,
      {
        summary: 'Standup (moved)',
        start: { dateTime: '2026-03-25T11:00:00+01:00' },
        end: { dateTime: '2026-03-25T11:30:00+01:00' },
      },
      { ifMatch: before.etag },
    );
    expect(patched).toMatchObject({
      id,
      summary: 'Standup (moved)',
      location: 'Room 1',
      recurringEventId: master.id,
      originalStartTime: { dateTime: '2026-03-25T09:00:00+01:00' },
      start: { dateTime: '2026-03-25T11:00:00+01:00' },
    });
    expect(patched.recurrence).toBeUndefined();

    const listed = await instances(cal);
    expect(listed.map((e) => [e.id.slice(-16), e.summary, e.start.dateTime])).toEqual([
      ['20260323T080000Z', 'Standup', '2026-03-23T09:00:00+01:00'],
      ['20260324T080000Z', 'Standup', '2026-03-24T09:00:00+01:00'],
      ['20260325T080000Z', 'Standup (moved)', '2026-03-25T11:00:00+01:00'],
      ['20260326T080000Z', 'Standup', '2026-03-26T09:00:00+01:00'],
      ['20260327T080000Z', 'Standup', '2026-03-27T09:00:00+01:00'],
    ]);
    expect(await provider.getEvent(cal, id)).toEqual(patched);

    // Patching the exception again works on the row, guarded by its own ETag.
    await rejectsWith(
      provider.patchEvent(cal, id, { summary: 'x' }, { ifMatch: before.etag }),
      'precondition_failed',
    );
    const again = await provider.patchEvent(cal, id, { colorId: '5' }, { ifMatch: patched.etag });
    expect(again).toMatchObject({ colorId: '5', summary: 'Standup (moved)' });
    await rejectsWith(
      provider.patchEvent(cal, id, { recurrence: ['RRULE:FREQ=WEEKLY'] }),
      'invalid_argument',
    );
  });

  it('keeps an instance moved out of the window hidden where it was', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    await provider.patchEvent(cal, `${master.id}_20260324T080000Z`, {
      start: { dateTime: '2026-04-20T09:00:00+02:00' },
      end: { dateTime: '2026-04-20T10:00:00+02:00' },
    });
    const march = await instances(cal, '2026-03-23T00:00:00Z', '2026-03-28T00:00:00Z');
    expect(march.map((e) => e.start.dateTime?.slice(0, 10))).toEqual([
      '2026-03-23',
      '2026-03-25',
      '2026-03-26',
      '2026-03-27',
    ]);
    const april = await instances(cal, '2026-04-01T00:00:00Z', '2026-04-30T00:00:00Z');
    expect(april.map((e) => e.start.dateTime)).toEqual(['2026-04-20T09:00:00+02:00']);
    const masters = await provider.listEvents(cal, {
      maxResults: 50,
      singleEvents: false,
      timeMin: '2026-03-23T00:00:00Z',
      timeMax: '2026-03-28T00:00:00Z',
    });
    expect(masters.items.map((e) => e.id)).toEqual([master.id]);
  });

  it('deletes one instance with a cancelled exception; a second delete says it is already deleted', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    const id = `${master.id}_20260326T080000Z`;
    const instance = await provider.getEvent(cal, id);
    await rejectsWith(provider.deleteEvent(cal, id, { ifMatch: '"stale"' }), 'precondition_failed');
    await provider.deleteEvent(cal, id, { ifMatch: instance.etag });
    expect((await instances(cal)).map((e) => e.id)).not.toContain(id);
    expect((await provider.getEvent(cal, id)).status).toBe('cancelled');
    const again = await rejectsWith(provider.deleteEvent(cal, id), 'not_found');
    expect(again.context.alreadyDeleted).toBe(true);
    await rejectsWith(provider.patchEvent(cal, id, { summary: 'back?' }), 'not_found');
    const deleted = await provider.listEvents(cal, { maxResults: 50, singleEvents: true, showDeleted: true });
    expect(deleted.items.find((e) => e.id === id)?.status).toBe('cancelled');
  });

  it('refuses ids that name no instance, and reports instances of a deleted series as already deleted', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    await rejectsWith(provider.getEvent(cal, `${master.id}_20260325T090000Z`), 'not_found');
    await rejectsWith(
      provider.patchEvent(cal, `${master.id}_20260401T080000Z`, { summary: 'x' }),
      'not_found',
    );
    await rejectsWith(provider.deleteEvent(cal, `${master.id}_20260322T080000Z`), 'not_found');
    await rejectsWith(provider.deleteEvent(cal, 'nosuchmaster_20260325T080000Z'), 'not_found');

    const moved = `${master.id}_20260323T080000Z`;
    await provider.patchEvent(cal, moved, { summary: 'Kept?' });
    await provider.deleteEvent(cal, master.id);
    expect(await instances(cal)).toEqual([]);
    expect((await provider.getEvent(cal, moved)).status).toBe('cancelled');
    const gone = await rejectsWith(provider.deleteEvent(cal, `${master.id}_20260324T080000Z`), 'not_found');
    expect(gone.context.alreadyDeleted).toBe(true);
  });

  it('handles all-day series instances by date key', async () => {
    const cal = await fx.newCalendar('America/New_York');
    const master = await provider.insertEvent(cal, {
      summary: 'Focus day',
      start: { date: '2026-11-02' },
      end: { date: '2026-11-03' },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    });
    const id = `${master.id}_20261109`;
    const patched = await provider.patchEvent(cal, id, { transparency: 'transparent' });
    expect(patched).toMatchObject({
      start: { date: '2026-11-09' },
      originalStartTime: { date: '2026-11-09' },
    });
    await provider.deleteEvent(cal, `${master.id}_20261116`);
    const listed = await instances(cal, '2026-11-01T00:00:00Z', '2026-12-01T00:00:00Z');
    expect(listed.map((e) => [e.start.date, e.transparency])).toEqual([
      ['2026-11-02', 'opaque'],
      ['2026-11-09', 'transparent'],
    ]);
  });

  it('creates one exception when two writers patch the same instance at once', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    const id = `${master.id}_20260324T080000Z`;
    const results = await Promise.all([
      provider.patchEvent(cal, id, { summary: 'A' }),
      provider.patchEvent(cal, id, { location: 'B' }),
    ]);
    expect(results.map((e) => e.id)).toEqual([id, id]);
    const final = await provider.getEvent(cal, id);
    expect(final).toMatchObject({ summary: 'A', location: 'B' });
    expect((await instances(cal)).filter((e) => e.id === id)).toHaveLength(1);
  });
});

describe('changing a whole series', () => {
  it('regenerates its occurrences when its times change, discarding changes to single ones (no duplicates)', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    await provider.patchEvent(cal, `${master.id}_20260325T080000Z`, { summary: 'Standup (special)' });
    await provider.deleteEvent(cal, `${master.id}_20260326T080000Z`);
    expect((await instances(cal)).map((e) => e.summary)).toEqual([
      'Standup',
      'Standup',
      'Standup (special)',
      'Standup',
    ]);

    await provider.patchEvent(cal, master.id, {
      start: { dateTime: '2026-03-23T10:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-23T11:00:00', timeZone: 'Europe/Berlin' },
    });
    const after = await instances(cal);
    expect(after).toHaveLength(5);
    expect(after.every((e) => e.summary === 'Standup')).toBe(true);
    expect(after.map((e) => e.start.dateTime?.slice(11, 16))).toEqual([
      '10:00',
      '10:00',
      '10:00',
      '10:00',
      '10:00',
    ]);
  });

  it('keeps changes to single occurrences when only the text of the series changes', async () => {
    const cal = await fx.newCalendar('Europe/Berlin');
    const master = await provider.insertEvent(cal, daily());
    await provider.patchEvent(cal, `${master.id}_20260325T080000Z`, { summary: 'Standup (special)' });
    await provider.patchEvent(cal, master.id, { location: 'Room 2' });
    expect((await instances(cal)).map((e) => e.summary)).toContain('Standup (special)');
  });
});
