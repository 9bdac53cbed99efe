/**
 * import_events into an Outlook calendar over MCP with the official SDK client, against the
 * Microsoft Graph emulator: each event keeps its UID in Calgate's extended property (Graph sets
 * iCalUId itself), so importing again updates and never duplicates; a series' RRULE becomes
 * Outlook's pattern, its overrides change the real occurrences, its EXDATEs delete them; rules
 * Outlook cannot repeat, and RDATEs, are refused per event with the reason.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';
import { type ImportAnswer, listJanuary, OFFSITE, REVIEW, vcalendar, vevent } from './ics-import-fixture.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';

const ANN = 'ann@contoso.com';
const PROPERTY = 'String {00020329-0000-0000-c000-000000000046} Name Calgate.iCalUID';

const STANDUP = vevent([
  'UID:standup@example.com',
  'DTSTART;TZID=Europe/Berlin:20260105T090000',
  'DTEND;TZID=Europe/Berlin:20260105T091500',
  'RRULE:FREQ=DAILY;COUNT=5',
  'EXDATE;TZID=Europe/Berlin:20260108T090000',
  'SUMMARY:Standup',
]);
const HOURLY = vevent([
  'UID:hourly@example.com',
  'DTSTART:20260106T080000Z',
  'DTEND:20260106T081000Z',
  'RRULE:FREQ=HOURLY;COUNT=3',
  'SUMMARY:Ping',
]);
const EXTRA_DAYS = vevent([
  'UID:rdate@example.com',
  'DTSTART:20260106T100000Z',
  'DTEND:20260106T110000Z',
  'RRULE:FREQ=WEEKLY;COUNT=2',
  'RDATE:20260109T100000Z',
  'SUMMARY:Class',
]);
/** The standup's third day moved to the afternoon: written last, far from its series. */
const STANDUP_MOVED = vevent([
  'UID:standup@example.com',
  'RECURRENCE-ID;TZID=Europe/Berlin:20260107T090000',
  'DTSTART;TZID=Europe/Berlin:20260107T140000',
  'DTEND;TZID=Europe/Berlin:20260107T141500',
  'SUMMARY:Standup (afternoon)',
]);

describe('import_events into an Outlook calendar (Graph emulator)', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let client: Client;
  let outlook: ConnectedOutlook;
  let calendar = '';

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          displayName: 'Ann Example',
          timeZone: 'W. Europe Standard Time',
          calendars: [{ name: 'Calendar' }],
        },
      ],
    });
    gw = await startTestGateway({ ...ms.env, ...HIGH_RATE_LIMITS });
    const tenant = await gw.seedTenant('Acme');
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, { toolsets: ['calendar', 'ics'] });
    outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
    calendar = outlook.calendars.Calendar as string;
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 90_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await ms?.close();
  });

  const importIcs = async (ics: string) => {
    const result = await client.callTool({ name: 'import_events', arguments: { calendarId: calendar, ics } });
    expect(result.isError, textOf(result)).toBeFalsy();
    return result.structuredContent as unknown as ImportAnswer;
  };

  const listing = () => listJanuary(client, calendar);

  /** A Graph read as the account itself (someone looking in Outlook). */
  const graphGet = async (path: string) => {
    const token = ms.admin.issueTokens({ email: ANN }).access_token;
    const response = await fetch(`${ms.graphUrl}${path}`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    return (await response.json()) as Record<string, unknown>;
  };

  /** The stored events (singles and masters) and the UID each keeps, straight from the emulator. */
  const stored = () =>
    ms.admin
      .events(outlook.externalIds.Calendar as string)
      .filter((e) => e.type !== 'exception')
      .map((e) => e.subject as string)
      .sort();

  it('imports singles and a series under their UIDs, moves and deletes its occurrences, and refuses what Outlook cannot repeat', async () => {
    const answer = await importIcs(vcalendar(STANDUP, OFFSITE, REVIEW, HOURLY, EXTRA_DAYS, STANDUP_MOVED));
    expect(answer).toMatchObject({ imported: 3, updated: 0, skipped: 0 });
    expect(answer.errors).toEqual([
      { uid: 'hourly@example.com', line: 30, message: expect.stringMatching(/Outlook.*hourly/i) },
      { uid: 'rdate@example.com', line: 38, message: expect.stringMatching(/Outlook cannot store 'RDATE'/) },
    ]);
    expect(stored()).toEqual(['Offsite', 'Review', 'Standup']);
    const events = await listing();
    expect(events.map((e) => [e.summary, e.start.dateTime ?? e.start.date])).toEqual([
      ['Standup', '2026-01-05T09:00:00+01:00'],
      ['Offsite', '2026-01-06'],
      ['Standup', '2026-01-06T09:00:00+01:00'],
      ['Review', '2026-01-06T16:00:00+01:00'],
      ['Standup (afternoon)', '2026-01-07T14:00:00+01:00'],
      ['Standup', '2026-01-09T09:00:00+01:00'],
    ]);
    // Each event carries its UID in the extended property, found the way Graph finds it.
    const found = await graphGet(
      `/me/calendars/${outlook.externalIds.Calendar}/events?${new URLSearchParams({
        $filter: `singleValueExtendedProperties/Any(ep: ep/id eq '${PROPERTY}' and ep/value eq 'offsite@example.com')`,
        $select: 'subject',
      })}`,
    );
    expect((found.value as { subject: string }[]).map((e) => e.subject)).toEqual(['Offsite']);
  });

  it('importing the same file again updates in place and never duplicates', async () => {
    const again = await importIcs(vcalendar(STANDUP, OFFSITE, REVIEW, HOURLY, EXTRA_DAYS, STANDUP_MOVED));
    // The series with its overrides is written again; the unchanged singles are skipped.
    expect(again).toMatchObject({ imported: 0, updated: 1, skipped: 2 });
    expect(again.errors.map((e) => e.uid)).toEqual(['hourly@example.com', 'rdate@example.com']);
    const changed = await importIcs(
      vcalendar(
        OFFSITE.map((line) => (line === 'LOCATION:Lisbon' ? 'LOCATION:Porto' : line)),
        REVIEW,
      ),
    );
    expect(changed).toMatchObject({ imported: 0, updated: 1, skipped: 1, errors: [] });
    expect(stored()).toEqual(['Offsite', 'Review', 'Standup']);
    const events = await listing();
    expect(events).toHaveLength(6);
    expect(events.find((e) => e.summary === 'Offsite')?.location).toBe('Porto');
    expect(events.filter((e) => e.summary === 'Standup (afternoon)')).toHaveLength(1);
  });

  it('finds more than ten UIDs with one listing of the calendar and updates them in place', async () => {
    const many = Array.from({ length: 12 }, (_, i) =>
      vevent([
        `UID:many-${i}@example.com`,
        `DTSTART:202601${String(10 + i).padStart(2, '0')}T100000Z`,
        `DTEND:202601${String(10 + i).padStart(2, '0')}T110000Z`,
        `SUMMARY:Many ${i}`,
      ]),
    );
    expect(await importIcs(vcalendar(...many))).toMatchObject({ imported: 12, errors: [] });
    const before = ms.admin.requests().length;
    const renamed = many.map((lines) =>
      lines.map((line) => (line === 'SUMMARY:Many 3' ? 'SUMMARY:Many three' : line)),
    );
    expect(await importIcs(vcalendar(...renamed))).toMatchObject({
      imported: 0,
      updated: 1,
      skipped: 11,
      errors: [],
    });
    const lookups = ms.admin
      .requests()
      .slice(before)
      .filter((r) => r.op === 'events.list' && r.query.includes('singleValueExtendedProperties'));
    expect(lookups).toHaveLength(1);
    expect(new URLSearchParams(lookups[0]?.query).has('$filter')).toBe(false);
    expect(stored().filter((s) => s.startsWith('Many'))).toHaveLength(12);
    expect(stored()).toContain('Many three');
  });
});
