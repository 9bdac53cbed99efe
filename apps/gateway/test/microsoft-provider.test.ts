/**
 * MicrosoftCalendarProvider against the Graph emulator over real HTTP, below the tools: calendar
 * discovery across `/me/calendars` pages (absolute next links, short pages), events addressed
 * only through their own calendar, and free/busy of a calendar other than the default one.
 */
import { startMicrosoftEmulator } from '@calgate/microsoft-emulator';
import {
  type CalendarRef,
  type CredentialStore,
  GraphClient,
  MailboxLimiter,
  MICROSOFT_WRITE_SCOPES,
  MicrosoftCalendarProvider,
  MicrosoftTokenSource,
  type OAuthCredentials,
} from '@calgate/providers';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ANN = 'ann@contoso.com';
const DAY = 86_400_000;
const DAY0 = Math.floor(Date.now() / DAY) * DAY + 7 * DAY;
const at = (hours: number) => new Date(DAY0 + hours * 3_600_000).toISOString().replace('.000Z', 'Z');
const wall = (hours: number) => ({ dateTime: at(hours).slice(0, 19), timeZone: 'UTC' });

describe('MicrosoftCalendarProvider over the Graph emulator', () => {
  let emulator: Awaited<ReturnType<typeof startMicrosoftEmulator>>;
  let provider: MicrosoftCalendarProvider;

  beforeAll(async () => {
    emulator = await startMicrosoftEmulator({
      seed: {
        users: [
          {
            email: ANN,
            timeZone: 'UTC',
            calendars: [
              { name: 'Calendar', events: [{ subject: 'Mine', start: wall(9), end: wall(10) }] },
              {
                name: 'Side',
                events: [
                  { subject: 'Busy', start: wall(9), end: wall(10) },
                  { subject: 'Free', start: wall(11), end: wall(12), showAs: 'free' },
                ],
              },
              ...Array.from({ length: 103 }, (_, i) => ({ name: `Extra ${i + 1}` })),
            ],
          },
        ],
      },
    });
    let credentials: OAuthCredentials = {
      refreshToken: emulator.admin.issueTokens({
        email: ANN,
        clientId: emulator.client.clientId,
        scopes: MICROSOFT_WRITE_SCOPES.filter((s) => s !== 'offline_access'),
      }).refresh_token as string,
    };
    const store: CredentialStore = {
      load: async () => credentials,
      save: async (next) => {
        credentials = next;
      },
      markNeedsReauth: async () => {},
    };
    const client = new GraphClient({
      graphUrl: emulator.graphUrl,
      limiter: new MailboxLimiter(),
      tokens: new MicrosoftTokenSource(
        { ...emulator.client, tenant: 'common', loginUrl: emulator.loginUrl },
        store,
        { now: Date.now, requestTimeoutMs: 5_000 },
      ),
    });
    provider = new MicrosoftCalendarProvider({ client, account: ANN });
  });

  afterAll(async () => {
    await emulator?.close();
  });

  const ref = (externalId: string): CalendarRef => ({
    id: `cal_${externalId.slice(-6)}`,
    externalId,
    timeZone: 'UTC',
  });

  it('discovers every calendar across /me/calendars pages', async () => {
    const before = emulator.admin.requests().filter((r) => r.op === 'calendars.list').length;
    const account = await provider.discover();
    expect(account.email).toBe(ANN);
    expect(account.calendars).toHaveLength(105);
    expect(account.calendars.filter((c) => c.primary).map((c) => c.summary)).toEqual(['Calendar']);
    expect(
      emulator.admin.requests().filter((r) => r.op === 'calendars.list').length - before,
    ).toBeGreaterThan(1);
  });

  it('reads an event only through its own calendar', async () => {
    const calendars = await provider.listCalendars();
    const main = calendars.find((c) => c.summary === 'Calendar') as { externalId: string };
    const side = calendars.find((c) => c.summary === 'Side') as { externalId: string };
    const page = await provider.listEvents(ref(main.externalId), {
      timeMin: at(0),
      timeMax: at(24),
      maxResults: 10,
      singleEvents: true,
    });
    const mine = page.items[0];
    expect(mine?.summary).toBe('Mine');
    await expect(provider.getEvent(ref(side.externalId), mine?.id as string)).rejects.toMatchObject({
      code: 'not_found',
    });
    expect((await provider.getEvent(ref(main.externalId), mine?.id as string)).summary).toBe('Mine');
  });

  it('free/busy of a calendar other than the default one, events shown as free left out', async () => {
    const side = (await provider.listCalendars()).find((c) => c.summary === 'Side') as { externalId: string };
    const [result] = await provider.freeBusy([ref(side.externalId)], at(0), at(24));
    expect(result?.busy).toEqual([{ start: at(9), end: at(10) }]);
    expect(emulator.admin.requests().some((r) => r.op === 'getSchedule')).toBe(false);
  });
});
