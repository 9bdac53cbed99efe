import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore } from '@calgate/store';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectGoogleAccountByCli, startTestEmulator } from './google-fixture.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

const DAY = 86_400_000;
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const at = (days: number, hours: number) =>
  new Date(TODAY + days * DAY + hours * 3_600_000).toISOString().replace('.000Z', 'Z');
const date = (days: number) => new Date(TODAY + days * DAY).toISOString().slice(0, 10);

interface Hit {
  id: string;
  title: string;
  url: string;
}
interface Doc extends Hit {
  text: string;
  metadata: { start: string; end: string };
}

async function search(client: Client, query: string): Promise<Hit[]> {
  const result = await client.callTool({ name: 'search', arguments: { query } });
  expect(result.isError).toBeFalsy();
  return (JSON.parse(textOf(result)) as { results: Hit[] }).results;
}

async function fetchDoc(client: Client, id: string): Promise<Doc> {
  const result = await client.callTool({ name: 'fetch', arguments: { id } });
  expect(result.isError, textOf(result)).toBeFalsy();
  return JSON.parse(textOf(result)) as Doc;
}

/** The same series and events, seeded into a local calendar and into the Google emulator. */
const SERIES = {
  // Started three weeks ago, six weekly occurrences: the next one is in three days' time.
  standup: {
    summary: 'Standup',
    start: at(-18, 9),
    end: at(-18, 9.5),
    recurrence: ['RRULE:FREQ=WEEKLY;COUNT=6'],
  },
  // Every two weeks, over a month ago: no upcoming occurrence, so the latest one stands for it.
  retro: {
    summary: 'Retro',
    start: at(-40, 15),
    end: at(-40, 16),
    recurrence: ['RRULE:FREQ=WEEKLY;INTERVAL=2;COUNT=2'],
  },
};
const ATTENDEES = [
  {
    email: 'ann@example.com',
    displayName: 'Ann Example',
    responseStatus: 'accepted' as const,
    organizer: true,
  },
  { email: 'bob@example.com', responseStatus: 'declined' as const },
  { email: 'cy@example.com', displayName: 'Cy', responseStatus: 'needsAction' as const, optional: true },
];

function checkSeries(standups: Hit[], retros: Hit[]) {
  expect(standups).toHaveLength(1);
  const [standup] = standups as [Hit];
  expect(standup.title).toMatch(/^Standup \(\S+, repeats weekly\)$/);
  expect(retros).toHaveLength(1);
  expect((retros[0] as Hit).title).toMatch(/^Retro \(\S+, repeats every 2 weeks\)$/);
}

function describeSuite(
  name: string,
  setup: () => Promise<{ client: Client; calendarId: string; stop(): Promise<void> }>,
) {
  describe(name, () => {
    let client: Client;
    let calendarId: string;
    let stop: () => Promise<void>;
    beforeAll(async () => {
      ({ client, calendarId, stop } = await setup());
    });
    afterAll(async () => {
      await client.close();
      await stop();
    });

    it('search gives a series one result: its next occurrence, titled as repeating, which fetch reads', async () => {
      const standups = await search(client, 'Standup');
      const retros = await search(client, 'Retro');
      checkSeries(standups, retros);
      const [standup] = standups as [Hit];
      const doc = await fetchDoc(client, standup.id);
      expect(doc.title).toBe(standup.title);
      // The next occurrence: three days from now, not the first nor the last.
      expect(Date.parse(doc.metadata.start)).toBe(Date.parse(at(3, 9)));
      const [retro] = retros as [Hit];
      expect(Date.parse((await fetchDoc(client, retro.id)).metadata.start)).toBe(Date.parse(at(-26, 15)));
    });

    it('every occurrence stays reachable through fetch', async () => {
      const listed = await client.callTool({
        name: 'list_events',
        arguments: { calendarId, timeMin: at(-30, 0), timeMax: at(30, 0), query: 'Standup' },
      });
      const events = (listed.structuredContent as { events: { id: string; start: { dateTime: string } }[] })
        .events;
      expect(events).toHaveLength(6);
      const first = events[0] as { id: string; start: { dateTime: string } };
      const doc = await fetchDoc(client, `${calendarId}:${first.id}`);
      expect(Date.parse(doc.metadata.start)).toBe(Date.parse(at(-18, 9)));
      expect(doc.title).toMatch(/^Standup \(\S+, repeats weekly\)$/);
    });

    it('fetch spells out attendees with names, answers and the organizer, and the all-day end rule', async () => {
      const [meeting] = (await search(client, 'Board meeting')) as [Hit];
      const lines = (await fetchDoc(client, meeting.id)).text.split('\n');
      expect(lines.slice(lines.indexOf('Attendees:'))).toEqual([
        'Attendees:',
        '- ann@example.com (Ann Example): accepted, organizer',
        '- bob@example.com: declined',
        '- cy@example.com (Cy): no answer yet, optional',
        'Description: Budget',
      ]);
      const [offsite] = (await search(client, 'Offsite')) as [Hit];
      const text = (await fetchDoc(client, offsite.id)).text;
      expect(text).toContain(`Start: ${date(10)} (all day)`);
      expect(text).toContain(
        `End: ${date(12)} (all-day; the end date ${date(12)} is exclusive: last day ${date(11)})`,
      );
    });
  });
}

describeSuite('search and fetch on a local calendar', async () => {
  const gw: TestGateway = await startTestGateway();
  const tenant = await gw.seedTenant('Local');
  const calendarId = await gw.localCalendar(tenant.tenantId, 'Work', 'UTC');
  await gw.grant(tenant.tenantId, tenant.keyId, calendarId, { read: true, write: true });
  const provider = new LocalCalendarProvider(new LocalEventStore(gw.db));
  const ref = { id: calendarId, externalId: calendarId, timeZone: 'UTC' };
  for (const series of Object.values(SERIES)) {
    await provider.insertEvent(ref, {
      summary: series.summary,
      start: { dateTime: series.start },
      end: { dateTime: series.end },
      recurrence: series.recurrence,
    });
  }
  await provider.insertEvent(ref, {
    summary: 'Board meeting',
    description: 'Budget',
    start: { dateTime: at(5, 10) },
    end: { dateTime: at(5, 11) },
    attendees: ATTENDEES,
  });
  await provider.insertEvent(ref, { summary: 'Offsite', start: { date: date(10) }, end: { date: date(12) } });
  return { client: await connectClient(gw.mcpUrl, tenant.secret), calendarId, stop: () => gw.stop() };
});

describeSuite('search and fetch on Google (emulator)', async () => {
  const CLIENT = { clientId: 'series.apps.googleusercontent.com', clientSecret: 'series-secret' };
  const emulator = await startTestEmulator(CLIENT, {
    accounts: [
      {
        email: 'ann@example.com',
        timeZone: 'UTC',
        events: [
          ...Object.values(SERIES).map((series) => ({
            summary: series.summary,
            start: { dateTime: series.start, timeZone: 'UTC' },
            end: { dateTime: series.end, timeZone: 'UTC' },
            recurrence: series.recurrence,
          })),
          {
            summary: 'Board meeting',
            description: 'Budget',
            start: { dateTime: at(5, 10) },
            end: { dateTime: at(5, 11) },
            attendees: ATTENDEES,
          },
          { summary: 'Offsite', start: { date: date(10) }, end: { date: date(12) } },
        ],
      },
    ],
  });
  const gw = await startTestGateway(emulator.env);
  const tenant = await gw.seedTenant('Google');
  await connectGoogleAccountByCli(gw, emulator, 'ann@example.com', 'read');
  const client = await connectClient(gw.mcpUrl, tenant.secret);
  const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
  const [calendar] = (listed.structuredContent as { calendars: { id: string }[] }).calendars as [
    { id: string },
  ];
  return {
    client,
    calendarId: calendar.id,
    async stop() {
      await gw.stop();
      await emulator.close();
    },
  };
});
