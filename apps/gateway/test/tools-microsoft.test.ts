/**
 * Every calendar tool on Outlook calendars, over HTTP with the MCP SDK client, against the
 * Microsoft Graph emulator (and the Google emulator for a key holding both kinds of calendar).
 * The account is connected as the connect flows leave it (microsoft-fixture.ts).
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccount, startTestEmulator, type TestEmulator } from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, type TestGateway, textOf } from './harness.ts';
import { watchKeyDrops } from './key-drops.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startOutlookCalendarGateway,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import { DAY, testDays } from './test-days.ts';

const ANN = 'ann@contoso.com';
const BOB = 'bob@example.com';
const ZED = 'zed@contoso.com';
const CARL_UPN = 'carl@contoso.onmicrosoft.com';
const DORA = 'dora@contoso.com';
const W = 'W. Europe Standard Time';

const { day0: DAY0, at, date, outlookTimed: timed, timed: gTimed } = testDays(7);

interface EventOut {
  id: string;
  calendarId: string;
  summary?: string;
  etag?: string;
  start: { dateTime?: string; date?: string; timeZone?: string };
  end: { dateTime?: string; date?: string };
  recurringEventId?: string;
  attendees?: { email: string; responseStatus?: string }[];
  [key: string]: unknown;
}

describe('every tool on Outlook calendars (Graph emulator), over HTTP with the MCP SDK client', () => {
  let ms: TestMicrosoftEmulator;
  let google: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let outlook: ConnectedOutlook;
  let googleCal: string;
  let cal: Record<string, string>;

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };
  const refused = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name} should fail`).toBe(true);
    return textOf(result);
  };
  const list = async (args: Record<string, unknown>) =>
    (await call('list_events', { format: 'json', timeZone: 'UTC', ...args })) as unknown as {
      events: EventOut[];
      nextPageToken?: string;
    };
  const graphEvents = (name: string) => ms.admin.events(outlook.externalIds[name] as string);

  beforeAll(async () => {
    google = await startTestEmulator(
      { clientId: 'tools-microsoft.apps.googleusercontent.com', clientSecret: 'tools-microsoft-secret' },
      {
        accounts: [
          { email: BOB, timeZone: 'Europe/Berlin', events: [gTimed('Google sync', 0, 10.5, 10.75)] },
        ],
      },
    );
    ({ ms, gw, tenant, outlook } = await startOutlookCalendarGateway({
      seed: {
        users: [
          {
            email: ANN,
            displayName: 'Ann Example',
            timeZone: W,
            calendars: [
              {
                name: 'Calendar',
                events: [
                  timed('Planning', 0, 9, 10, {
                    body: { contentType: 'html', content: '<p>Roadmap &amp; goals</p>' },
                    location: { displayName: 'Room 1' },
                  }),
                  {
                    ...timed('Standup', 1, 9, 9.25),
                    recurrence: {
                      pattern: {
                        type: 'weekly',
                        interval: 1,
                        daysOfWeek: [weekday(1)],
                        firstDayOfWeek: 'monday',
                      },
                      range: { type: 'numbered', startDate: date(1), numberOfOccurrences: 4 },
                    },
                    deletedOccurrences: [`${date(8)}T09:00:00`],
                    cancelledOccurrences: [`${date(15)}T09:00:00`],
                  },
                  timed('Holiday block', 0, 12, 13, { showAs: 'free' }),
                  {
                    subject: 'Offsite',
                    isAllDay: true,
                    start: { dateTime: `${date(3)}T00:00:00`, timeZone: W },
                    end: { dateTime: `${date(5)}T00:00:00`, timeZone: W },
                  },
                  timed('Review with Zed', 0, 14, 15, {
                    organizerAddress: ZED,
                    attendees: [
                      { emailAddress: { address: ZED, name: 'Zed' }, type: 'required' },
                      { emailAddress: { address: ANN, name: 'Ann Example' }, type: 'required' },
                    ],
                  }),
                ],
              },
              { name: 'Team', events: [timed('Team review', 0, 11, 12)] },
              {
                name: 'Company holidays',
                canEdit: false,
                owner: { name: 'HR', address: 'hr@contoso.com' },
                events: [timed('Company meeting', 2, 10, 11)],
              },
            ],
          },
          {
            email: 'carl@contoso.com',
            userPrincipalName: CARL_UPN,
            hasMail: false,
            timeZone: 'Eastern Standard Time',
          },
          { email: DORA, timeZone: W },
        ],
      },
      env: { ...google.env, ...HIGH_RATE_LIMITS },
      beforeConnect: async (gateway, acme) => {
        await gateway.runtime.keys.setDefaults(acme.tenantId, acme.keyId, {
          toolsets: ['calendar', 'booking', 'search', 'rules'],
        });
        // The workspace's zone: what Outlook calendars get when mailboxSettings may not be read.
        await gateway.runtime.tenancy.updateTenant(acme.tenantId, { timeZone: 'Europe/Lisbon' });
      },
      connect: { email: ANN, access: 'write' },
    }));
    cal = outlook.calendars;
    googleCal = await connectGoogleAccount(gw, google, tenant, BOB, 'write');
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await ms?.close();
    await google?.close();
  });

  it("list_calendars: the account's calendars, its shared read-only one not writable, zone from the workspace without MailboxSettings.Read", async () => {
    const out = (await call('list_calendars', {})) as {
      calendars: {
        id: string;
        summary: string;
        accountEmail: string;
        timeZone: string;
        canWrite: boolean;
        primary: boolean;
        provider?: string;
      }[];
    };
    const outlookCalendars = out.calendars.filter((c) => c.accountEmail === ANN);
    expect(outlookCalendars.map((c) => [c.summary, c.canWrite, c.primary, c.timeZone]).sort()).toEqual([
      ['Calendar', true, true, 'Europe/Lisbon'],
      ['Company holidays', false, false, 'Europe/Lisbon'],
      ['Team', true, false, 'Europe/Lisbon'],
    ]);
    expect(outlookCalendars.every((c) => c.provider === 'microsoft')).toBe(true);
    // Calgate asked for mailboxSettings once and was refused (Calendars.ReadWrite, User.Read only).
    const settings = ms.admin.requests().filter((r) => r.op === 'mailboxSettings.get');
    expect(settings.map((r) => r.status)).toEqual([403]);
  });

  it('list_events reads calendarView: occurrences with real ids, no masters, cancelled hidden, deleted gone, all-day by date', async () => {
    const { events } = await list({
      calendarId: cal.Calendar,
      timeMin: at(0, 0),
      timeMax: at(30, 0),
      maxResults: 50,
    });
    expect(events.map((e) => e.summary)).toEqual([
      'Planning',
      'Holiday block',
      'Review with Zed',
      'Standup',
      'Offsite',
      'Standup',
    ]);
    const standups = events.filter((e) => e.summary === 'Standup');
    expect(standups.map((e) => e.start.dateTime)).toEqual([at(1, 9), at(22, 9)]);
    const master = graphEvents('Calendar').find((e) => e.type === 'seriesMaster');
    expect(standups.every((e) => e.recurringEventId === master?.id && e.id !== master?.id)).toBe(true);
    const offsite = events.find((e) => e.summary === 'Offsite');
    expect(offsite?.start).toEqual({ date: date(3) });
    expect(offsite?.end).toEqual({ date: date(5) });
    const planning = events[0] as EventOut;
    expect(events.find((e) => e.summary === 'Holiday block')?.transparency).toBe('transparent');
    expect(planning.description).toBe('Roadmap & goals');
    expect(planning.location).toBe('Room 1');
    // Every read asked Graph for UTC times and text bodies.
    const views = ms.admin.requests().filter((r) => r.op === 'calendarView.list');
    expect(views.length).toBeGreaterThan(0);
    expect(
      views.every((r) => /outlook\.timezone="UTC"/.test(r.prefer ?? '') && /text/.test(r.prefer ?? '')),
    ).toBe(true);
  });

  it('list_events follows absolute next links through short pages, resending Prefer', async () => {
    const before = ms.admin.requests().length;
    const seen: string[] = [];
    let pageToken: string | undefined;
    let pages = 0;
    do {
      const page = await list({
        calendarId: cal.Calendar,
        timeMin: at(0, 0),
        timeMax: at(30, 0),
        maxResults: 2,
        ...(pageToken === undefined ? {} : { pageToken }),
      });
      seen.push(...page.events.map((e) => e.summary ?? ''));
      pageToken = page.nextPageToken;
      pages += 1;
    } while (pageToken !== undefined && pages < 20);
    expect(seen).toEqual(['Planning', 'Holiday block', 'Review with Zed', 'Standup', 'Offsite', 'Standup']);
    const followed = ms.admin
      .requests()
      .slice(before)
      .filter((r) => r.op === 'calendarView.list' && r.query.includes('skip'));
    expect(followed.length).toBeGreaterThan(0);
    expect(followed.every((r) => /outlook\.timezone="UTC"/.test(r.prefer ?? ''))).toBe(true);
  });

  it('a window given with an offset counts as that instant', async () => {
    // 11:30+02:00 is 09:30 UTC: Planning (09:00–10:00 UTC) overlaps it, Team review (11:00) does not.
    const { events } = await list({
      calendarId: cal.Calendar,
      timeMin: `${date(0)}T11:30:00+02:00`,
      timeMax: `${date(0)}T11:45:00+02:00`,
    });
    expect(events.map((e) => e.summary)).toEqual(['Planning']);
  });

  it('one merged listing, in start order, for a key holding a Google and an Outlook calendar', async () => {
    const { events } = await list({ timeMin: at(0, 0), timeMax: at(0, 13), maxResults: 50 });
    expect(events.map((e) => [e.summary, e.calendarId])).toEqual([
      ['Planning', cal.Calendar],
      ['Google sync', googleCal],
      ['Team review', cal.Team],
      ['Holiday block', cal.Calendar],
    ]);
  });

  it('get_event by an occurrence id; an unknown id is not found', async () => {
    const { events } = await list({ calendarId: cal.Calendar, timeMin: at(1, 0), timeMax: at(2, 0) });
    const occurrence = events[0] as EventOut;
    const got = (await call('get_event', {
      calendarId: cal.Calendar,
      eventId: occurrence.id,
      timeZone: 'UTC',
      format: 'json',
    })) as {
      event: EventOut;
    };
    expect(got.event).toMatchObject({ id: occurrence.id, summary: 'Standup', start: { dateTime: at(1, 9) } });
    const missing = await refused('get_event', { calendarId: cal.Calendar, eventId: 'AAMkAGnosuchevent=' });
    expect(missing).toMatch(/not found/i);
  });

  it('create_event posts to the calendar with a transactionId; a repeated requestId creates nothing more', async () => {
    const args = {
      calendarId: cal.Team,
      summary: 'Design sync',
      start: { dateTime: at(5, 13) },
      end: { dateTime: at(5, 14) },
      requestId: 'design-sync-1',
      timeZone: 'UTC',
    };
    const first = await call('create_event', args);
    const again = await call('create_event', args);
    expect(again.eventId).toBe(first.eventId);
    const stored = graphEvents('Team').filter((e) => e.subject === 'Design sync');
    expect(stored).toHaveLength(1);
    expect(stored[0]?.transactionId).toEqual(expect.any(String));
    const posts = ms.admin.requests().filter((r) => r.op === 'events.create');
    expect(posts.map((r) => decodeURIComponent(r.path))).toEqual([
      `/v1.0/me/calendars/${outlook.externalIds.Team}/events`,
    ]);
  });

  it('a create whose answer is lost is sent again with the same transactionId: one event', async () => {
    ms.admin.script({ match: { op: 'events.create' }, times: 1, action: { kind: 'dropResponse' } });
    const out = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Lost answer',
      start: { dateTime: at(5, 16) },
      end: { dateTime: at(5, 17) },
    });
    const stored = graphEvents('Team').filter((e) => e.subject === 'Lost answer');
    expect(stored.map((e) => e.id)).toEqual([out.eventId]);
    const creates = ms.admin.requests().filter((r) => r.op === 'events.create');
    expect(creates.slice(-2).map((r) => r.fault ?? 'answered')).toEqual(['dropResponse', 'answered']);
  });

  it('create_event in Europe/Amsterdam (an IANA name Graph refuses) is sent by its Windows name; a rule Outlook cannot store is refused', async () => {
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Berlin breakfast',
      start: { dateTime: `${date(6)}T08:00:00`, timeZone: 'Europe/Amsterdam' },
      end: { dateTime: `${date(6)}T09:00:00`, timeZone: 'Europe/Amsterdam' },
      recurrence: ['RRULE:FREQ=DAILY;COUNT=3'],
    });
    const stored = graphEvents('Team').find((e) => e.id === created.eventId);
    expect(stored?.originalStartTimeZone).toBe(W);
    expect(stored?.recurrence).toMatchObject({
      pattern: { type: 'daily', interval: 1 },
      range: { type: 'numbered', numberOfOccurrences: 3 },
    });
    const { events } = await list({ calendarId: cal.Team, timeMin: at(6, 0), timeMax: at(9, 0) });
    expect(events.filter((e) => e.summary === 'Berlin breakfast')).toHaveLength(3);
    const hourly = await refused('create_event', {
      calendarId: cal.Team,
      summary: 'Too often',
      start: { dateTime: at(6, 8) },
      end: { dateTime: at(6, 9) },
      recurrence: ['RRULE:FREQ=HOURLY;COUNT=3'],
    });
    expect(hourly).toMatch(/Outlook/);
  });

  it('update_event sends If-Match: a change made in Outlook meanwhile answers 412 and is not overwritten', async () => {
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Retro',
      start: { dateTime: at(7, 15) },
      end: { dateTime: at(7, 16) },
    });
    const eventId = created.eventId as string;
    ms.admin.script({ match: { op: 'events.update' }, times: 1, action: { kind: 'latency', ms: 1_000 } });
    const pending = client.callTool({
      name: 'update_event',
      arguments: { calendarId: cal.Team, eventId, summary: 'Retro (Calgate)' },
    });
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Someone moves it to another room in Outlook meanwhile.
    const direct = await ms.editDirectly(ANN, 'PATCH', `/me/events/${eventId}`, {
      location: { displayName: 'Room 7' },
    });
    expect(direct.status).toBe(200);
    const result = await pending;
    const updates = ms.admin
      .requests()
      .filter(
        (r) =>
          r.op === 'events.update' &&
          decodeURIComponent(r.path).endsWith(`/calendars/${outlook.externalIds.Team}/events/${eventId}`),
      );
    expect(updates[0]?.status).toBe(412);
    const stored = graphEvents('Team').find((e) => e.id === eventId);
    expect(stored?.location).toMatchObject({ displayName: 'Room 7' });
    if (result.isError) {
      expect(textOf(result)).toMatch(/changed/i);
    } else {
      expect(stored?.subject).toBe('Retro (Calgate)');
    }
  });

  it('this occurrence and the whole series: PATCH and DELETE on real occurrence ids', async () => {
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Weekly 1:1',
      start: { dateTime: at(8, 10), timeZone: 'UTC' },
      end: { dateTime: at(8, 11), timeZone: 'UTC' },
      recurrence: ['RRULE:FREQ=WEEKLY;COUNT=3'],
    });
    const seriesId = created.eventId as string;
    const occurrences = (
      await list({ calendarId: cal.Team, timeMin: at(8, 0), timeMax: at(30, 0) })
    ).events.filter((e) => e.recurringEventId === seriesId);
    expect(occurrences.map((e) => e.start.dateTime)).toEqual([at(8, 10), at(15, 10), at(22, 10)]);
    const [first, second, third] = occurrences as [EventOut, EventOut, EventOut];
    await call('update_event', {
      calendarId: cal.Team,
      eventId: second.id,
      summary: 'Weekly 1:1 (moved)',
      start: { dateTime: at(15, 12) },
    });
    await call('delete_event', { calendarId: cal.Team, eventId: third.id });
    await call('update_event', { calendarId: cal.Team, eventId: first.id, scope: 'all', location: 'Café' });
    const after = (await list({ calendarId: cal.Team, timeMin: at(8, 0), timeMax: at(30, 0) })).events.filter(
      (e) => e.recurringEventId === seriesId,
    );
    expect(after.map((e) => [e.summary, e.start.dateTime, e.end.dateTime])).toEqual([
      ['Weekly 1:1', at(8, 10), at(8, 11)],
      ['Weekly 1:1 (moved)', at(15, 12), at(15, 13)],
    ]);
    expect(after[0]?.location).toBe('Café');
    const ops = ms.admin.requests().map((r) => `${r.op} ${decodeURIComponent(r.path)}`);
    expect(ops).toContain(`events.update /v1.0/me/calendars/${outlook.externalIds.Team}/events/${second.id}`);
    expect(ops).toContain(`events.delete /v1.0/me/calendars/${outlook.externalIds.Team}/events/${third.id}`);
  });

  it('manage_attendees invites; sendUpdates none is refused because Outlook sends invitations itself', async () => {
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Budget',
      start: { dateTime: at(9, 9) },
      end: { dateTime: at(9, 10) },
    });
    const eventId = created.eventId as string;
    const quiet = await refused('manage_attendees', {
      calendarId: cal.Team,
      eventId,
      addAttendees: ['dana@contoso.com'],
      sendUpdates: 'none',
    });
    expect(quiet).toMatch(/Outlook sends invitations/);
    expect(graphEvents('Team').find((e) => e.id === eventId)?.attendees).toEqual([]);
    const invited = (await call('manage_attendees', {
      calendarId: cal.Team,
      eventId,
      addAttendees: ['dana@contoso.com'],
    })) as { event: EventOut };
    expect(invited.event.attendees?.map((a) => [a.email, a.responseStatus])).toEqual([
      ['dana@contoso.com', 'needsAction'],
    ]);
    expect(graphEvents('Team').find((e) => e.id === eventId)?.attendees).toHaveLength(1);
  });

  it("respond_to_event answers through Graph's accept / tentativelyAccept", async () => {
    const review = (await list({ calendarId: cal.Calendar, timeMin: at(0, 14), timeMax: at(0, 15) }))
      .events[0] as EventOut;
    expect(review.summary).toBe('Review with Zed');
    const out = (await call('respond_to_event', {
      calendarId: cal.Calendar,
      eventId: review.id,
      response: 'tentative',
      comment: 'Might be late',
    })) as { attendee: string; event: EventOut };
    expect(out.attendee).toBe(ANN);
    expect(ms.admin.requests().filter((r) => r.op === 'events.tentativelyAccept')).toHaveLength(1);
    const stored = graphEvents('Calendar').find((e) => e.id === review.id);
    expect((stored?.responseStatus as { response?: string } | undefined)?.response).toBe(
      'tentativelyAccepted',
    );
    await call('respond_to_event', { calendarId: cal.Calendar, eventId: review.id, response: 'accepted' });
    expect(ms.admin.requests().filter((r) => r.op === 'events.accept')).toHaveLength(1);
  });

  it('respond_to_event on a meeting the account organises: accepted is what Outlook counts already, declined says to delete it', async () => {
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Hosted by Ann',
      start: { dateTime: at(9, 13) },
      end: { dateTime: at(9, 14) },
      attendees: [ANN, 'dana@contoso.com'],
    });
    const eventId = created.eventId as string;
    const responses = () =>
      ms.admin.requests().filter((r) => r.op.startsWith('events.') && /accept|decline/i.test(r.op));
    const before = responses().length;
    const out = (await call('respond_to_event', {
      calendarId: cal.Team,
      eventId,
      response: 'accepted',
      comment: 'See you there',
    })) as { attendee: string; response: string; event: EventOut };
    expect(out).toMatchObject({ attendee: ANN, response: 'accepted' });
    const declined = await refused('respond_to_event', {
      calendarId: cal.Team,
      eventId,
      response: 'declined',
    });
    expect(declined).toBe(
      `The account organises event '${eventId}', and Outlook takes no answer from a meeting's organizer: it always counts them as attending. To call the meeting off, delete it with delete_event.`,
    );
    expect(responses().length).toBe(before);
    expect(graphEvents('Team').find((e) => e.id === eventId)?.subject).toBe('Hosted by Ann');
  });

  it("quick_add_event reads the sentence with Calgate's parser and creates a Graph event", async () => {
    const out = (await call('quick_add_event', {
      calendarId: cal.Team,
      text: `Lunch with Ann ${date(10)} at 12:30 at Café Central`,
      timeZone: 'UTC',
    })) as { event: EventOut };
    expect(out.event.summary).toMatch(/Lunch with Ann/);
    const stored = graphEvents('Team').find((e) => e.id === out.event.id);
    expect(stored?.subject).toBe(out.event.summary);
  });

  it('a read-only Outlook calendar refuses writes; delete_event removes an event', async () => {
    const denied = await refused('create_event', {
      calendarId: cal['Company holidays'],
      summary: 'Nope',
      start: { dateTime: at(2, 12) },
      end: { dateTime: at(2, 13) },
    });
    expect(denied).toMatch(/may not write|read-only|cannot write/i);
    const created = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Short-lived',
      start: { dateTime: at(11, 9) },
      end: { dateTime: at(11, 10) },
    });
    await call('delete_event', { calendarId: cal.Team, eventId: created.eventId });
    expect(graphEvents('Team').some((e) => e.id === created.eventId)).toBe(false);
  });

  it('batch_update_events changes several Outlook events at once', async () => {
    const a = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Batch A',
      start: { dateTime: at(12, 9) },
      end: { dateTime: at(12, 10) },
    });
    const b = await call('create_event', {
      calendarId: cal.Team,
      summary: 'Batch B',
      start: { dateTime: at(12, 11) },
      end: { dateTime: at(12, 12) },
    });
    const out = await call('batch_update_events', {
      calendarId: cal.Team,
      updates: [
        { eventId: a.eventId, location: 'North' },
        { eventId: b.eventId, location: 'South' },
      ],
    });
    expect(JSON.stringify(out)).not.toMatch(/"error"/);
    const stored = graphEvents('Team');
    expect(stored.find((e) => e.id === a.eventId)?.location).toMatchObject({ displayName: 'North' });
    expect(stored.find((e) => e.id === b.eventId)?.location).toMatchObject({ displayName: 'South' });
  });

  it('find_free_time: busy from calendarView of every Outlook calendar (not getSchedule) and Google, free events ignored', async () => {
    const out = (await call('find_free_time', {
      timeMin: at(0, 8),
      timeMax: at(0, 16),
      timeZone: 'UTC',
      format: 'json',
    })) as {
      busy: { calendarId: string; start: string; end: string }[];
      free: { start: string; end: string }[];
    };
    expect(out.free).toEqual([
      { start: at(0, 8), end: at(0, 9) },
      { start: at(0, 10), end: at(0, 10.5) },
      { start: at(0, 10.75), end: at(0, 11) },
      { start: at(0, 12), end: at(0, 14) },
      { start: at(0, 15), end: at(0, 16) },
    ]);
    expect(ms.admin.requests().some((r) => r.op === 'getSchedule')).toBe(false);
  });

  it('find_free_slots and check_availability on an Outlook calendar', async () => {
    const slots = (await call('find_free_slots', {
      calendarIds: [cal.Calendar, cal.Team],
      timeMin: at(0, 8),
      timeMax: at(0, 16),
      minDurationMinutes: 60,
      timeZone: 'UTC',
    })) as { slots: { start: string; end: string }[] };
    expect(slots.slots.map((s) => s.start)).toContain(at(0, 12));
    expect(slots.slots.map((s) => s.start)).not.toContain(at(0, 9));
    const check = await call('check_availability', {
      calendarId: cal.Calendar,
      start: at(0, 9),
      end: at(0, 10),
    });
    expect(JSON.stringify(check)).toMatch(/busy|false/i);
  });

  it('get_availability over an Outlook and a Google calendar: one answer, opaque by default, events named with full', async () => {
    const window = {
      timeMin: at(0, 8),
      timeMax: at(0, 13),
      calendarIds: [cal.Calendar, googleCal],
      timeZone: 'UTC',
    };
    const full = (await call('get_availability', { ...window, privacy: 'full' })) as {
      busy: {
        start: string;
        end: string;
        sourceCount: number;
        events?: { calendarId: string; summary?: string }[];
      }[];
      calendarsMerged: number;
    };
    expect(full.calendarsMerged).toBe(2);
    expect(full.busy.map((b) => [b.start, b.end, b.events?.map((e) => [e.calendarId, e.summary])])).toEqual([
      [at(0, 9), at(0, 10), [[cal.Calendar, 'Planning']]],
      [at(0, 10.5), at(0, 10.75), [[googleCal, 'Google sync']]],
    ]);
    const opaque = (await call('get_availability', window)) as { busy: Record<string, unknown>[] };
    expect(opaque.busy).toEqual([
      { start: at(0, 9), end: at(0, 10), sourceCount: 0 },
      { start: at(0, 10.5), end: at(0, 10.75), sourceCount: 0 },
    ]);
    expect(JSON.stringify(opaque)).not.toMatch(/Planning|Google sync/);
  });

  it('rules and timesheets on an Outlook calendar: apply_rules files its events, get_time_summary counts them', async () => {
    const { project } = (await call('create_project', { name: 'Roadmap work', client: 'Contoso' })) as {
      project: { id: string };
    };
    await call('create_rule', { query: 'title:planning', projectId: project.id });
    const window = { timeMin: at(0, 0), timeMax: at(1, 0), calendarIds: [cal.Calendar] };
    await call('apply_rules', window);
    const summary = (await call('get_time_summary', { ...window, groupBy: 'project', timeZone: 'UTC' })) as {
      totals: { projectId: string | null; project: string; hours: number }[];
    };
    expect(summary.totals.find((t) => t.projectId === project.id)?.hours).toBe(1);
  });

  it('book_slot books an Outlook slot once, through the ledger; the taken slot is refused', async () => {
    const first = await call('book_slot', {
      calendarId: cal.Team,
      start: at(13, 9),
      end: at(13, 10),
      summary: 'Booked call',
    });
    expect(first.eventId).toEqual(expect.any(String));
    expect(graphEvents('Team').filter((e) => e.subject === 'Booked call')).toHaveLength(1);
    const second = await refused('book_slot', {
      calendarId: cal.Team,
      start: at(13, 9.5),
      end: at(13, 10.5),
      summary: 'Clash',
    });
    expect(second).toMatch(/Not booked/);
    const { rows } = await gw.db.pool.query(
      `SELECT count(*)::int AS n FROM bookings WHERE calendar_id = $1 AND status = 'confirmed'`,
      [cal.Team],
    );
    expect(rows[0].n).toBe(1);
  });

  it('book_slot with attendees: Outlook invites them itself, and the answer says so', async () => {
    const booked = (await call('book_slot', {
      calendarId: cal.Team,
      start: at(14, 9),
      end: at(14, 10),
      summary: 'Call with Dana',
      attendees: ['dana@contoso.com'],
    })) as { eventId: string; warnings?: { kind: string; message: string }[] };
    expect(booked.warnings).toEqual([
      {
        kind: 'note',
        message:
          'Outlook sent the invitation to dana@contoso.com itself: Calgate cannot book on an Outlook calendar without Outlook inviting the attendees.',
      },
    ]);
    const stored = graphEvents('Team').find((e) => e.id === booked.eventId) as {
      attendees: { emailAddress: { address: string } }[];
    };
    expect(stored.attendees.map((a) => a.emailAddress.address)).toEqual(['dana@contoso.com']);
  });

  it('search and fetch find Outlook events', async () => {
    const hits = JSON.parse(
      textOf(await client.callTool({ name: 'search', arguments: { query: 'Roadmap' } })),
    ) as {
      results: { id: string; title: string }[];
    };
    expect(hits.results.map((h) => h.title)).toEqual([`Planning (${at(0, 9)})`]);
    const hit = hits.results[0] as { id: string };
    const doc = JSON.parse(textOf(await client.callTool({ name: 'fetch', arguments: { id: hit.id } }))) as {
      text: string;
    };
    expect(doc.text).toMatch(/Roadmap & goals/);
    const found = (await call('search_events', {
      query: 'standup',
      timeMin: at(0, 0),
      timeMax: at(30, 0),
      format: 'json',
    })) as {
      events: EventOut[];
    };
    expect(found.events.map((e) => e.start.dateTime)).toHaveLength(2);
  });

  it('429 with Retry-After is waited out; an expired access token is refreshed once and the rotated refresh token stored sealed', async () => {
    ms.admin.script({
      match: { op: 'calendarView.list' },
      times: 1,
      action: { kind: 'error', status: 429, retryAfterSeconds: 1 },
    });
    const started = Date.now();
    const { events } = await list({ calendarId: cal.Team, timeMin: at(0, 0), timeMax: at(1, 0) });
    expect(events.map((e) => e.summary)).toEqual(['Team review']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    const views = ms.admin.requests().filter((r) => r.op === 'calendarView.list');
    expect(views.slice(-2).map((r) => r.status)).toEqual([429, 200]);

    const stored = async () =>
      JSON.parse(
        (await gw.runtime.connections.readCredentials(tenant.tenantId, outlook.connectionId)) as string,
      ) as { refreshToken: string };
    const before = (await stored()).refreshToken;
    const refreshes = () => ms.admin.requests().filter((r) => r.op === 'oauth.token').length;
    const tokensBefore = refreshes();
    expect(ms.admin.expireAccessTokens({ email: ANN })).toBeGreaterThan(0);
    await list({ calendarId: cal.Team, timeMin: at(0, 0), timeMax: at(1, 0) });
    expect(refreshes()).toBe(tokensBefore + 1);
    const after = (await stored()).refreshToken;
    expect(after).not.toBe(before);
    const { rows } = await gw.db.pool.query(
      'SELECT credentials_ciphertext AS credentials FROM connections WHERE id = $1',
      [outlook.connectionId],
    );
    expect(Buffer.from(rows[0].credentials).toString('latin1')).not.toContain(after);
  });

  it("an account whose /me.mail is empty is known by its userPrincipalName; with MailboxSettings.Read its zone is the mailbox's", async () => {
    const other = await gw.seedTenant('Other');
    const connected = await connectOutlookAccount(gw, ms, other.tenantId, [other.keyId], CARL_UPN, 'read', [
      'offline_access',
      'User.Read',
      'Calendars.Read',
      'MailboxSettings.Read',
    ]);
    expect(connected.timeZone).toBe('America/New_York');
    const carl = await connectClient(gw.mcpUrl, other.secret);
    try {
      const listed = (await carl.callTool({ name: 'list_calendars', arguments: {} })).structuredContent as {
        calendars: { accountEmail: string; timeZone: string; canWrite: boolean }[];
      };
      expect(listed.calendars).toEqual([
        expect.objectContaining({ accountEmail: CARL_UPN, timeZone: 'America/New_York', canWrite: false }),
      ]);
      // Read-only consent: a write is refused with the account named, before Graph is asked.
      const denied = await carl.callTool({
        name: 'create_event',
        arguments: { summary: 'x', start: { dateTime: at(1, 9) }, end: { dateTime: at(1, 10) } },
      });
      expect(denied.isError).toBe(true);
      expect(textOf(denied)).toMatch(/read-only access to 'carl@contoso\.onmicrosoft\.com'/);
    } finally {
      await carl.close();
    }
  });

  it('a refresh token Microsoft refuses (invalid_grant) marks the connection needs_reauth and says to reconnect', async () => {
    const other = await gw.seedTenant('Lapsed');
    await connectOutlookAccount(gw, ms, other.tenantId, [other.keyId], DORA, 'read');
    const dora = await connectClient(gw.mcpUrl, other.secret);
    try {
      ms.admin.revokeRefreshTokens({ email: DORA });
      ms.admin.expireAccessTokens({ email: DORA });
      const drops = watchKeyDrops(gw);
      const result = await dora.callTool({
        name: 'list_events',
        arguments: { timeMin: at(0, 0), timeMax: at(1, 0) },
      });
      expect(textOf(result)).toMatch(/reconnect/i);
      const { rows } = await gw.db.pool.query(
        "SELECT status::text AS status FROM connections WHERE tenant_id = $1 AND provider = 'microsoft'",
        [other.tenantId],
      );
      expect(rows.map((r) => r.status)).toEqual(['needs_reauth']);
      // The key's next call sees the new status; only this tenant's cached keys were dropped.
      const seen = await dora.callTool({ name: 'list_calendars', arguments: {} });
      const calendars = (seen.structuredContent as { calendars: { status?: string }[] }).calendars;
      expect(calendars.map((c) => c.status)).toContain('needs_reauth');
      drops.stop();
      expect(drops.tenants.length).toBeGreaterThan(0);
      expect(new Set(drops.tenants)).toEqual(new Set([other.tenantId]));
    } finally {
      await dora.close();
    }
  });

  it('create_calendar on the Outlook account', async () => {
    const out = (await call('create_calendar', { summary: 'Side project', onAccountOf: cal.Team })) as {
      calendar: { id: string; summary: string };
    };
    expect(ms.admin.calendars(ANN).map((c) => c.name)).toContain('Side project');
    const listed = (await call('list_calendars', {})) as { calendars: { id: string; canWrite: boolean }[] };
    expect(listed.calendars.find((c) => c.id === out.calendar.id)?.canWrite).toBe(true);
    const described = await refused('create_calendar', {
      summary: 'Described',
      description: 'Notes',
      onAccountOf: cal.Team,
    });
    expect(described).toMatch(/Outlook calendars have no description/);
    expect(ms.admin.calendars(ANN).map((c) => c.name)).not.toContain('Described');
  });
});

function weekday(days: number): string {
  return ['sunday', 'monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday'][
    new Date(DAY0 + days * DAY).getUTCDay()
  ] as string;
}
