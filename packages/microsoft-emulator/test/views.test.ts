import { describe, expect, it } from 'vitest';
import { ALICE, baseSeed, type Loose, type MicrosoftSeed, start as startWith } from './helpers.ts';

const W = 'W. Europe Standard Time';
const when = (dateTime: string, timeZone = W) => ({ dateTime, timeZone });

/** Alice's default calendar: a weekly series (Mon/Wed 09:00 Berlin, 6 times) with one moved,
 * one deleted and one cancelled occurrence, plus a single event. */
function seriesSeed(): MicrosoftSeed {
  const seed = baseSeed();
  const calendar = seed.users?.[0]?.calendars?.[0];
  if (calendar) {
    calendar.events = [
      {
        subject: 'Standup',
        start: when('2026-03-23T09:00:00'),
        end: when('2026-03-23T09:15:00'),
        recurrence: {
          pattern: {
            type: 'weekly',
            interval: 1,
            daysOfWeek: ['monday', 'wednesday'],
            firstDayOfWeek: 'monday',
          },
          range: { type: 'numbered', startDate: '2026-03-23', numberOfOccurrences: 6 },
        },
        exceptions: [
          {
            originalStart: '2026-03-25T09:00:00',
            subject: 'Standup (late)',
            start: when('2026-03-25T11:00:00'),
            end: when('2026-03-25T11:30:00'),
          },
        ],
        deletedOccurrences: ['2026-03-30T09:00:00'],
        cancelledOccurrences: ['2026-04-01T09:00:00'],
      },
      { subject: 'Lunch', start: when('2026-03-24T12:00:00'), end: when('2026-03-24T13:00:00') },
    ];
  }
  return seed;
}

const start = () => startWith(seriesSeed());

describe('calendarView', () => {
  it('needs both window bounds and reads offsets; a raw + in the query is not an offset', async () => {
    const { graph } = await start();
    const none = await graph('/me/calendarView');
    expect(none.status).toBe(400);
    expect(none.body.error.code).toBe('ErrorInvalidParameter');
    expect(none.body.error.message).toMatch(/StartDateTime and EndDateTime/);
    const encoded = await graph(
      `/me/calendarView?startDateTime=${encodeURIComponent('2026-03-24T12:30:00+01:00')}&endDateTime=${encodeURIComponent('2026-03-24T13:30:00+01:00')}`,
    );
    expect(encoded.status).toBe(200);
    expect(encoded.body.value.map((e: { subject: string }) => e.subject)).toEqual(['Lunch']);
    const raw = await graph(
      '/me/calendarView?startDateTime=2026-03-24T12:30:00+01:00&endDateTime=2026-03-24T13:30:00+01:00',
    );
    expect(raw.status).toBe(400);
  });

  it('answers occurrences, exceptions and single events, never the master; deleted vanish, cancelled stay flagged', async () => {
    const { graph } = await start();
    const res = await graph(
      '/me/calendarView?startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z&$top=50',
      {
        headers: { prefer: `outlook.timezone="${W}"` },
      },
    );
    const rows = res.body.value.map((e: Loose) => [
      e.type,
      e.start.dateTime.slice(0, 16),
      e.subject,
      e.isCancelled,
    ]);
    expect(rows).toEqual([
      ['occurrence', '2026-03-23T09:00', 'Standup', false],
      ['singleInstance', '2026-03-24T12:00', 'Lunch', false],
      ['exception', '2026-03-25T11:00', 'Standup (late)', false],
      ['exception', '2026-04-01T09:00', 'Canceled: Standup', true],
      ['occurrence', '2026-04-06T09:00', 'Standup', false],
      ['occurrence', '2026-04-08T09:00', 'Standup', false],
    ]);
    const series = res.body.value.filter((e: { type: string }) => e.type !== 'singleInstance');
    expect(new Set(series.map((e: { seriesMasterId: string }) => e.seriesMasterId)).size).toBe(1);
    expect(series[0].recurrence).toBeNull();
    expect(series[0].originalStart).toBe('2026-03-23T08:00:00.0000000Z');
  });

  it('keeps the series on 09:00 Berlin time across a DST change, seen from UTC', async () => {
    const { graph } = await start();
    const res = await graph(
      '/me/calendarView?startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z&$top=50',
    );
    const standups = res.body.value.filter((e: { subject: string }) => e.subject === 'Standup');
    expect(standups.map((e: { start: { dateTime: string } }) => e.start.dateTime)).toEqual([
      '2026-03-23T08:00:00.0000000',
      '2026-04-06T07:00:00.0000000',
      '2026-04-08T07:00:00.0000000',
    ]);
  });

  it('pages with $top (pages may be shorter) and $skip links, and takes $orderby and $select', async () => {
    const { graph, emulator } = await start();
    emulator.admin.setPaging({ shortPages: true });
    const seen: string[] = [];
    let url: string | undefined =
      '/me/calendarView?startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z&$top=4&$select=subject,start';
    const sizes: number[] = [];
    while (url) {
      const page = await graph(url);
      sizes.push(page.body.value.length);
      seen.push(...page.body.value.map((e: { id: string }) => e.id));
      expect(Object.keys(page.body.value[0]).sort()).toEqual(['@odata.etag', 'id', 'start', 'subject']);
      url = page.body['@odata.nextLink'];
    }
    expect(sizes).toEqual([3, 3]);
    expect(new Set(seen).size).toBe(6);
    const desc = await graph(
      '/me/calendarView?startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z&$top=50&$orderby=start/dateTime desc',
    );
    const starts = desc.body.value.map((e: { start: { dateTime: string } }) => e.start.dateTime);
    expect(starts).toEqual([...starts].sort().reverse());
    expect(
      (
        await graph(
          '/me/calendarView?startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z&$orderby=nope',
        )
      ).status,
    ).toBe(400);
  });

  it('changes and deletes one occurrence by its own id, and lists a series through instances', async () => {
    const { graph } = await start();
    const window = 'startDateTime=2026-03-20T00:00:00Z&endDateTime=2026-04-30T00:00:00Z';
    const first = (await graph(`/me/calendarView?${window}&$top=1`)).body.value[0];
    expect(first.type).toBe('occurrence');
    const fetched = await graph(`/me/events/${first.id}`);
    expect(fetched.body).toMatchObject({ id: first.id, type: 'occurrence' });
    const patched = await graph(`/me/events/${first.id}`, {
      method: 'PATCH',
      body: { subject: 'Standup (this one)' },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: first.id, type: 'exception', subject: 'Standup (this one)' });
    const instances = await graph(`/me/events/${first.seriesMasterId}/instances?${window}&$top=50`);
    expect(instances.body.value.map((e: { subject: string }) => e.subject)).toEqual([
      'Standup (this one)',
      'Standup (late)',
      'Canceled: Standup',
      'Standup',
      'Standup',
    ]);
    const later = instances.body.value[3];
    expect((await graph(`/me/events/${later.id}`, { method: 'DELETE' })).status).toBe(204);
    expect((await graph(`/me/events/${later.id}`)).status).toBe(404);
    const after = await graph(`/me/events/${first.seriesMasterId}/instances?${window}&$top=50`);
    expect(after.body.value).toHaveLength(4);
    const master = await graph(`/me/events/${first.seriesMasterId}`);
    expect(master.body.type).toBe('seriesMaster');
    expect(master.body.recurrence.pattern.daysOfWeek).toEqual(['monday', 'wednesday']);
  });

  it('refuses a weekly recurrence without daysOfWeek', async () => {
    const { graph, calendarId } = await start();
    const res = await graph(`/me/calendars/${calendarId('Calendar')}/events`, {
      method: 'POST',
      body: {
        subject: 'Bad',
        start: when('2026-05-04T09:00:00'),
        end: when('2026-05-04T10:00:00'),
        recurrence: {
          pattern: { type: 'weekly', interval: 1 },
          range: { type: 'noEnd', startDate: '2026-05-04' },
        },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(/daysOfWeek/);
  });

  it('getSchedule covers the default calendar only and is refused for personal accounts', async () => {
    const seed = seriesSeed();
    seed.users?.[0]?.calendars?.[1]?.events?.push({
      subject: 'Team only',
      start: when('2026-03-24T14:00:00'),
      end: when('2026-03-24T15:00:00'),
    });
    seed.users?.push({ email: 'pat@outlook.example', accountType: 'personal' });
    const { graph, emulator } = await startWith(seed);
    const res = await graph('/me/calendar/getSchedule', {
      method: 'POST',
      headers: { prefer: `outlook.timezone="${W}"` },
      body: {
        schedules: [ALICE, 'nobody@contoso.example'],
        startTime: when('2026-03-24T12:00:00'),
        endTime: when('2026-03-24T16:00:00'),
        availabilityViewInterval: 60,
      },
    });
    expect(res.status).toBe(200);
    const [alice, nobody] = res.body.value;
    expect(alice.availabilityView).toBe('2000');
    expect(alice.scheduleItems.map((i: { subject: string }) => i.subject)).toEqual(['Lunch']);
    expect(alice.scheduleItems[0].start).toEqual({ dateTime: '2026-03-24T12:00:00.0000000', timeZone: W });
    expect(nobody.error.responseCode).toBe('ErrorInvalidUser');
    const personal = emulator.admin.issueTokens({ email: 'pat@outlook.example' }).access_token;
    const refused = await graph('/me/calendar/getSchedule', {
      method: 'POST',
      token: personal,
      body: {
        schedules: ['pat@outlook.example'],
        startTime: when('2026-03-24T12:00:00'),
        endTime: when('2026-03-24T16:00:00'),
      },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBeDefined();
  });
});
