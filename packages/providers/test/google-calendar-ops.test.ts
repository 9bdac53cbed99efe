import { type GoogleEmulator, startGoogleEmulator } from '@calgate/google-emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import {
  type CalendarRef,
  GoogleCalendarProvider,
  type GoogleProviderOptions,
  standardPalette,
} from '../src/index.ts';
import {
  ANN,
  baseSeed,
  endpointsOf,
  oauthProvider,
  ROBOT,
  ref,
  rejection,
  startEmulator,
  TEAM,
} from './google-fixtures.ts';

let emulator: GoogleEmulator;
let provider: GoogleCalendarProvider;
const annPrimary = ref(ANN, 'Europe/Berlin');

beforeAll(async () => {
  emulator = await startEmulator();
  ({ provider } = oauthProvider(emulator, ANN));
});
afterEach(() => {
  emulator.admin.clearFaults();
});
afterAll(async () => {
  await emulator.close();
});

/** A provider whose token is already fetched, with the request log cleared. */
async function warm(options: Omit<GoogleProviderOptions, 'auth'> = {}): Promise<GoogleCalendarProvider> {
  const { provider: fresh } = oauthProvider(emulator, ANN, options);
  await fresh.listEvents(annPrimary, { maxResults: 1, singleEvents: true });
  emulator.admin.clearRequests();
  return fresh;
}

const calls = (op: string) => emulator.admin.requests().filter((r) => r.op === op);

describe('single instances on Google', () => {
  it('gets, patches (with If-Match) and deletes instances by id, visible in list and get', async () => {
    const master = await provider.insertEvent(annPrimary, {
      summary: 'Standup',
      start: { dateTime: '2026-05-04T09:00:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-05-04T09:15:00', timeZone: 'Europe/Berlin' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=4'],
    });
    const second = `${master.id}_20260505T070000Z`;
    const third = `${master.id}_20260506T070000Z`;
    const instance = await provider.getEvent(annPrimary, second);
    expect(instance).toMatchObject({ id: second, recurringEventId: master.id, summary: 'Standup' });

    const stale = await rejection(
      provider.patchEvent(annPrimary, second, { summary: 'x' }, { ifMatch: '"0000000000000000"' }),
    );
    expect(stale).toMatchObject({ code: 'precondition_failed' });
    const patched = await provider.patchEvent(
      annPrimary,
      second,
      { summary: 'Standup (demo)', location: 'Stage' },
      { ifMatch: instance.etag ?? '' },
    );
    expect(patched).toMatchObject({
      id: second,
      summary: 'Standup (demo)',
      location: 'Stage',
      recurringEventId: master.id,
    });
    expect(await provider.getEvent(annPrimary, second)).toMatchObject({ summary: 'Standup (demo)' });

    await provider.deleteEvent(annPrimary, third);
    const again = await rejection(provider.deleteEvent(annPrimary, third));
    expect(again).toMatchObject({ code: 'not_found', context: { alreadyDeleted: true } });

    const listed = await provider.listEvents(annPrimary, {
      maxResults: 50,
      singleEvents: true,
      orderBy: 'startTime',
      timeMin: '2026-05-04T00:00:00Z',
      timeMax: '2026-05-08T00:00:00Z',
    });
    expect(
      listed.items.filter((e) => e.recurringEventId === master.id).map((e) => [e.id.slice(-16), e.summary]),
    ).toEqual([
      ['20260504T070000Z', 'Standup'],
      ['20260505T070000Z', 'Standup (demo)'],
      ['20260507T070000Z', 'Standup'],
    ]);
  });
});

describe('free/busy on Google', () => {
  it('reads busy time across DST without free, declined, cancelled or deleted-instance time', async () => {
    const at = (date: string, from: string, to: string) => ({
      start: { dateTime: `${date}T${from}:00`, timeZone: 'Europe/Berlin' },
      end: { dateTime: `${date}T${to}:00`, timeZone: 'Europe/Berlin' },
    });
    await provider.insertEvent(annPrimary, { summary: 'Busy', ...at('2026-03-28', '10:00', '11:00') });
    await provider.insertEvent(annPrimary, {
      summary: 'Free',
      transparency: 'transparent',
      ...at('2026-03-28', '12:00', '13:00'),
    });
    await provider.insertEvent(annPrimary, {
      summary: 'Declined',
      attendees: [
        { email: ANN, responseStatus: 'declined' },
        { email: 'carol@example.com', responseStatus: 'accepted' },
      ],
      ...at('2026-03-28', '14:00', '15:00'),
    });
    const cancelled = await provider.insertEvent(annPrimary, {
      summary: 'Gone',
      ...at('2026-03-28', '16:00', '17:00'),
    });
    await provider.deleteEvent(annPrimary, cancelled.id);
    await provider.insertEvent(annPrimary, {
      summary: 'Away',
      start: { date: '2026-03-29' },
      end: { date: '2026-03-30' },
    });
    const series = await provider.insertEvent(annPrimary, {
      summary: 'Gym',
      recurrence: ['RRULE:FREQ=DAILY;COUNT=4'],
      ...at('2026-03-27', '08:00', '08:30'),
    });
    await provider.deleteEvent(annPrimary, `${series.id}_20260330T060000Z`);

    const team = ref(TEAM, 'America/New_York');
    const nobody = ref('nobody@group.calendar.google.com');
    const results = await provider.freeBusy(
      [annPrimary, nobody, team],
      '2026-03-28T00:00:00+01:00',
      '2026-03-31T00:00:00+02:00',
    );
    expect(results).toEqual([
      {
        calendarId: annPrimary.id,
        busy: [
          { start: '2026-03-28T07:00:00Z', end: '2026-03-28T07:30:00Z' },
          { start: '2026-03-28T09:00:00Z', end: '2026-03-28T10:00:00Z' },
          { start: '2026-03-28T23:00:00Z', end: '2026-03-29T22:00:00Z' },
        ],
      },
      { calendarId: nobody.id, error: { code: 'not_found', message: expect.stringContaining('notFound') } },
      { calendarId: team.id, busy: [] },
    ]);
  });

  it('asks for at most 50 calendars per query and answers each calendar once, in order', async () => {
    const fresh = await warm();
    const unknown = Array.from({ length: 60 }, (_, i) => ref(`c${i}@group.calendar.google.com`));
    const asked: CalendarRef[] = [annPrimary, ...unknown, { ...annPrimary, id: 'cal_again' }];
    const results = await fresh.freeBusy(asked, '2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z');
    expect(results.map((r) => r.calendarId)).toEqual(asked.map((c) => c.id));
    expect(results[0]).toEqual({ calendarId: annPrimary.id, busy: [] });
    expect(results.at(-1)).toEqual({ calendarId: 'cal_again', busy: [] });
    expect(results.slice(1, -1).every((r) => r.error?.code === 'not_found')).toBe(true);
    expect(calls('freebusy.query')).toHaveLength(2);
  });

  it('marks every calendar of a failed query as unknown instead of failing the call', async () => {
    const fresh = await warm({ retry: { baseDelayMs: 1, maxAttempts: 2 } });
    emulator.admin.script({
      match: { op: 'freebusy.query' },
      times: 2,
      action: { kind: 'error', status: 503 },
    });
    const results = await fresh.freeBusy(
      [annPrimary, ref(TEAM)],
      '2026-01-01T00:00:00Z',
      '2026-01-02T00:00:00Z',
    );
    expect(results.map((r) => [r.busy, r.error?.code])).toEqual([
      [undefined, 'upstream_unavailable'],
      [undefined, 'upstream_unavailable'],
    ]);
    expect(calls('freebusy.query').map((r) => r.status)).toEqual([503, 503]);
  });

  it('refuses a window that ends before it starts without asking Google', async () => {
    const fresh = await warm();
    const error = await rejection(
      fresh.freeBusy([annPrimary], '2026-01-02T00:00:00Z', '2026-01-01T00:00:00Z'),
    );
    expect(error).toMatchObject({ code: 'invalid_argument' });
    expect(calls('freebusy.query')).toHaveLength(0);
  });
});

describe('quick add on Google', () => {
  it("creates events from Google's reading of the sentence in the calendar's zone", async () => {
    const now = Date.parse('2026-11-18T15:30:00Z');
    const fixed = await startGoogleEmulator({ seed: baseSeed(), clock: { now: () => now } });
    try {
      const { provider: google } = oauthProvider(fixed, ANN);
      const lunch = await google.quickAdd(annPrimary, 'Lunch with Ann tomorrow at noon');
      expect(lunch).toMatchObject({
        summary: 'Lunch with Ann',
        start: { dateTime: '2026-11-19T12:00:00+01:00' },
        end: { dateTime: '2026-11-19T13:00:00+01:00' },
      });
      expect(await google.getEvent(annPrimary, lunch.id)).toMatchObject({ summary: 'Lunch with Ann' });
      const holiday = await google.quickAdd(ref(TEAM, 'America/New_York'), 'Holiday on 2026-12-24');
      expect(holiday).toMatchObject({ start: { date: '2026-12-24' }, end: { date: '2026-12-25' } });
      expect(await rejection(google.quickAdd(annPrimary, '  '))).toMatchObject({ code: 'invalid_argument' });
    } finally {
      await fixed.close();
    }
  });

  it('does not send quickAdd again after an unconfirmed attempt, but retries a rate limit', async () => {
    const fresh = await warm({ retry: { baseDelayMs: 1 } });
    emulator.admin.script({ match: { op: 'events.quickAdd' }, action: { kind: 'dropResponse' } });
    const error = await rejection(fresh.quickAdd(annPrimary, 'Dentist 2026-06-05 2pm'));
    expect(error).toMatchObject({ code: 'upstream_unavailable', context: { ambiguous: true } });
    expect((error as Error).message).toContain('may or may not have been applied');
    expect(calls('events.quickAdd')).toHaveLength(1);

    emulator.admin.clearRequests();
    emulator.admin.script({ match: { op: 'events.quickAdd' }, action: { kind: 'error', status: 429 } });
    const created = await fresh.quickAdd(annPrimary, 'Dentist 2026-06-06 2pm');
    expect(created.summary).toBe('Dentist');
    expect(calls('events.quickAdd').map((r) => r.status)).toEqual([429, 200]);
  });
});

describe('colours and calendars on Google', () => {
  it("reads Google's palette, the same one local calendars offer", async () => {
    expect(await provider.colors()).toEqual(standardPalette());
  });

  it('creates an owned calendar for an OAuth account', async () => {
    const info = await provider.createCalendar({
      summary: 'Projects',
      description: 'Project work',
      timeZone: 'Asia/Kathmandu',
    });
    expect(info).toEqual({
      externalId: expect.stringMatching(/@group\.calendar\.google\.com$/),
      summary: 'Projects',
      description: 'Project work',
      timeZone: 'Asia/Kathmandu',
      primary: false,
      accessRole: 'owner',
    });
    const listed = (await provider.listCalendars()).find((c) => c.externalId === info.externalId);
    expect(listed).toMatchObject({ accessRole: 'owner', timeZone: 'Asia/Kathmandu' });
    const bad = await rejection(provider.createCalendar({ summary: 'X', timeZone: 'Mars/Olympus' }));
    expect(bad).toMatchObject({ code: 'invalid_argument' });
  });

  it('refuses calendar creation for a service account without sending a request', async () => {
    const robot = new GoogleCalendarProvider({
      auth: {
        kind: 'service_account',
        key: emulator.admin.serviceAccountKey(ROBOT),
        endpoints: endpointsOf(emulator.url),
      },
    });
    emulator.admin.clearRequests();
    const error = await rejection(robot.createCalendar({ summary: 'Robot calendar' }));
    expect(error).toMatchObject({ code: 'permission_denied', context: { authKind: 'service_account' } });
    expect((error as Error).message).toContain(`share it with ${ROBOT}`);
    expect(emulator.admin.requests()).toEqual([]);
  });
});
