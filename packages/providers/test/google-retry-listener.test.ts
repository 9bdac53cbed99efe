import type { GoogleEmulator } from '@calgate/google-emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type UpstreamRetry, whileListeningForRetries } from '../src/index.ts';
import { ANN, oauthProvider, ref, startEmulator, TEAM } from './google-fixtures.ts';

let emulator: GoogleEmulator;
const team = ref(TEAM, 'America/New_York');
const query = { maxResults: 10, singleEvents: true };

beforeAll(async () => {
  emulator = await startEmulator();
});
afterEach(() => {
  emulator.admin.clearFaults();
  emulator.admin.clearRequests();
});
afterAll(async () => {
  await emulator.close();
});

/** A provider whose token is already fetched, recording the waits it takes between attempts. */
async function warmProvider() {
  const sleeps: number[] = [];
  const { provider } = oauthProvider(emulator, ANN, {
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  await provider.listEvents(ref(ANN), { maxResults: 1, singleEvents: true });
  return { provider, sleeps };
}

const failTeam = (times: number, status = 503) =>
  emulator.admin.script({
    match: { op: 'events.list', calendarId: TEAM },
    times,
    action: { kind: 'error', status },
  });

describe('retry listeners', () => {
  it('hear each retry of a call made inside them, with statuses and waits but no Google texts', async () => {
    const { provider, sleeps } = await warmProvider();
    failTeam(2);
    const heard: UpstreamRetry[] = [];
    const page = await whileListeningForRetries(
      (retry) => heard.push(retry),
      () => provider.listEvents(team, query),
    );
    expect(page.items.map((event) => event.summary)).toContain('Team sync');
    expect(sleeps).toEqual([10, 20]);
    expect(heard).toEqual([
      {
        operation: 'events.list',
        calendarId: TEAM,
        failure: { kind: 'http', status: 503, reason: 'backendError' },
        attempt: 1,
        maxAttempts: 5,
        delayMs: 10,
      },
      {
        operation: 'events.list',
        calendarId: TEAM,
        failure: { kind: 'http', status: 503, reason: 'backendError' },
        attempt: 2,
        maxAttempts: 5,
        delayMs: 20,
      },
    ]);
  });

  it("hear only their own call's retries, not a concurrent call's outside them", async () => {
    const { provider } = await warmProvider();
    failTeam(2);
    const heard: UpstreamRetry[] = [];
    await Promise.all([
      provider.listEvents(team, query),
      whileListeningForRetries(
        (retry) => heard.push(retry),
        () => provider.listEvents(ref(ANN), query),
      ),
    ]);
    expect(heard).toEqual([]);
    const teamCalls = emulator.admin
      .requests()
      .filter((entry) => entry.op === 'events.list' && entry.calendarId === TEAM);
    expect(teamCalls.map((entry) => entry.status)).toEqual([503, 503, 200]);
  });

  it('hear nothing of the routine retry after a token refresh', async () => {
    const { provider } = await warmProvider();
    expect(emulator.admin.expireAccessTokens({ email: ANN })).toBeGreaterThan(0);
    const heard: UpstreamRetry[] = [];
    await whileListeningForRetries(
      (retry) => heard.push(retry),
      () => provider.listEvents(team, query),
    );
    expect(heard).toEqual([]);
    const teamCalls = emulator.admin
      .requests()
      .filter((entry) => entry.op === 'events.list' && entry.calendarId === TEAM);
    expect(teamCalls.map((entry) => entry.status)).toEqual([401, 200]);
  });

  it('cannot fail the call by throwing', async () => {
    const { provider } = await warmProvider();
    failTeam(1);
    const page = await whileListeningForRetries(
      () => {
        throw new Error('listener broke');
      },
      () => provider.listEvents(team, query),
    );
    expect(page.items.map((event) => event.summary)).toContain('Team sync');
  });
});
