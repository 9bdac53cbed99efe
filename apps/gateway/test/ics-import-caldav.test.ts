/**
 * import_events into CalDAV calendars over MCP (the official SDK client) against real Radicale
 * and Xandikos servers: every VEVENT keeps its UID on the server, a series' override and EXDATE
 * arrive, and importing again (changed) updates the same objects, never duplicating them. Hrefs
 * stay the server's: an object another client wrote under its own name is found by UID.
 */
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { caldavEnv, calendarNamed, connectCaldavAccount } from './caldav-fixture.ts';
import { connectClient, startTestGateway, type TestGateway } from './harness.ts';
import {
  designReview,
  type ListedEvent,
  OFFSITE_2027,
  standupSeries,
  vcalendar,
  vevent,
} from './ics-import-fixture.ts';
import { callOk } from './tool-calls.ts';

/** Written to the server by another client under a name of its own, before any import. */
const SEEDED = vcalendar(
  vevent([
    'UID:seeded-by-hand@example.com',
    'DTSTART:20270305T120000Z',
    'DTEND:20270305T130000Z',
    'SUMMARY:Lunch',
  ]),
);
const seededAgain = vevent([
  'UID:seeded-by-hand@example.com',
  'DTSTART:20270305T120000Z',
  'DTEND:20270305T133000Z',
  'SUMMARY:Long lunch',
]);

const UIDS = [
  'offsite-2027@example.com',
  'review-7@example.com',
  'seeded-by-hand@example.com',
  'standup-series@example.com',
];

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('import_events into a CalDAV calendar on %s', (_name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let client: Client;
  let calendarId = '';
  let path = '';

  const call = (name: string, args: Record<string, unknown>) => callOk(client, name, args);

  /** The calendar's objects as the server holds them: href → UIDs of its VEVENTs, and text. */
  async function objects(): Promise<Map<string, { uids: string[]; text: string }>> {
    const listing = await server.raw(
      'PROPFIND',
      path,
      '<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:getetag/></d:prop></d:propfind>',
      { depth: '1', 'content-type': 'application/xml' },
    );
    const xml = await listing.text();
    const hrefs = [...xml.matchAll(/<(?:\w+:)?href>([^<]+)<\/(?:\w+:)?href>/g)]
      .map((m) => decodeURIComponent(m[1] as string))
      .filter((href) => href.endsWith('.ics'));
    const out = new Map<string, { uids: string[]; text: string }>();
    for (const href of hrefs) {
      const text = await (await server.raw('GET', href)).text();
      const uids = [...new Set([...text.matchAll(/^UID:(.+?)\r?$/gm)].map((m) => (m[1] as string).trim()))];
      out.set(href.slice(href.lastIndexOf('/') + 1), { uids, text });
    }
    return out;
  }

  async function week(): Promise<ListedEvent[]> {
    const listed = await call('list_events', {
      calendarId,
      timeMin: '2027-03-01T00:00:00Z',
      timeMax: '2027-03-08T00:00:00Z',
      format: 'json',
    });
    return listed.events as ListedEvent[];
  }

  beforeAll(async () => {
    server = await start();
    path = new URL(`${server.home}imports/`).pathname;
    await server.makeCalendar(path, { displayName: 'Imports', timeZone: 'Europe/Berlin' });
    await server.seed(`${path}lunch-from-phone.ics`, SEEDED);
    const env = caldavEnv();
    gw = await startTestGateway(env);
    const tenant = await gw.seedTenant('Importer');
    await gw.runtime.tenancy.updateTenant(tenant.tenantId, { timeZone: 'Europe/Berlin' });
    await gw.runtime.keys.setDefaults(tenant.tenantId, tenant.keyId, {
      toolsets: ['calendar', 'ics'],
      hijackPolicy: 'off',
    });
    calendarId = calendarNamed(await connectCaldavAccount(gw, env, server, tenant), 'Imports') as string;
    expect(calendarId).toBeTruthy();
    gw.forgetKeys(tenant.tenantId);
    client = await connectClient(gw.mcpUrl, tenant.secret);
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await server?.stop();
  });

  it('imports singles and a series with an override and an EXDATE, keeping every UID, then updates the same objects', async () => {
    const first = await call('import_events', {
      calendarId,
      ics: vcalendar(designReview('Design review'), OFFSITE_2027, standupSeries('11'), seededAgain),
    });
    expect(first).toMatchObject({ imported: 3, updated: 1, skipped: 0, errors: [] });

    const stored = await objects();
    expect(stored.size).toBe(4);
    expect([...stored.values()].flatMap((o) => o.uids).sort()).toEqual(UIDS);
    // Names are the server's or Calgate's own, never made from a UID.
    for (const [name, { uids }] of stored) {
      for (const uid of uids) {
        expect(name).not.toContain(uid.split('@')[0]);
      }
    }
    expect(stored.get('lunch-from-phone.ics')?.text).toContain('SUMMARY:Long lunch');
    const series = [...stored.values()].find((o) => o.uids.includes('standup-series@example.com'));
    expect(series?.text).toMatch(/RECURRENCE-ID;TZID=Europe\/Berlin:20270302T090000/);
    expect(series?.text).toMatch(/EXDATE;TZID=Europe\/Berlin:20270304T090000/);

    const listed = await week();
    expect(
      listed.filter((e) => e.summary?.startsWith('Standup')).map((e) => [e.summary, e.start.dateTime]),
    ).toEqual([
      ['Standup', '2027-03-01T09:00:00+01:00'],
      ['Standup (late)', '2027-03-02T11:00:00+01:00'],
      ['Standup', '2027-03-03T09:00:00+01:00'],
      ['Standup', '2027-03-05T09:00:00+01:00'],
    ]);
    expect(listed.map((e) => e.summary)).toEqual(
      expect.arrayContaining(['Design review', 'Offsite', 'Long lunch']),
    );

    // Again, changed: the same objects are updated, nothing is added.
    const second = await call('import_events', {
      calendarId,
      ics: vcalendar(designReview('Design review (room 4)'), OFFSITE_2027, standupSeries('12'), seededAgain),
    });
    expect(second).toMatchObject({ imported: 0, errors: [] });
    expect((second.updated as number) + (second.skipped as number)).toBe(4);
    expect(second.updated).toBeGreaterThanOrEqual(2);
    const after = await objects();
    expect([...after.keys()].sort()).toEqual([...stored.keys()].sort());
    expect([...after.values()].flatMap((o) => o.uids).sort()).toEqual(UIDS);
    const review = [...after.values()].find((o) => o.uids.includes('review-7@example.com'));
    expect(review?.text).toContain('SUMMARY:Design review (room 4)');

    const relisted = await week();
    expect(
      relisted.filter((e) => e.summary?.startsWith('Standup')).map((e) => [e.summary, e.start.dateTime]),
    ).toEqual([
      ['Standup', '2027-03-01T09:00:00+01:00'],
      ['Standup (late)', '2027-03-02T12:00:00+01:00'],
      ['Standup', '2027-03-03T09:00:00+01:00'],
      ['Standup', '2027-03-05T09:00:00+01:00'],
    ]);
    expect(relisted.filter((e) => e.summary?.startsWith('Design review'))).toHaveLength(1);

    // The same data a third time changes nothing and adds nothing.
    const third = await call('import_events', {
      calendarId,
      ics: vcalendar(designReview('Design review (room 4)'), OFFSITE_2027, standupSeries('12'), seededAgain),
    });
    expect(third).toMatchObject({ imported: 0, errors: [] });
    expect([...(await objects()).keys()].sort()).toEqual([...stored.keys()].sort());
  });
});
