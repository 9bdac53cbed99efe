/**
 * A new start alone keeps the length of every occurrence it moves: a whole series (by its id or
 * scope all), a split (thisAndFollowing) and one occurrence, timed and all-day, on a local
 * calendar and on a Google calendar (emulator, read through the mirror) alike.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'calgate-series.apps.googleusercontent.com', clientSecret: 'series-secret' };
const ANN = 'ann@example.com';
const MINUTE = 60_000;

interface Time {
  dateTime?: string;
  date?: string;
}
interface Ev {
  id: string;
  summary?: string;
  start: Time;
  end: Time;
  recurringEventId?: string;
}

const calendars: Record<'local' | 'google', string> = { local: '', google: '' };
let emulator: TestEmulator;
let gw: TestGateway;
let client: Client;

beforeAll(async () => {
  emulator = await startTestEmulator(CLIENT, { accounts: [{ email: ANN, timeZone: 'Europe/Berlin' }] });
  gw = await startTestGateway({ ...emulator.env, ...HIGH_RATE_LIMITS });
  const tenant = await gw.seedTenant('Acme');
  calendars.local = await gw.localCalendar(tenant.tenantId, 'Work', 'Europe/Berlin');
  await gw.grant(tenant.tenantId, tenant.keyId, calendars.local, { read: true, write: true });
  calendars.google = await connectGoogleAccount(gw, emulator, tenant, ANN, 'write');
  client = await connectClient(gw.mcpUrl, tenant.secret);
});

afterAll(async () => {
  await client?.close();
  await gw?.stop();
  await emulator?.close();
});

async function call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
  return result.structuredContent as Record<string, unknown>;
}

const minutes = (event: { start: Time; end: Time }) =>
  (Date.parse(event.end.dateTime ?? '') - Date.parse(event.start.dateTime ?? '')) / MINUTE;
const clock = (time: Time) => time.dateTime?.slice(11, 16);

describe.each(['local', 'google'] as const)(
  'update_event with a new start alone on a %s calendar',
  (kind) => {
    const calendarId = () => calendars[kind];

    async function series(summary: string, start: Time, end: Time, rule: string): Promise<string> {
      const out = await call('create_event', {
        calendarId: calendarId(),
        summary,
        start: { ...start, ...(start.dateTime === undefined ? {} : { timeZone: 'Europe/Berlin' }) },
        end: { ...end, ...(end.dateTime === undefined ? {} : { timeZone: 'Europe/Berlin' }) },
        recurrence: [rule],
      });
      return out.eventId as string;
    }

    async function occurrences(seriesIds: string[], timeMin: string, timeMax: string): Promise<Ev[]> {
      const out = await call('list_events', { calendarId: calendarId(), timeMin, timeMax, maxResults: 100 });
      return (out.events as Ev[]).filter((event) => seriesIds.includes(event.recurringEventId ?? ''));
    }

    it('on the series id keeps every occurrence 15 minutes, also when the start is after the old end', async () => {
      const id = await series(
        'Standup',
        { dateTime: '2027-02-01T09:00:00' },
        { dateTime: '2027-02-01T09:15:00' },
        'RRULE:FREQ=DAILY;COUNT=4',
      );
      const out = await call('update_event', {
        calendarId: calendarId(),
        eventId: id,
        start: { dateTime: '2027-02-01T09:30:00+01:00' },
      });
      expect(minutes((out as { event: Ev }).event)).toBe(15);
      const list = await occurrences([id], '2027-02-01T00:00:00Z', '2027-02-06T00:00:00Z');
      expect(list.map((e) => [clock(e.start), clock(e.end)])).toEqual(Array(4).fill(['09:30', '09:45']));
    });

    it('with scope all from one occurrence keeps every occurrence 15 minutes', async () => {
      const id = await series(
        'Check-in',
        { dateTime: '2027-02-08T16:00:00' },
        { dateTime: '2027-02-08T16:15:00' },
        'RRULE:FREQ=DAILY;COUNT=3',
      );
      const [, second] = await occurrences([id], '2027-02-08T00:00:00Z', '2027-02-12T00:00:00Z');
      await call('update_event', {
        calendarId: calendarId(),
        eventId: second?.id,
        scope: 'all',
        start: { dateTime: '2027-02-09T17:00:00+01:00' },
      });
      const list = await occurrences([id], '2027-02-08T00:00:00Z', '2027-02-12T00:00:00Z');
      expect(list.map((e) => [clock(e.start), clock(e.end)])).toEqual(Array(3).fill(['17:00', '17:15']));
    });

    it('with scope thisAndFollowing builds the new series 60 minutes long, as the old one', async () => {
      const id = await series(
        'Planning',
        { dateTime: '2027-03-01T10:00:00' },
        { dateTime: '2027-03-01T11:00:00' },
        'RRULE:FREQ=DAILY;COUNT=5',
      );
      const before = await occurrences([id], '2027-03-01T00:00:00Z', '2027-03-07T00:00:00Z');
      const out = await call('update_event', {
        calendarId: calendarId(),
        eventId: before[2]?.id,
        scope: 'thisAndFollowing',
        start: { dateTime: '2027-03-03T09:30:00+01:00' },
      });
      expect(out.scope).toBe('thisAndFollowing');
      expect(minutes((out as { event: Ev }).event)).toBe(60);
      const list = await occurrences(
        [id, out.eventId as string],
        '2027-03-01T00:00:00Z',
        '2027-03-07T00:00:00Z',
      );
      expect(list.map((e) => [clock(e.start), clock(e.end)])).toEqual([
        ['10:00', '11:00'],
        ['10:00', '11:00'],
        ['09:30', '10:30'],
        ['09:30', '10:30'],
        ['09:30', '10:30'],
      ]);
    });

    it('on one occurrence keeps its 45 minutes, also when the start is after its old end', async () => {
      const id = await series(
        'Review',
        { dateTime: '2027-03-08T10:00:00' },
        { dateTime: '2027-03-08T10:45:00' },
        'RRULE:FREQ=DAILY;COUNT=3',
      );
      const before = await occurrences([id], '2027-03-08T00:00:00Z', '2027-03-12T00:00:00Z');
      const out = await call('update_event', {
        calendarId: calendarId(),
        eventId: before[1]?.id,
        start: { dateTime: '2027-03-09T11:00:00+01:00' },
      });
      expect(out.scope).toBe('thisEvent');
      const list = await occurrences([id], '2027-03-08T00:00:00Z', '2027-03-12T00:00:00Z');
      expect(list.map((e) => [clock(e.start), clock(e.end)])).toEqual([
        ['10:00', '10:45'],
        ['11:00', '11:45'],
        ['10:00', '10:45'],
      ]);
    });

    it('a new end alone before the start is refused, by series id or scope all, and nothing changes', async () => {
      const id = await series(
        'Retro',
        { dateTime: '2027-04-05T14:00:00' },
        { dateTime: '2027-04-05T15:00:00' },
        'RRULE:FREQ=DAILY;COUNT=2',
      );
      const window = ['2027-04-05T00:00:00Z', '2027-04-08T00:00:00Z'] as const;
      const [, second] = await occurrences([id], ...window);
      for (const eventId of [id, second?.id]) {
        const refused = await client.callTool({
          name: 'update_event',
          arguments: {
            calendarId: calendarId(),
            eventId,
            scope: 'all',
            end: { dateTime: `${eventId === id ? '2027-04-05' : '2027-04-06'}T13:00:00+02:00` },
          },
        });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/end must be later than start/);
      }
      const list = await occurrences([id], ...window);
      expect(list.map((e) => [clock(e.start), clock(e.end)])).toEqual(Array(2).fill(['14:00', '15:00']));
    });

    it('on an all-day series keeps each occurrence two days: series id, split and one occurrence', async () => {
      const id = await series(
        'Offsite',
        { date: '2027-05-03' },
        { date: '2027-05-05' },
        'RRULE:FREQ=WEEKLY;COUNT=4',
      );
      const window = ['2027-05-01T00:00:00Z', '2027-06-05T00:00:00Z'] as const;
      await call('update_event', { calendarId: calendarId(), eventId: id, start: { date: '2027-05-04' } });
      let list = await occurrences([id], ...window);
      expect(list.map((e) => [e.start.date, e.end.date])).toEqual([
        ['2027-05-04', '2027-05-06'],
        ['2027-05-11', '2027-05-13'],
        ['2027-05-18', '2027-05-20'],
        ['2027-05-25', '2027-05-27'],
      ]);

      const split = await call('update_event', {
        calendarId: calendarId(),
        eventId: list[2]?.id,
        scope: 'thisAndFollowing',
        start: { date: '2027-05-19' },
      });
      const tail = split.eventId as string;
      list = await occurrences([id, tail], ...window);
      expect(list.map((e) => [e.start.date, e.end.date])).toEqual([
        ['2027-05-04', '2027-05-06'],
        ['2027-05-11', '2027-05-13'],
        ['2027-05-19', '2027-05-21'],
        ['2027-05-26', '2027-05-28'],
      ]);

      await call('update_event', {
        calendarId: calendarId(),
        eventId: list[1]?.id,
        start: { date: '2027-05-14' },
      });
      list = await occurrences([id, tail], ...window);
      expect(list.map((e) => [e.start.date, e.end.date])).toEqual([
        ['2027-05-04', '2027-05-06'],
        ['2027-05-14', '2027-05-16'],
        ['2027-05-19', '2027-05-21'],
        ['2027-05-26', '2027-05-28'],
      ]);
    });
  },
);
