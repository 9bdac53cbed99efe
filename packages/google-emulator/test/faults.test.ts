import type { calendar_v3 } from '@googleapis/calendar';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { GoogleEmulator } from '../src/index.ts';
import { ANN, BOB, calendarFor, failure, reasonOf, startSeeded, TEAM } from './helpers.ts';

let emulator: GoogleEmulator;
let calendar: calendar_v3.Calendar;

beforeAll(async () => {
  emulator = await startSeeded();
  calendar = calendarFor(emulator, ANN);
});
afterEach(() => {
  emulator.admin.clearFaults();
  emulator.admin.clearRequests();
});
afterAll(async () => {
  await emulator.close();
});

const event = {
  summary: 'Fragile',
  start: { dateTime: '2026-01-05T09:00:00Z' },
  end: { dateTime: '2026-01-05T10:00:00Z' },
};

describe('scripted failures', () => {
  it('answers 503 to the next two events.list calls on one calendar, then recovers', async () => {
    emulator.admin.script({
      match: { op: 'events.list', calendarId: TEAM },
      times: 2,
      action: { kind: 'error', status: 503 },
    });
    const other = await calendar.events.list({ calendarId: 'primary' });
    expect(other.status).toBe(200);
    const first = await failure(calendar.events.list({ calendarId: TEAM }));
    expect(first.status).toBe(503);
    expect(first.data).toEqual({
      error: {
        errors: [{ domain: 'global', reason: 'backendError', message: 'Backend Error' }],
        code: 503,
        message: 'Backend Error',
      },
    });
    // googleapis' own retry gets through the remaining failure.
    const retrying = calendarFor(emulator, ANN, true);
    const ok = await retrying.events.list(
      { calendarId: TEAM },
      { retryConfig: { retryDelay: 5, maxRetryDelay: 10 } },
    );
    expect(ok.status).toBe(200);
    const calls = emulator.admin.requests().filter((r) => r.op === 'events.list' && r.calendarId === TEAM);
    expect(calls.map((r) => r.status)).toEqual([503, 503, 200]);
  });

  it('sends 429 with Retry-After and 403 rateLimitExceeded', async () => {
    emulator.admin.script({
      match: { op: 'events.*' },
      action: { kind: 'error', status: 429, retryAfterSeconds: 7 },
    });
    const limited = await failure(calendar.events.list({ calendarId: 'primary' }));
    expect(limited.status).toBe(429);
    expect(reasonOf(limited.data)).toBe('rateLimitExceeded');
    const raw = emulator.admin.requests().at(-1);
    expect(raw?.fault).toBe('error');

    emulator.admin.script({
      match: { op: 'events.get' },
      action: { kind: 'error', status: 403, reason: 'rateLimitExceeded' },
    });
    const forbidden = await failure(calendar.events.get({ calendarId: 'primary', eventId: 'whatever1' }));
    expect(forbidden.status).toBe(403);
    expect(forbidden.data).toMatchObject({
      error: { errors: [{ domain: 'usageLimits', reason: 'rateLimitExceeded' }] },
    });

    emulator.admin.script({
      match: { op: 'events.list' },
      action: { kind: 'error', status: 429, retryAfterSeconds: 7 },
    });
    const res = await fetch(`${emulator.url}/calendar/v3/calendars/primary/events`);
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('7');
  });

  it('applies an insert upstream but drops its response', async () => {
    emulator.admin.script({ match: { op: 'events.insert' }, action: { kind: 'dropResponse' } });
    const error = await calendar.events.insert({ calendarId: 'primary', requestBody: event }).then(
      () => null,
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(Error);
    expect((error as { response?: unknown }).response).toBeUndefined();
    expect(emulator.admin.events(ANN).map((e) => e.summary)).toContain('Fragile');
    expect(emulator.admin.requests().at(-1)).toMatchObject({
      op: 'events.insert',
      status: 200,
      fault: 'dropResponse',
    });
  });

  it('drops a request before it changes anything', async () => {
    const before = emulator.admin.events(BOB).length;
    emulator.admin.script({ match: { op: 'events.insert', account: ANN }, action: { kind: 'dropRequest' } });
    const bob = calendarFor(emulator, BOB);
    await expect(calendar.events.insert({ calendarId: 'primary', requestBody: event })).rejects.toThrow();
    await bob.events.insert({ calendarId: 'primary', requestBody: event });
    expect(emulator.admin.events(BOB).length).toBe(before + 1);
  });
});

describe('latency and error rates', () => {
  it('delays matching calls', async () => {
    emulator.admin.setLatency({ ms: 120, match: { op: 'calendarList.list' } });
    const started = performance.now();
    await calendar.calendarList.list();
    expect(performance.now() - started).toBeGreaterThanOrEqual(115);
    const quick = performance.now();
    await calendar.colors.get();
    expect(performance.now() - quick).toBeLessThan(100);
  });

  it('fails a share of calls and is driven over HTTP as well', async () => {
    const admin = `${emulator.url}/__admin`;
    const post = (path: string, body: unknown) =>
      fetch(`${admin}${path}`, {
        method: 'POST',
        body: JSON.stringify(body),
        headers: { 'content-type': 'application/json' },
      });
    expect(
      (await post('/faults/error-rate', { rate: 1, status: 500, match: { op: 'colors.get' } })).status,
    ).toBe(204);
    const failed = await failure(calendar.colors.get());
    expect(failed.status).toBe(500);
    expect((await fetch(`${admin}/faults`, { method: 'DELETE' })).status).toBe(204);
    expect((await calendar.colors.get()).status).toBe(200);
    const log = (await (await fetch(`${admin}/requests`)).json()) as {
      items: { op: string; status: number }[];
    };
    expect(log.items.filter((r) => r.op === 'colors.get').map((r) => r.status)).toEqual([500, 200]);
  });
});

describe('error shapes', () => {
  it('answers 401 without or with a bad token, 403 for missing scope or access, 404 for unknown ids', async () => {
    const anonymous = await fetch(`${emulator.url}/calendar/v3/calendars/primary/events`);
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toMatchObject({
      error: { code: 401, errors: [{ reason: 'required', location: 'Authorization' }] },
    });
    const bad = await fetch(`${emulator.url}/calendar/v3/calendars/primary/events`, {
      headers: { authorization: 'Bearer ya29.nope' },
    });
    expect(bad.status).toBe(401);
    expect(await bad.json()).toMatchObject({
      error: { errors: [{ reason: 'authError', message: 'Invalid Credentials' }] },
    });

    const { access_token } = emulator.admin.issueTokens({
      email: ANN,
      scopes: ['https://www.googleapis.com/auth/calendar.readonly'],
    });
    const readOnly = await fetch(`${emulator.url}/calendar/v3/calendars/primary/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${access_token}`, 'content-type': 'application/json' },
      body: JSON.stringify(event),
    });
    expect(readOnly.status).toBe(403);
    expect(await readOnly.json()).toMatchObject({
      error: { errors: [{ reason: 'insufficientPermissions' }] },
    });

    const reader = await failure(calendar.events.insert({ calendarId: TEAM, requestBody: event }));
    expect(reader.status).toBe(403);
    expect(reader.data).toMatchObject({
      error: { errors: [{ domain: 'calendar', reason: 'requiredAccessLevel' }] },
    });
    const missing = await failure(calendar.events.list({ calendarId: 'nobody@example.com' }));
    expect(missing.status).toBe(404);
    expect(reasonOf(missing.data)).toBe('notFound');

    emulator.admin.expireAccessTokens({ email: ANN });
    const expired = await failure(calendar.calendarList.list());
    expect(expired.status).toBe(401);
  });
});
