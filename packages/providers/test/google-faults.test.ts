import { CalgateError } from '@calgate/core';
import type { GoogleEmulator } from '@calgate/google-emulator';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleProviderOptions } from '../src/index.ts';
import { ANN, oauthProvider, ref, rejection, startEmulator, TEAM } from './google-fixtures.ts';

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

/** A provider whose token is already fetched, so the request log shows only the calls under test. */
async function warmProvider(options: Omit<GoogleProviderOptions, 'auth'> = {}) {
  const sleeps: number[] = [];
  const { provider } = oauthProvider(emulator, ANN, {
    ...options,
    sleep: async (ms) => {
      sleeps.push(ms);
      await new Promise((resolve) => setTimeout(resolve, ms));
    },
  });
  await provider.listEvents(ref(ANN), { maxResults: 1, singleEvents: true });
  emulator.admin.clearRequests();
  return { provider, sleeps };
}

const listCalls = () =>
  emulator.admin.requests().filter((r) => r.op === 'events.list' && r.calendarId === TEAM);

describe('retries', () => {
  it('waits for Retry-After on a 429 and then succeeds', async () => {
    const { provider, sleeps } = await warmProvider();
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      action: { kind: 'error', status: 429, retryAfterSeconds: 1 },
    });
    const started = Date.now();
    const page = await provider.listEvents(team, query);
    const elapsed = Date.now() - started;
    expect(page.items.map((e) => e.summary)).toContain('Team sync');
    expect(sleeps).toEqual([1000]);
    expect(elapsed).toBeGreaterThanOrEqual(950);
    expect(elapsed).toBeLessThan(3000);
    expect(listCalls().map((r) => r.status)).toEqual([429, 200]);
  });

  it('retries 503 twice with backoff and succeeds on the third attempt', async () => {
    const { provider, sleeps } = await warmProvider({
      retry: { baseDelayMs: 20, maxDelayMs: 100 },
      random: () => 0.5,
    });
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 2,
      action: { kind: 'error', status: 503 },
    });
    const page = await provider.listEvents(team, query);
    expect(page.items.length).toBeGreaterThan(0);
    expect(listCalls().map((r) => r.status)).toEqual([503, 503, 200]);
    // Full jitter: random() × min(max, base × 2^(n-1)).
    expect(sleeps).toEqual([10, 20]);
  });

  it('retries 403 rateLimitExceeded and reports rate_limited once attempts run out', async () => {
    const { provider } = await warmProvider({ retry: { baseDelayMs: 1, maxAttempts: 3 } });
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 5,
      action: { kind: 'error', status: 403, reason: 'rateLimitExceeded' },
    });
    const error = await rejection(provider.listEvents(team, query));
    expect(error).toBeInstanceOf(CalgateError);
    expect(error).toMatchObject({ code: 'rate_limited', retry: true, context: { attempts: 3, status: 403 } });
    expect(listCalls()).toHaveLength(3);
  });

  it('gives up at once when Retry-After is beyond the budget, saying so', async () => {
    const { provider, sleeps } = await warmProvider({ retry: { budgetMs: 2000 } });
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      action: { kind: 'error', status: 429, retryAfterSeconds: 30 },
    });
    const error = await rejection(provider.listEvents(team, query));
    expect(error).toMatchObject({ code: 'rate_limited', retry: true, retryAfterMs: 30_000 });
    expect((error as Error).message).toContain('asked to wait 30 s');
    expect(sleeps).toEqual([]);
    expect(listCalls()).toHaveLength(1);
  });
});

describe('permanent failures and timeouts', () => {
  it('fails at once on a permanent 403 with one request sent', async () => {
    const { provider } = await warmProvider();
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      action: { kind: 'error', status: 403, reason: 'forbidden', message: 'Forbidden' },
    });
    const error = await rejection(provider.listEvents(team, query));
    expect(error).toMatchObject({
      code: 'permission_denied',
      retry: false,
      context: { status: 403, reason: 'forbidden', calendarId: TEAM },
    });
    expect((error as Error).message).toBe('Google refused the operation: Forbidden');
    expect(listCalls()).toHaveLength(1);
  });

  it("maps 400 to invalid_argument with Google's message, without retrying", async () => {
    const { provider } = await warmProvider();
    const error = await rejection(
      provider.listEvents(team, { ...query, singleEvents: false, orderBy: 'startTime' }),
    );
    expect(error).toMatchObject({ code: 'invalid_argument', context: { status: 400 } });
    expect((error as Error).message).toMatch(/^Google rejected the request: /);
    expect(listCalls()).toHaveLength(1);
  });

  it('stops at the budget when Google is too slow, with a clear timeout error', async () => {
    const { provider, sleeps } = await warmProvider({ retry: { budgetMs: 400 } });
    emulator.admin.setLatency({ ms: 5000, match: { op: 'events.list', calendarId: TEAM } });
    const started = Date.now();
    const error = await rejection(provider.listEvents(team, query));
    const elapsed = Date.now() - started;
    expect(error).toMatchObject({ code: 'upstream_unavailable', retry: true, context: { timeout: true } });
    expect((error as Error).message).toBe('Google did not answer within 0.4 s; try again shortly.');
    expect(elapsed).toBeLessThan(1500);
    expect(sleeps).toEqual([]);
  });

  it('retries a timed-out attempt when the budget leaves room', async () => {
    const { provider } = await warmProvider({
      retry: { budgetMs: 3000, baseDelayMs: 1 },
      requestTimeoutMs: 300,
    });
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      action: { kind: 'latency', ms: 2000 },
    });
    const page = await provider.listEvents(team, query);
    expect(page.items.length).toBeGreaterThan(0);
  });

  it('reads a dropped insert back instead of duplicating it', async () => {
    const { provider } = await warmProvider({ retry: { baseDelayMs: 1 } });
    emulator.admin.script({ match: { op: 'events.insert' }, action: { kind: 'dropResponse' } });
    const event = await provider.insertEvent(team, {
      summary: 'Once only',
      start: { dateTime: '2026-05-04T09:00:00Z' },
      end: { dateTime: '2026-05-04T10:00:00Z' },
    });
    expect(event.summary).toBe('Once only');
    const copies = emulator.admin.events(TEAM).filter((e) => e.summary === 'Once only');
    expect(copies).toHaveLength(1);
    const inserts = emulator.admin.requests().filter((r) => r.op === 'events.insert');
    expect(inserts.map((r) => r.status)).toEqual([200, 409]);
  });
});
