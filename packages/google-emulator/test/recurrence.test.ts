import type { calendar_v3 } from '@googleapis/calendar';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleEmulator } from '../src/index.ts';
import { ANN, calendarFor, failure, startSeeded } from './helpers.ts';

let emulator: GoogleEmulator;
let calendar: calendar_v3.Calendar;

beforeAll(async () => {
  emulator = await startSeeded();
  calendar = calendarFor(emulator, ANN);
});
afterAll(async () => {
  await emulator.close();
});

const berlin = (dateTime: string) => ({ dateTime, timeZone: 'Europe/Berlin' });

async function weeklyStandup(extra: string[] = []) {
  const created = await calendar.events.insert({
    calendarId: 'primary',
    requestBody: {
      summary: 'Standup',
      start: berlin('2026-03-16T09:00:00'),
      end: berlin('2026-03-16T09:15:00'),
      recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4', ...extra],
    },
  });
  return created.data.id as string;
}

async function instancesOf(id: string, params: Partial<calendar_v3.Params$Resource$Events$List> = {}) {
  const res = await calendar.events.list({
    calendarId: 'primary',
    singleEvents: true,
    orderBy: 'startTime',
    timeMin: '2026-03-01T00:00:00Z',
    timeMax: '2026-05-01T00:00:00Z',
    ...params,
  });
  return (res.data.items ?? []).filter((e) => e.recurringEventId === id);
}

describe('recurring events', () => {
  it('expands a series across a DST change at the same wall-clock time', async () => {
    const id = await weeklyStandup();
    const items = await instancesOf(id);
    expect(items.map((e) => e.id)).toEqual([
      `${id}_20260316T080000Z`,
      `${id}_20260323T080000Z`,
      `${id}_20260330T070000Z`,
      `${id}_20260406T070000Z`,
    ]);
    expect(items.map((e) => e.start?.dateTime)).toEqual([
      '2026-03-16T09:00:00+01:00',
      '2026-03-23T09:00:00+01:00',
      '2026-03-30T09:00:00+02:00',
      '2026-04-06T09:00:00+02:00',
    ]);
    expect(items[2]?.originalStartTime).toEqual(berlin('2026-03-30T09:00:00+02:00'));
    const series = await calendar.events.list({ calendarId: 'primary', timeMin: '2026-03-01T00:00:00Z' });
    const master = series.data.items?.find((e) => e.id === id);
    expect(master?.recurrence).toEqual(['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4']);
  });

  it('keeps a moved and a cancelled instance as exceptions of the series', async () => {
    const id = await weeklyStandup();
    const second = `${id}_20260323T080000Z`;
    const third = `${id}_20260330T070000Z`;
    const moved = await calendar.events.patch({
      calendarId: 'primary',
      eventId: second,
      requestBody: {
        summary: 'Standup (moved)',
        start: berlin('2026-03-24T10:00:00'),
        end: berlin('2026-03-24T10:15:00'),
      },
    });
    expect(moved.data).toMatchObject({ id: second, recurringEventId: id, summary: 'Standup (moved)' });
    expect(moved.data.originalStartTime?.dateTime).toBe('2026-03-23T09:00:00+01:00');
    await calendar.events.delete({ calendarId: 'primary', eventId: third });

    // A change to the series reaches the instances that did not override the field.
    await calendar.events.patch({
      calendarId: 'primary',
      eventId: id,
      requestBody: { location: 'Room 7', summary: 'Daily' },
    });
    const items = await instancesOf(id);
    expect(items.map((e) => [e.id, e.summary, e.location, e.start?.dateTime])).toEqual([
      [`${id}_20260316T080000Z`, 'Daily', 'Room 7', '2026-03-16T09:00:00+01:00'],
      [second, 'Standup (moved)', 'Room 7', '2026-03-24T10:00:00+01:00'],
      [`${id}_20260406T070000Z`, 'Daily', 'Room 7', '2026-04-06T09:00:00+02:00'],
    ]);

    const withDeleted = await instancesOf(id, { showDeleted: true });
    const cancelled = withDeleted.find((e) => e.id === third);
    expect(cancelled).toMatchObject({ status: 'cancelled', recurringEventId: id });
    expect(cancelled?.summary).toBeUndefined();

    // Without singleEvents: the master, the exception, and the cancelled instance.
    const raw = await calendar.events.list({ calendarId: 'primary', timeMin: '2026-03-01T00:00:00Z' });
    const mine = raw.data.items?.filter((e) => e.id === id || e.recurringEventId === id) ?? [];
    expect(mine.map((e) => [e.id, e.status]).sort()).toEqual(
      [
        [id, 'confirmed'],
        [second, 'confirmed'],
        [third, 'cancelled'],
      ].sort(),
    );

    const instances = await calendar.events.instances({ calendarId: 'primary', eventId: id });
    expect(instances.data.items?.map((e) => e.id)).toEqual([
      `${id}_20260316T080000Z`,
      second,
      `${id}_20260406T070000Z`,
    ]);
    const again = await failure(calendar.events.delete({ calendarId: 'primary', eventId: third }));
    expect(again.status).toBe(410);
  });

  it('reports changed and cancelled instances to an incremental singleEvents sync', async () => {
    const full = await calendar.events.list({ calendarId: 'primary', singleEvents: true });
    const token = full.data.nextSyncToken as string;
    const id = await weeklyStandup();
    await calendar.events.delete({ calendarId: 'primary', eventId: `${id}_20260323T080000Z` });
    const delta = await calendar.events.list({ calendarId: 'primary', singleEvents: true, syncToken: token });
    expect(delta.data.items?.map((e) => [e.id, e.status])).toEqual([
      [`${id}_20260316T080000Z`, 'confirmed'],
      [`${id}_20260323T080000Z`, 'cancelled'],
      [`${id}_20260330T070000Z`, 'confirmed'],
      [`${id}_20260406T070000Z`, 'confirmed'],
    ]);
    const next = delta.data.nextSyncToken as string;
    await calendar.events.patch({
      calendarId: 'primary',
      eventId: `${id}_20260406T070000Z`,
      requestBody: { summary: 'Last' },
    });
    const second = await calendar.events.list({ calendarId: 'primary', singleEvents: true, syncToken: next });
    expect(second.data.items?.map((e) => [e.id, e.summary])).toEqual([[`${id}_20260406T070000Z`, 'Last']]);
  });

  it('honours EXDATE and RDATE', async () => {
    const id = await weeklyStandup([
      'EXDATE;TZID=Europe/Berlin:20260323T090000',
      'RDATE;TZID=Europe/Berlin:20260325T090000',
    ]);
    const items = await instancesOf(id);
    expect(items.map((e) => e.start?.dateTime)).toEqual([
      '2026-03-16T09:00:00+01:00',
      '2026-03-25T09:00:00+01:00',
      '2026-03-30T09:00:00+02:00',
      '2026-04-06T09:00:00+02:00',
    ]);
  });

  it('expands all-day series with exclusive end dates and date instance ids', async () => {
    const created = await calendar.events.insert({
      calendarId: 'primary',
      requestBody: {
        summary: 'Weekend',
        start: { date: '2026-03-28' },
        end: { date: '2026-03-30' },
        recurrence: ['RRULE:FREQ=WEEKLY;COUNT=2'],
      },
    });
    const id = created.data.id as string;
    const items = await instancesOf(id);
    expect(items.map((e) => [e.id, e.start?.date, e.end?.date])).toEqual([
      [`${id}_20260328`, '2026-03-28', '2026-03-30'],
      [`${id}_20260404`, '2026-04-04', '2026-04-06'],
    ]);
    // Across the DST change the weekend is 47 hours long in Berlin.
    const fb = await calendar.freebusy.query({
      requestBody: {
        timeMin: '2026-03-27T00:00:00Z',
        timeMax: '2026-03-31T00:00:00Z',
        items: [{ id: 'primary' }],
      },
    });
    const busy = fb.data.calendars?.primary?.busy ?? [];
    expect(busy).toContainEqual({ start: '2026-03-27T23:00:00Z', end: '2026-03-29T22:00:00Z' });
  });

  it('rejects a timed series without a time zone and a broken rule', async () => {
    const noZone = await failure(
      calendar.events.insert({
        calendarId: 'primary',
        requestBody: {
          summary: 'x',
          start: { dateTime: '2026-03-16T09:00:00+01:00' },
          end: { dateTime: '2026-03-16T10:00:00+01:00' },
          recurrence: ['RRULE:FREQ=DAILY'],
        },
      }),
    );
    expect(noZone.data).toMatchObject({ error: { message: 'Missing time zone definition for start time.' } });
    const broken = await failure(
      calendar.events.insert({
        calendarId: 'primary',
        requestBody: {
          summary: 'x',
          start: berlin('2026-03-16T09:00:00'),
          end: berlin('2026-03-16T10:00:00'),
          recurrence: ['RRULE:FREQ=SOMETIMES'],
        },
      }),
    );
    expect(broken.data).toMatchObject({ error: { code: 400, message: 'Invalid recurrence rule.' } });
  });
});
