import { OAuth2Client } from 'google-auth-library';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GoogleEmulator, parseQuickAdd, startGoogleEmulator } from '../src/index.ts';
import { ANN, BOB, baseSeed, calendarFor, failure, reasonOf, startSeeded, TEAM } from './helpers.ts';

let emulator: GoogleEmulator;

beforeAll(async () => {
  emulator = await startSeeded();
});
afterAll(async () => {
  await emulator.close();
});

describe('calendarList and calendars', () => {
  it('lists own and shared calendars and patches selected, hidden and colors', async () => {
    const calendar = calendarFor(emulator, ANN);
    const list = await calendar.calendarList.list();
    expect(list.data.items?.map((c) => [c.id, c.accessRole, c.primary ?? false])).toEqual([
      [ANN, 'owner', true],
      [TEAM, 'reader', false],
    ]);
    const patched = await calendar.calendarList.patch({
      calendarId: TEAM,
      colorRgbFormat: true,
      requestBody: { selected: false, backgroundColor: '#112233', summaryOverride: 'Bob’s team' },
    });
    expect(patched.data).toMatchObject({ backgroundColor: '#112233', summaryOverride: 'Bob’s team' });
    expect(patched.data.selected).toBeUndefined();
    await calendar.calendarList.patch({ calendarId: TEAM, requestBody: { hidden: true } });
    expect((await calendar.calendarList.list()).data.items?.map((c) => c.id)).toEqual([ANN]);
    const all = await calendar.calendarList.list({ showHidden: true });
    expect(all.data.items?.find((c) => c.id === TEAM)?.hidden).toBe(true);
    const primary = await calendar.calendarList.get({ calendarId: 'primary' });
    expect(primary.data.id).toBe(ANN);
  });

  it("shows a reader a private event's times only, and its owner everything", async () => {
    const bob = calendarFor(emulator, BOB);
    const times = {
      start: { dateTime: '2026-03-02T10:00:00-05:00' },
      end: { dateTime: '2026-03-02T11:00:00-05:00' },
    };
    const hidden = await bob.events.insert({
      calendarId: TEAM,
      requestBody: { summary: 'Therapy', location: 'Dr. Lee', visibility: 'private', ...times },
    });
    const open = await bob.events.insert({
      calendarId: TEAM,
      requestBody: { summary: 'Team sync', ...times },
    });
    const ann = calendarFor(emulator, ANN);
    const seen = await ann.events.list({ calendarId: TEAM });
    const byId = new Map(seen.data.items?.map((event) => [event.id, event]));
    const privateOne = byId.get(hidden.data.id as string);
    expect(privateOne).toMatchObject({
      id: hidden.data.id,
      status: 'confirmed',
      start: { dateTime: expect.any(String) },
    });
    expect(privateOne?.summary).toBeUndefined();
    expect(privateOne?.location).toBeUndefined();
    expect(byId.get(open.data.id as string)?.summary).toBe('Team sync');
    const got = await ann.events.get({ calendarId: TEAM, eventId: hidden.data.id as string });
    expect(got.data.summary).toBeUndefined();
    const owner = await bob.events.get({ calendarId: TEAM, eventId: hidden.data.id as string });
    expect(owner.data).toMatchObject({ summary: 'Therapy', location: 'Dr. Lee', visibility: 'private' });
  });

  it('creates, renames and deletes secondary calendars but not the primary', async () => {
    const calendar = calendarFor(emulator, BOB);
    const created = await calendar.calendars.insert({
      requestBody: { summary: 'Side project', timeZone: 'Asia/Tokyo' },
    });
    const id = created.data.id as string;
    expect(id).toMatch(/@group\.calendar\.google\.com$/);
    expect(created.data.timeZone).toBe('Asia/Tokyo');
    const renamed = await calendar.calendars.patch({
      calendarId: id,
      requestBody: { summary: 'Main project' },
    });
    expect(renamed.data.summary).toBe('Main project');
    expect((await calendar.calendarList.get({ calendarId: id })).data.accessRole).toBe('owner');
    await calendar.calendars.delete({ calendarId: id });
    expect((await failure(calendar.calendars.get({ calendarId: id }))).status).toBe(404);
    const primary = await failure(calendar.calendars.delete({ calendarId: 'primary' }));
    expect(primary.status).toBe(400);
    const untitled = await failure(calendar.calendars.insert({ requestBody: {} }));
    expect(reasonOf(untitled.data)).toBe('required');
    const notOwner = await failure(
      calendarFor(emulator, ANN).calendars.patch({ calendarId: TEAM, requestBody: { summary: 'x' } }),
    );
    expect(notOwner.status).toBe(403);
  });

  it('serves the colors palette', async () => {
    const colors = await calendarFor(emulator, ANN).colors.get();
    expect(Object.keys(colors.data.calendar ?? {})).toHaveLength(24);
    expect(colors.data.event?.['11']).toEqual({ background: '#dc2127', foreground: '#1d1d1d' });
  });
});

describe('freeBusy', () => {
  it('merges busy time, skips free and cancelled events, and reports unknown calendars', async () => {
    const calendar = calendarFor(emulator, BOB);
    const insert = (summary: string, start: string, end: string, extra: Record<string, unknown> = {}) =>
      calendar.events.insert({
        calendarId: TEAM,
        requestBody: { summary, start: { dateTime: start }, end: { dateTime: end }, ...extra },
      });
    await insert('A', '2026-02-02T09:00:00Z', '2026-02-02T10:00:00Z');
    await insert('B', '2026-02-02T09:30:00Z', '2026-02-02T11:00:00Z');
    await insert('Free', '2026-02-02T12:00:00Z', '2026-02-02T13:00:00Z', { transparency: 'transparent' });
    const cancelled = await insert('Gone', '2026-02-02T14:00:00Z', '2026-02-02T15:00:00Z');
    await calendar.events.delete({ calendarId: TEAM, eventId: cancelled.data.id as string });
    await calendar.events.insert({
      calendarId: TEAM,
      requestBody: { summary: 'Offsite', start: { date: '2026-02-03' }, end: { date: '2026-02-04' } },
    });
    const items = Array.from({ length: 3 }, (_, i) => ({ id: i === 0 ? TEAM : `missing${i}@example.com` }));
    const res = await calendarFor(emulator, ANN).freebusy.query({
      requestBody: { timeMin: '2026-02-02T00:00:00Z', timeMax: '2026-02-05T00:00:00Z', items },
    });
    expect(res.data.kind).toBe('calendar#freeBusy');
    expect(res.data.calendars?.[TEAM]?.busy).toEqual([
      { start: '2026-02-02T09:00:00Z', end: '2026-02-02T11:00:00Z' },
      { start: '2026-02-03T05:00:00Z', end: '2026-02-04T05:00:00Z' },
    ]);
    expect(res.data.calendars?.['missing1@example.com']).toEqual({
      errors: [{ domain: 'global', reason: 'notFound' }],
      busy: [],
    });
    const tooMany = await failure(
      calendar.freebusy.query({
        requestBody: {
          timeMin: '2026-02-02T00:00:00Z',
          timeMax: '2026-02-03T00:00:00Z',
          items,
          calendarExpansionMax: 2,
        },
      }),
    );
    expect(tooMany.status).toBe(400);
    const backwards = await failure(
      calendar.freebusy.query({
        requestBody: { timeMin: '2026-02-03T00:00:00Z', timeMax: '2026-02-02T00:00:00Z', items },
      }),
    );
    expect(reasonOf(backwards.data)).toBe('timeRangeEmpty');
  });
});

describe('quickAdd', () => {
  it('creates events from text relative to the emulator clock', async () => {
    const now = Date.parse('2026-01-14T08:00:00Z'); // a Wednesday
    const fixed = await startGoogleEmulator({ seed: baseSeed(), clock: { now: () => now } });
    try {
      const calendar = calendarFor(fixed, ANN);
      const lunch = await calendar.events.quickAdd({
        calendarId: 'primary',
        text: 'Lunch with Bob tomorrow at noon',
      });
      expect(lunch.data).toMatchObject({
        summary: 'Lunch with Bob',
        start: { dateTime: '2026-01-15T12:00:00+01:00', timeZone: 'Europe/Berlin' },
        end: { dateTime: '2026-01-15T13:00:00+01:00', timeZone: 'Europe/Berlin' },
      });
      const missing = await failure(calendar.events.quickAdd({ calendarId: 'primary', text: '' }));
      expect(missing.status).toBe(400);
    } finally {
      await fixed.close();
    }
    const zone = 'Europe/Berlin';
    expect(parseQuickAdd('Dinner at Cafe Rouge on 2026-03-14 from 7pm to 9:30pm', now, zone)).toMatchObject({
      summary: 'Dinner',
      location: 'Cafe Rouge',
      start: { dateTime: '2026-03-14T19:00:00+01:00' },
      end: { dateTime: '2026-03-14T21:30:00+01:00' },
    });
    expect(parseQuickAdd('Standup Friday 9:30am for 15 minutes', now, zone)).toMatchObject({
      summary: 'Standup',
      start: { dateTime: '2026-01-16T09:30:00+01:00' },
      end: { dateTime: '2026-01-16T09:45:00+01:00' },
    });
    expect(parseQuickAdd('Holiday on March 3rd', now, zone)).toMatchObject({
      summary: 'Holiday',
      start: { date: '2026-03-03' },
      end: { date: '2026-03-04' },
    });
  });
});

describe('standalone use', () => {
  it('answers an OAuth2Client on the userinfo endpoint', async () => {
    const { access_token } = emulator.admin.issueTokens({
      email: ANN,
      scopes: ['https://www.googleapis.com/auth/userinfo.email'],
    });
    const auth = new OAuth2Client({ endpoints: emulator.oauthEndpoints });
    auth.setCredentials({ access_token });
    // The Calendar client does not cover the OAuth2 API, so ask its userinfo path directly.
    const me = await auth.request<{ email: string }>({ url: `${emulator.url}/oauth2/v2/userinfo` });
    expect(me.data.email).toBe(ANN);
  });
});
