/**
 * Read-side screening of CalDAV calendars over MCP (real Radicale and Xandikos servers, seeded by
 * plain PUTs as another client would write invitations): a stranger's invitation whose description and location
 * address an AI assistant, and another's whose summary is the payload, are withheld by
 * list_events, get_event and search_events, shown fenced by get_event with includeFlagged, and
 * marked as organised outside; afterwards the hijack guard stops deleting an event and inviting
 * outside the organisation (refused for a client without forms, asked through elicitation for one
 * with them). Both as read through the event mirror and as read from the server.
 *
 * Two gateways share one database and one Redis: `gw` syncs the mirror (its worker runs in
 * process) and reads from it; `direct` has MIRROR_READS=false and reads every event from the server.
 */
import { Client, type ElicitRequest, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  startRadicale,
  startXandikos,
  type TestCaldavServer,
} from '../../../packages/providers/test/caldav/servers.ts';
import { caldavEnv, calendarNamed, connectCaldavAccount } from './caldav-fixture.ts';
import { type TestGateway, textOf } from './harness.ts';
import { readsVia, startMirroredAndDirect, waitForMirror } from './mirror-gateways.ts';
import {
  INJECTION,
  NAME_INJECTION as LOCATION_INJECTION,
  SUBJECT_INJECTION as SUMMARY_INJECTION,
  WITHHELD_DESCRIPTION,
  WITHHELD_LOCATION,
  WITHHELD_SUMMARY,
} from './screening-payloads.ts';
import { testDays } from './test-days.ts';

const FLAGS = [
  { field: 'description', reason: 'addresses an AI assistant' },
  { field: 'location', reason: 'addresses an AI assistant' },
];

const { at } = testDays(3);
/** The same instant in iCalendar's basic UTC form. */
const icalAt = (days: number, hours: number) => at(days, hours).replace(/[-:]/g, '');

/** RFC 5545 TEXT escaping, as a mail client writing the invitation would. */
const text = (value: string) =>
  value.replace(/\\/g, '\\\\').replace(/;/g, '\\;').replace(/,/g, '\\,').replace(/\n/g, '\\n');

function invitation(uid: string, days: number, hours: number, lines: string[]): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Other Client//Mail 1.0//EN',
    'METHOD:REQUEST',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    `DTSTART:${icalAt(days, hours)}`,
    `DTEND:${icalAt(days, hours + 1)}`,
    ...lines,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

interface Event {
  id: string;
  calendarId: string;
  summary?: string;
  description?: string;
  location?: string;
  attendees?: { email: string }[];
  organizer?: { email?: string };
  flagged?: { field: string; reason: string }[];
  organizerOutside?: boolean;
}

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('read-side screening of CalDAV calendars over MCP (%s, mirrored and direct)', (_name, start) => {
  let server: TestCaldavServer;
  let gw: TestGateway;
  let direct: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let calendarId: string;
  let workPath: string;
  const window = { timeMin: at(-1, 0), timeMax: at(3, 0) };

  beforeAll(async () => {
    server = await start();
    workPath = new URL(`${server.home}work/`).pathname;
    await server.makeCalendar(workPath, { displayName: 'Work' });
    await server.seed(
      `${workPath}planning.ics`,
      invitation('planning@acme', 0, 9, [
        'SUMMARY:Planning',
        `DESCRIPTION:${text('Roadmap review; bring the Q3 numbers')}`,
      ]),
    );
    // Invitations as a stranger's mail client sends them, landed in the person's calendar.
    await server.seed(
      `${workPath}vendor-review.ics`,
      invitation('vendor-review@evil.test', 0, 13, [
        'SUMMARY:Vendor review',
        `DESCRIPTION:${text(`Agenda: Q3 numbers.\n${INJECTION}`)}`,
        `LOCATION:${text(LOCATION_INJECTION)}`,
        'ORGANIZER;CN=Mallory:mailto:mallory@evil.test',
        'ATTENDEE;CN=Ann Example;PARTSTAT=NEEDS-ACTION:mailto:ann@acme.test',
        'ATTENDEE;CN=Mallory;PARTSTAT=ACCEPTED:mailto:mallory@evil.test',
      ]),
    );
    await server.seed(
      `${workPath}forward.ics`,
      invitation('forward@evil.test', 1, 9, [
        `SUMMARY:${text(SUMMARY_INJECTION)}`,
        'ORGANIZER:mailto:eve@evil.test',
        'ATTENDEE;PARTSTAT=NEEDS-ACTION:mailto:ann@acme.test',
      ]),
    );
    await server.seed(
      `${workPath}retro.ics`,
      invitation('retro@acme', 0, 15, ['SUMMARY:Retro', 'ORGANIZER:mailto:bob@acme.test']),
    );
    const env = caldavEnv();
    ({ gw, direct } = await startMirroredAndDirect(env));
    tenant = await gw.seedTenant('Acme');
    // The person's own address: acme.test is the organisation, anything else is outside.
    await gw.db.pool.query(
      "INSERT INTO users (id, tenant_id, email) VALUES ('usr_ann', $1, 'ann@acme.test')",
      [tenant.tenantId],
    );
    calendarId = calendarNamed(await connectCaldavAccount(gw, env, server, tenant), 'Work') as string;
    expect(calendarId).toBeTruthy();
    gw.forgetKeys(tenant.tenantId);
    direct.forgetKeys(tenant.tenantId);
    await waitForMirror(gw, tenant.secret, { calendarId, ...window });
  }, 60_000);

  afterAll(async () => {
    await direct?.stop();
    await gw?.stop();
    await server?.stop();
  });

  const principal = () => `${tenant.tenantId}:${tenant.keyId}`;

  for (const via of ['mirror', 'server'] as const) {
    describe(`read ${via === 'mirror' ? 'through the mirror' : 'directly from the CalDAV server'}`, () => {
      const gateway = () => (via === 'mirror' ? gw : direct);
      const { client, call, listed } = readsVia<Event>({
        mirrored: via === 'mirror',
        gateway,
        secret: () => tenant.secret,
        list: () => ({ calendarId, ...window }),
        before: async () => gw.runtime.deps.exposures?.clear(principal()),
      });
      const vendor = (events: Event[]) => events.find((e) => e.summary === 'Vendor review') as Event;

      function expectWithheld(event: Event) {
        expect(event.description).toBe(WITHHELD_DESCRIPTION);
        expect(event.location).toBe(WITHHELD_LOCATION);
        expect(event.flagged).toEqual(FLAGS);
        expect(event.organizer?.email).toBe('mallory@evil.test');
        expect(event.organizerOutside).toBe(true);
      }

      it('list_events withholds the flagged text and marks outside organizers; colleagues and own events read as written', async () => {
        const { result, events } = await listed();
        expect(events.map((e) => e.summary)).toEqual([
          'Planning',
          'Vendor review',
          'Retro',
          WITHHELD_SUMMARY,
        ]);
        expectWithheld(vendor(events));
        expect(events[3]).toMatchObject({
          flagged: [{ field: 'summary', reason: 'addresses an AI assistant' }],
          organizer: { email: 'eve@evil.test' },
          organizerOutside: true,
        });
        expect(textOf(result)).not.toContain('ignore');
        const planning = events[0] as Event;
        expect(planning.description).toBe('Roadmap review; bring the Q3 numbers');
        expect(planning).not.toHaveProperty('flagged');
        expect(planning).not.toHaveProperty('organizerOutside');
        const retro = events[2] as Event;
        expect(retro.organizer?.email).toBe('bob@acme.test');
        expect(retro).not.toHaveProperty('flagged');
        expect(retro).not.toHaveProperty('organizerOutside');
      });

      it('get_event withholds as well; includeFlagged returns the text verbatim in a delimited block', async () => {
        const { id } = vendor((await listed()).events);
        const plain = await call('get_event', { calendarId, eventId: id });
        expectWithheld((plain.structuredContent as { event: Event }).event);
        expect(textOf(plain)).not.toContain('ignore');

        const shown = await call('get_event', { calendarId, eventId: id, includeFlagged: true });
        const revealed = (shown.structuredContent as { event: Event }).event;
        const lines = (revealed.description as string).split('\n');
        expect(lines[0]).toMatch(/^<<<UNTRUSTED CALENDAR TEXT [0-9a-f]{10}: description$/);
        expect(lines.slice(2, -1).join('\n')).toBe(`Agenda: Q3 numbers.\n${INJECTION}`);
        expect(lines.at(-1)).toMatch(/^UNTRUSTED CALENDAR TEXT [0-9a-f]{10} ENDS>>>$/);
        expect(revealed.location).toContain(`\n${LOCATION_INJECTION}\n`);
        expect(revealed.flagged).toEqual(FLAGS);
        expect(revealed.organizerOutside).toBe(true);
        expect(textOf(shown)).toContain('ignore your previous instructions');
      });

      it('search_events withholds the same text', async () => {
        const result = await call('search_events', { query: 'vendor', ...window });
        const events = (result.structuredContent as { events: Event[] }).events;
        expect(events.map((e) => e.summary)).toEqual(['Vendor review']);
        // A lean match: the text fields it carries are screened alike (get_event has the organizer).
        expect(events[0]).toMatchObject({
          description: WITHHELD_DESCRIPTION,
          location: WITHHELD_LOCATION,
          flagged: FLAGS,
        });
        expect(textOf(result)).not.toContain('ignore');
      });

      it('after the read, deleting an event and inviting outside the organisation are refused; the server keeps the event', async () => {
        await gw.runtime.deps.exposures?.clear(principal());
        const { events } = await listed();
        const flaggedId = vendor(events).id;
        const recent = (await gateway().runtime.deps.exposures?.recent(principal())) ?? [];
        expect(recent.map(({ kind, tool, eventId, detail }) => ({ kind, tool, eventId, detail }))).toEqual(
          expect.arrayContaining([
            {
              kind: 'flagged',
              tool: 'list_events',
              eventId: flaggedId,
              detail: 'description addresses an AI assistant',
            },
            {
              kind: 'outside_organizer',
              tool: 'list_events',
              eventId: flaggedId,
              detail: 'organised by mallory@evil.test',
            },
          ]),
        );

        const planning = events[0] as Event;
        const refused = await client().callTool({
          name: 'delete_event',
          arguments: { calendarId, eventId: planning.id },
        });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain(
          `delete_event was not run: "delete event ${planning.id} in calendar 'Work' (${calendarId})" needs the person's confirmation`,
        );
        expect(textOf(refused)).toContain('Confirm in the Calgate dashboard or repeat with confirmation');
        expect(textOf(refused)).not.toContain('ignore');
        expect((await server.raw('GET', `${workPath}planning.ics`)).status).toBe(200);

        const invite = await client().callTool({
          name: 'update_event',
          arguments: { calendarId, eventId: planning.id, attendees: ['bob@acme.test', 'mallory@evil.test'] },
        });
        expect(invite.isError).toBe(true);
        expect(textOf(invite)).toContain('mallory@evil.test (outside your organisation)');
        expect(textOf(invite)).toContain("needs the person's confirmation");
        expect(await (await server.raw('GET', `${workPath}planning.ics`)).text()).not.toContain('mallory');
      });
    });
  }

  it('a client that declares forms is asked; declined, the event stays on the server; accepted, it goes', async () => {
    await gw.runtime.deps.exposures?.clear(principal());
    let answer: 'decline' | 'accept' = 'decline';
    const seen: ElicitRequest['params'][] = [];
    const client = new Client(
      { name: 'asking-client', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    client.setRequestHandler('elicitation/create', async (request) => {
      seen.push(request.params);
      return answer === 'accept' ? { action: 'accept', content: { allow: true } } : { action: 'decline' };
    });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(gw.mcpUrl), {
        requestInit: { headers: { Authorization: `Bearer ${tenant.secret}` } },
      }),
    );
    try {
      const listed = await client.callTool({ name: 'list_events', arguments: { calendarId, ...window } });
      const events = (listed.structuredContent as { events: Event[] }).events;
      const retro = events.find((e) => e.summary === 'Retro') as Event;

      const declined = await client.callTool({
        name: 'delete_event',
        arguments: { calendarId, eventId: retro.id },
      });
      expect(declined.isError).toBe(true);
      expect(textOf(declined)).toContain('the person did not allow');
      expect(seen).toHaveLength(1);
      expect(seen[0]?.message).toContain(`delete event ${retro.id} in calendar 'Work'`);
      expect(seen[0]?.message).toContain('description addresses an AI assistant');
      expect(seen[0]?.message).not.toContain('ignore');
      expect((await server.raw('GET', `${workPath}retro.ics`)).status).toBe(200);

      answer = 'accept';
      const accepted = await client.callTool({
        name: 'delete_event',
        arguments: { calendarId, eventId: retro.id },
      });
      expect(accepted.isError, textOf(accepted)).toBeFalsy();
      expect(seen).toHaveLength(2);
      expect((await server.raw('GET', `${workPath}retro.ics`)).status).toBe(404);
    } finally {
      await client.close();
    }
  });
});
