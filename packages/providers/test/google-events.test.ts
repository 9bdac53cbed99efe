import { CalgateError } from '@calgate/core';
import type { GoogleEmulator } from '@calgate/google-emulator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CalendarEvent, type GoogleCalendarProvider, listAllEvents } from '../src/index.ts';
import {
  ANN,
  oauthProvider,
  recordingProxy,
  ref,
  rejection,
  startEmulator,
  TEAM,
} from './google-fixtures.ts';

const PAGES = 'pages@group.calendar.google.com';
const MANY = 'many@group.calendar.google.com';

let emulator: GoogleEmulator;
let provider: GoogleCalendarProvider;
const annPrimary = ref(ANN, 'Europe/Berlin');

const day = (n: number) => `2026-02-${String(n).padStart(2, '0')}`;

beforeAll(async () => {
  emulator = await startEmulator();
  emulator.admin.seed({
    accounts: [
      {
        email: ANN,
        timeZone: 'Europe/Berlin',
        calendars: [
          {
            id: PAGES,
            summary: 'Pages',
            timeZone: 'Europe/Berlin',
            events: Array.from({ length: 7 }, (_, i) => ({
              summary: `Event ${i + 1}`,
              start: { dateTime: `${day(i + 1)}T09:00:00`, timeZone: 'Europe/Berlin' },
              end: { dateTime: `${day(i + 1)}T10:00:00`, timeZone: 'Europe/Berlin' },
            })),
          },
          {
            id: MANY,
            summary: 'Many',
            timeZone: 'UTC',
            events: Array.from({ length: 2501 }, (_, i) => ({
              summary: `Slot ${i}`,
              start: { dateTime: new Date(Date.UTC(2026, 0, 1) + i * 3600_000).toISOString() },
              end: { dateTime: new Date(Date.UTC(2026, 0, 1) + i * 3600_000 + 1800_000).toISOString() },
            })),
          },
        ],
      },
    ],
  });
  ({ provider } = oauthProvider(emulator, ANN));
});

afterAll(async () => {
  await emulator.close();
});

describe('listing', () => {
  it('pages through 3 pages ending with a short page, via pageToken and listAllEvents', async () => {
    const calendar = ref(PAGES, 'Europe/Berlin');
    const query = { maxResults: 3, singleEvents: true, orderBy: 'startTime' as const };
    const sizes: number[] = [];
    const summaries: string[] = [];
    let pageToken: string | undefined;
    do {
      const page = await provider.listEvents(calendar, { ...query, ...(pageToken ? { pageToken } : {}) });
      sizes.push(page.items.length);
      summaries.push(...page.items.map((e) => e.summary ?? ''));
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined);
    expect(sizes).toEqual([3, 3, 1]);
    expect(summaries).toEqual([1, 2, 3, 4, 5, 6, 7].map((n) => `Event ${n}`));

    const all = await listAllEvents(provider, calendar, query, 100);
    expect(all.items.map((e) => e.summary)).toEqual(summaries);
    expect(all.truncated).toBe(false);
    const bounded = await listAllEvents(provider, calendar, query, 5);
    expect(bounded.items).toHaveLength(5);
    expect(bounded.truncated).toBe(true);
  });

  it('clamps maxResults to 2500 per page', async () => {
    const proxy = await recordingProxy(emulator.url);
    try {
      const { provider: viaProxy } = oauthProvider(emulator, ANN, { baseUrl: proxy.url });
      const calendar = ref(MANY);
      const first = await viaProxy.listEvents(calendar, { maxResults: 5000, singleEvents: false });
      expect(first.items).toHaveLength(2500);
      expect(first.nextPageToken).toBeDefined();
      const second = await viaProxy.listEvents(calendar, {
        maxResults: 5000,
        singleEvents: false,
        pageToken: first.nextPageToken as string,
      });
      expect(second.items).toHaveLength(1);
      expect(second.nextPageToken).toBeUndefined();
      const lists = proxy.seen.filter((r) => r.url.pathname.endsWith('/events'));
      expect(lists.map((r) => r.url.searchParams.get('maxResults'))).toEqual(['2500', '2500']);
    } finally {
      await proxy.close();
    }
  });

  it('passes timeMin, timeMax and q through', async () => {
    const page = await provider.listEvents(ref(PAGES, 'Europe/Berlin'), {
      maxResults: 50,
      singleEvents: true,
      timeMin: '2026-02-02T00:00:00+01:00',
      timeMax: '2026-02-05T00:00:00+01:00',
      query: 'Event 3',
    });
    expect(page.items.map((e) => e.summary)).toEqual(['Event 3']);
  });
});

describe('writes', () => {
  it('maps every field of an inserted event faithfully', async () => {
    const event = await provider.insertEvent(annPrimary, {
      summary: 'Review',
      description: 'Quarterly review',
      location: 'Room 4',
      start: { dateTime: '2026-03-02T14:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-02T15:00:00', timeZone: 'Europe/Berlin' },
      attendees: [{ email: 'bob@example.com', displayName: 'Bob', optional: true }],
      reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 15 }] },
      transparency: 'transparent',
      visibility: 'private',
      colorId: '5',
    });
    expect(event).toMatchObject({
      status: 'confirmed',
      summary: 'Review',
      description: 'Quarterly review',
      location: 'Room 4',
      start: { dateTime: expect.stringMatching(/^2026-03-02T14:00:00/), timeZone: 'Europe/Berlin' },
      end: { timeZone: 'Europe/Berlin' },
      reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 15 }] },
      transparency: 'transparent',
      visibility: 'private',
      colorId: '5',
      organizer: { email: ANN, self: true },
      sequence: 0,
    });
    expect(event.id).toMatch(/^[a-v0-9]{5,}$/);
    expect(event.attendees?.[0]).toMatchObject({ email: 'bob@example.com', optional: true });
    expect(event.etag).toMatch(/^"/);
    for (const key of ['htmlLink', 'iCalUID', 'created', 'updated'] as const) {
      expect(event[key]).toEqual(expect.any(String));
    }
    expect(await provider.getEvent(annPrimary, event.id)).toEqual(event);
  });

  it('answers precondition_failed to a patch with a stale ETag, and sends If-Match', async () => {
    const proxy = await recordingProxy(emulator.url);
    try {
      const { provider: viaProxy } = oauthProvider(emulator, ANN, { baseUrl: proxy.url });
      const created = await viaProxy.insertEvent(annPrimary, {
        summary: 'Draft',
        start: { dateTime: '2026-03-03T09:00:00Z' },
        end: { dateTime: '2026-03-03T10:00:00Z' },
      });
      const patched = await viaProxy.patchEvent(
        annPrimary,
        created.id,
        { summary: 'Final' },
        { ifMatch: created.etag as string, sendUpdates: 'none' },
      );
      expect(patched.summary).toBe('Final');
      expect(patched.etag).not.toBe(created.etag);
      const patch = proxy.seen.find((r) => r.method === 'PATCH');
      expect(patch?.headers['if-match']).toBe(created.etag);
      expect(patch?.url.searchParams.get('sendUpdates')).toBe('none');

      const stale = await rejection(
        viaProxy.patchEvent(annPrimary, created.id, { summary: 'Lost' }, { ifMatch: created.etag as string }),
      );
      expect(stale).toBeInstanceOf(CalgateError);
      expect(stale).toMatchObject({ code: 'precondition_failed', context: { status: 412 } });
      const staleDelete = await rejection(
        viaProxy.deleteEvent(annPrimary, created.id, { ifMatch: created.etag as string }),
      );
      expect(staleDelete).toMatchObject({ code: 'precondition_failed' });
      await viaProxy.deleteEvent(annPrimary, created.id, { ifMatch: patched.etag as string });
      const gone = await rejection(viaProxy.deleteEvent(annPrimary, created.id));
      expect(gone).toMatchObject({ code: 'not_found', context: { alreadyDeleted: true } });
    } finally {
      await proxy.close();
    }
  });

  it('uses a client-chosen id and answers already_exists when it is reused', async () => {
    const input = {
      id: 'calgatebooking0001',
      summary: 'Booked',
      start: { dateTime: '2026-03-04T09:00:00Z' },
      end: { dateTime: '2026-03-04T09:30:00Z' },
    };
    const first = await provider.insertEvent(annPrimary, input);
    expect(first.id).toBe('calgatebooking0001');
    const again = await rejection(provider.insertEvent(annPrimary, input));
    expect(again).toMatchObject({ code: 'already_exists', context: { status: 409 } });
    const missing = await rejection(provider.getEvent(annPrimary, 'nosuchevent1'));
    expect(missing).toMatchObject({ code: 'not_found' });
    const invalid = await rejection(
      provider.insertEvent(annPrimary, { ...input, id: 'UPPER-case!', summary: 'Bad id' }),
    );
    expect(invalid).toMatchObject({ code: 'invalid_argument' });
  });
});

describe('recurring and all-day events', () => {
  it('lists a series with a moved and a cancelled instance as single events', async () => {
    const calendar = ref(TEAM, 'America/New_York');
    const master = await provider.insertEvent(calendar, {
      summary: 'Daily',
      start: { dateTime: '2026-04-06T09:00:00', timeZone: 'America/New_York' },
      end: { dateTime: '2026-04-06T09:30:00', timeZone: 'America/New_York' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=5'],
    });
    expect(master.recurrence).toEqual(['RRULE:FREQ=DAILY;COUNT=5']);
    const window = {
      singleEvents: true,
      orderBy: 'startTime' as const,
      maxResults: 50,
      timeMin: '2026-04-06T00:00:00Z',
      timeMax: '2026-04-12T00:00:00Z',
    };
    const instances = (await provider.listEvents(calendar, window)).items.filter(
      (e) => e.recurringEventId === master.id,
    );
    expect(instances).toHaveLength(5);
    const [, second, third] = instances as [CalendarEvent, CalendarEvent, CalendarEvent];
    await provider.patchEvent(calendar, second.id, {
      start: { dateTime: '2026-04-07T15:00:00', timeZone: 'America/New_York' },
      end: { dateTime: '2026-04-07T15:30:00', timeZone: 'America/New_York' },
    });
    await provider.deleteEvent(calendar, third.id);

    const after = (await provider.listEvents(calendar, window)).items.filter(
      (e) => e.recurringEventId === master.id,
    );
    expect(after).toHaveLength(4);
    expect(after.map((e) => e.id)).not.toContain(third.id);
    const moved = after.find((e) => e.id === second.id);
    expect(moved).toMatchObject({
      recurringEventId: master.id,
      originalStartTime: { dateTime: expect.stringMatching(/^2026-04-07T(09:00:00-04:00|13:00:00Z)$/) },
    });
    expect(Date.parse(moved?.start.dateTime ?? '')).toBe(Date.parse('2026-04-07T15:00:00-04:00'));

    const withDeleted = await provider.listEvents(calendar, { ...window, showDeleted: true });
    const cancelled = withDeleted.items.find((e) => e.id === third.id);
    expect(cancelled?.status).toBe('cancelled');
  });

  it('keeps all-day end dates exclusive across a DST change', async () => {
    const calendar = ref(ANN, 'Europe/Berlin');
    // Berlin moves to summer time on 2026-03-29; the event covers the 28th and the 29th.
    const event = await provider.insertEvent(calendar, {
      summary: 'Offsite',
      start: { date: '2026-03-28' },
      end: { date: '2026-03-30' },
    });
    expect(event.start).toEqual({ date: '2026-03-28' });
    expect(event.end).toEqual({ date: '2026-03-30' });
    const ids = async (timeMin: string, timeMax: string) =>
      (
        await provider.listEvents(calendar, { maxResults: 50, singleEvents: true, timeMin, timeMax })
      ).items.map((e) => e.id);
    // The last covered minute is 23:59 summer time on the 29th; midnight of the 30th is outside.
    expect(await ids('2026-03-29T23:59:00+02:00', '2026-03-30T12:00:00+02:00')).toContain(event.id);
    expect(await ids('2026-03-30T00:00:00+02:00', '2026-03-30T12:00:00+02:00')).not.toContain(event.id);
    // Its first minute is midnight winter time on the 28th.
    expect(await ids('2026-03-27T12:00:00+01:00', '2026-03-28T00:00:00+01:00')).not.toContain(event.id);
    expect(await ids('2026-03-27T12:00:00+01:00', '2026-03-28T00:01:00+01:00')).toContain(event.id);

    const weekly = await provider.insertEvent(calendar, {
      summary: 'Saturday chores',
      start: { date: '2026-03-21' },
      end: { date: '2026-03-22' },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    });
    const instances = (
      await provider.listEvents(calendar, {
        maxResults: 50,
        singleEvents: true,
        orderBy: 'startTime',
        timeMin: '2026-03-20T00:00:00Z',
        timeMax: '2026-04-10T00:00:00Z',
      })
    ).items.filter((e) => e.recurringEventId === weekly.id);
    expect(instances.map((e) => [e.start.date, e.end.date])).toEqual([
      ['2026-03-21', '2026-03-22'],
      ['2026-03-28', '2026-03-29'],
      ['2026-04-04', '2026-04-05'],
    ]);
  });
});
