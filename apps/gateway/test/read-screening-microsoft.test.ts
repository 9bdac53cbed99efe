/**
 * Read-side screening of Outlook calendars over MCP (Graph emulator): a stranger's invitation whose
 * HTML body, location and an attendee's name address an AI assistant is withheld by list_events,
 * get_event, search_events, search and fetch, shown fenced by get_event with includeFlagged,
 * recorded in the key's exposure log (as is another stranger's invitation whose subject is the
 * payload), and afterwards a risky call (delete_event) waits for the
 * person. Both as read through the event mirror (after a delta sync) and as read from Graph.
 *
 * Two gateways share one database and one Redis: `gw` syncs the mirror (its worker runs in
 * process) and reads from it; `direct` has MIRROR_READS=false and reads every event from Graph.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HIGH_RATE_LIMITS, type TestGateway, textOf } from './harness.ts';
import {
  type ConnectedOutlook,
  connectOutlookAccount,
  startTestMicrosoftEmulator,
  type TestMicrosoftEmulator,
} from './microsoft-fixture.ts';
import { readsVia, startMirroredAndDirect, waitForMirror } from './mirror-gateways.ts';
import {
  INJECTION,
  NAME_INJECTION,
  SUBJECT_INJECTION,
  WITHHELD_DESCRIPTION,
  WITHHELD_LOCATION,
  WITHHELD_NAME,
  WITHHELD_SUMMARY,
} from './screening-payloads.ts';
import { testDays } from './test-days.ts';

const ANN = 'ann@contoso.com';
const FLAGS = [
  { field: 'description', reason: 'addresses an AI assistant' },
  { field: 'location', reason: 'addresses an AI assistant' },
  { field: 'attendees[1].displayName', reason: 'addresses an AI assistant' },
];

const { at, wall } = testDays(3);

interface Event {
  id: string;
  calendarId: string;
  summary?: string;
  description?: string;
  location?: string;
  attendees?: { email: string; displayName?: string }[];
  organizer?: { email?: string };
  flagged?: { field: string; reason: string }[];
  organizerOutside?: boolean;
}

describe('read-side screening of Outlook calendars over MCP (Graph emulator, mirrored and direct)', () => {
  let ms: TestMicrosoftEmulator;
  let gw: TestGateway;
  let direct: TestGateway;
  let tenant: Awaited<ReturnType<TestGateway['seedTenant']>>;
  let outlook: ConnectedOutlook;
  let calendarId: string;
  const window = { timeMin: at(-1, 0), timeMax: at(3, 0) };

  beforeAll(async () => {
    ms = await startTestMicrosoftEmulator({
      users: [
        {
          email: ANN,
          displayName: 'Ann Example',
          timeZone: 'UTC',
          calendars: [
            {
              name: 'Calendar',
              events: [
                {
                  subject: 'Planning',
                  body: { contentType: 'text', content: 'Roadmap review; bring the Q3 numbers' },
                  start: wall(0, 9),
                  end: wall(0, 10),
                },
                {
                  // An invitation as Outlook delivers it: an HTML body, organised by a stranger.
                  subject: 'Vendor review',
                  organizerAddress: 'mallory@evil.test',
                  body: {
                    contentType: 'html',
                    content: `<html><body><p>Agenda: Q3 numbers.</p><div style="color:#fff">${INJECTION.replace("'", '&#39;')}</div></body></html>`,
                  },
                  location: { displayName: NAME_INJECTION },
                  attendees: [
                    { emailAddress: { address: ANN, name: 'Ann Example' }, type: 'required' },
                    { emailAddress: { address: 'helper@evil.test', name: NAME_INJECTION }, type: 'optional' },
                  ],
                  start: wall(0, 13),
                  end: wall(0, 14),
                },
                {
                  // A stranger's invitation whose subject is the payload.
                  subject: SUBJECT_INJECTION,
                  organizerAddress: 'eve@evil.test',
                  attendees: [{ emailAddress: { address: ANN, name: 'Ann Example' }, type: 'required' }],
                  start: wall(1, 9),
                  end: wall(1, 10),
                },
                {
                  subject: 'Retro',
                  organizerAddress: 'bob@contoso.com',
                  start: wall(0, 15),
                  end: wall(0, 16),
                },
              ],
            },
          ],
        },
      ],
    });
    const env = { ...ms.env, ...HIGH_RATE_LIMITS };
    ({ gw, direct } = await startMirroredAndDirect(env, { MIRROR_POLL_INTERVAL: '3600' }));
    tenant = await gw.seedTenant('Contoso');
    outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], ANN, 'write');
    direct.forgetKeys(tenant.tenantId);
    calendarId = outlook.calendars.Calendar as string;
    // Until the first delta sync has run, reads go to Graph; wait for the mirror to answer.
    await waitForMirror(gw, tenant.secret, { calendarId, ...window });
  }, 60_000);

  afterAll(async () => {
    await direct?.stop();
    await gw?.stop();
    await ms?.close();
  });

  const principal = () => `${tenant.tenantId}:${tenant.keyId}`;

  for (const via of ['mirror', 'graph'] as const) {
    describe(`read ${via === 'mirror' ? 'through the mirror' : 'directly from Graph'}`, () => {
      const gateway = () => (via === 'mirror' ? gw : direct);
      const { client, call, listed } = readsVia<Event>({
        mirrored: via === 'mirror',
        gateway,
        secret: () => tenant.secret,
        list: () => ({ calendarId, ...window }),
        before: async () => gw.runtime.deps.exposures?.clear(principal()),
      });
      const invitation = (events: Event[]) => events.find((e) => e.summary === 'Vendor review') as Event;

      function expectWithheld(event: Event) {
        expect(event.description).toBe(WITHHELD_DESCRIPTION);
        expect(event.location).toBe(WITHHELD_LOCATION);
        expect(event.attendees?.[1]).toMatchObject({ email: 'helper@evil.test', displayName: WITHHELD_NAME });
        expect(event.flagged).toEqual(FLAGS);
        expect(event.organizer?.email).toBe('mallory@evil.test');
        expect(event.organizerOutside).toBe(true);
      }

      it('list_events withholds the flagged text and marks the outside organizer; colleagues and own events read as written', async () => {
        const { result, events } = await listed();
        expect(events.map((e) => e.summary)).toEqual([
          'Planning',
          'Vendor review',
          'Retro',
          WITHHELD_SUMMARY,
        ]);
        expectWithheld(invitation(events));
        expect(events[3]).toMatchObject({
          flagged: [{ field: 'summary', reason: 'addresses an AI assistant' }],
          organizer: { email: 'eve@evil.test' },
          organizerOutside: true,
        });
        expect(textOf(result)).not.toContain('ignore');
        const planning = events.find((e) => e.summary === 'Planning') as Event;
        expect(planning.description).toBe('Roadmap review; bring the Q3 numbers');
        expect(planning).not.toHaveProperty('flagged');
        expect(planning).not.toHaveProperty('organizerOutside');
        const retro = events.find((e) => e.summary === 'Retro') as Event;
        expect(retro.organizer?.email).toBe('bob@contoso.com');
        expect(retro).not.toHaveProperty('organizerOutside');
      });

      it('get_event withholds as well; includeFlagged shows the body as text, verbatim and fenced', async () => {
        const { id } = invitation((await listed()).events);
        const plain = await call('get_event', { calendarId, eventId: id });
        expectWithheld((plain.structuredContent as { event: Event }).event);
        expect(textOf(plain)).not.toContain('ignore');

        const shown = await call('get_event', { calendarId, eventId: id, includeFlagged: true });
        const revealed = (shown.structuredContent as { event: Event }).event;
        const lines = (revealed.description as string).split('\n');
        expect(lines[0]).toMatch(/^<<<UNTRUSTED CALENDAR TEXT [0-9a-f]{10}: description$/);
        expect(lines.slice(2, -1).join('\n')).toBe(`Agenda: Q3 numbers.\n${INJECTION}`);
        expect(lines.at(-1)).toMatch(/^UNTRUSTED CALENDAR TEXT [0-9a-f]{10} ENDS>>>$/);
        expect(revealed.location).toContain(`\n${NAME_INJECTION}\n`);
        expect(revealed.attendees?.[1]?.displayName).toContain(`\n${NAME_INJECTION}\n`);
        expect(revealed.flagged).toEqual(FLAGS);
        expect(revealed.organizerOutside).toBe(true);
      });

      it('search_events, search and fetch withhold the same text', async () => {
        const result = await call('search_events', { query: 'vendor', ...window });
        const events = (result.structuredContent as { events: Event[] }).events;
        expect(events.map((e) => e.summary)).toEqual(['Vendor review']);
        expect(events[0]).toMatchObject({ description: WITHHELD_DESCRIPTION, location: WITHHELD_LOCATION });
        expect(textOf(result)).not.toContain('ignore');

        const hits = await call('search', { query: 'vendor' });
        const [hit] = (hits.structuredContent as { results: { id: string }[] }).results;
        const doc = await call('fetch', { id: hit?.id });
        const text = (doc.structuredContent as { text: string }).text;
        expect(text).toContain('Title: Vendor review');
        expect(text).toContain(`Description: ${WITHHELD_DESCRIPTION}`);
        expect(textOf(doc)).not.toContain('ignore');
      });

      it('records the exposure, and then delete_event waits for the person', async () => {
        await gw.runtime.deps.exposures?.clear(principal());
        const { events } = await listed();
        const { id: flaggedId } = invitation(events);
        const recent = (await gateway().runtime.deps.exposures?.recent(principal())) ?? [];
        expect(
          recent.map(({ kind, tool, calendarId: calendar, eventId, detail }) => ({
            kind,
            tool,
            calendar,
            eventId,
            detail,
          })),
        ).toEqual(
          expect.arrayContaining([
            {
              kind: 'flagged',
              tool: 'list_events',
              calendar: calendarId,
              eventId: flaggedId,
              detail: 'description addresses an AI assistant',
            },
            {
              kind: 'outside_organizer',
              tool: 'list_events',
              calendar: calendarId,
              eventId: flaggedId,
              detail: 'organised by mallory@evil.test',
            },
          ]),
        );

        const planning = events.find((e) => e.summary === 'Planning') as Event;
        const refused = await client().callTool({
          name: 'delete_event',
          arguments: { calendarId, eventId: planning.id },
        });
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toContain(
          `delete_event was not run: "delete event ${planning.id} in calendar 'Calendar' (${calendarId})" needs the person's confirmation`,
        );
        // It names one of what the agent was shown (the latest first), by its Outlook id.
        const named =
          /recently shown calendar content that may carry instructions \(event (\S+) in calendar 'Calendar'/.exec(
            textOf(refused),
          )?.[1];
        expect([flaggedId, events[3]?.id]).toContain(named);
        expect(textOf(refused)).toContain('Confirm in the Calgate dashboard or repeat with confirmation');
        expect(textOf(refused)).not.toContain('ignore');
        // Outlook still has the event.
        const still = ms.admin.events(outlook.externalIds.Calendar as string) as { subject?: string }[];
        expect(still.map((e) => e.subject)).toContain('Planning');
      });
    });
  }
});
