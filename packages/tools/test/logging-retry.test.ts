import type { UpstreamRetry } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { type LogLevel, logUpstreamRetry } from '../src/logging.ts';

const CALENDARS = [{ id: 'cal_work', externalId: 'work@group.calendar.google.com', summary: 'Work' }];

function told(retry: UpstreamRetry): { level: LogLevel; data: Record<string, unknown> }[] {
  const sent: { level: LogLevel; data: Record<string, unknown> }[] = [];
  logUpstreamRetry('list_events', retry, CALENDARS, (level, data) =>
    sent.push({ level, data: data as Record<string, unknown> }),
  );
  return sent;
}

const base = { operation: 'events.list', attempt: 1, maxAttempts: 4 };

describe('logUpstreamRetry', () => {
  it("names the key's calendar by its name and Calgate id, never Google's id", () => {
    const sent = told({
      ...base,
      calendarId: 'work@group.calendar.google.com',
      failure: { kind: 'http', status: 503, reason: 'backendError' },
      delayMs: 1234,
    });
    expect(sent).toEqual([
      {
        level: 'warning',
        data: {
          tool: 'list_events',
          operation: 'events.list',
          calendarId: 'cal_work',
          status: 503,
          reason: 'backendError',
          attempt: 2,
          maxAttempts: 4,
          retryInMs: 1234,
          message:
            "Google answered events.list with HTTP 503 backendError for calendar 'Work'; retrying in 1.2 s (attempt 2 of 4).",
        },
      },
    ]);
  });

  it("leaves out a calendar that is not one of the key's, and words rate limits, timeouts and lost connections", () => {
    const messages = [
      told({
        ...base,
        calendarId: 'someone-else@example.com',
        failure: { kind: 'http', status: 403, reason: 'userRateLimitExceeded' },
        delayMs: 15_000,
      }),
      told({ ...base, operation: 'freebusy.query', failure: { kind: 'timeout', afterMs: 8000 }, delayMs: 0 }),
      told({
        ...base,
        operation: 'oauth.token',
        attempt: 3,
        failure: { kind: 'network', code: 'ECONNRESET' },
        delayMs: 350,
      }),
    ].map((sent) => sent[0]?.data);
    expect(messages.map((data) => data?.message)).toEqual([
      'Google is rate-limiting events.list (HTTP 403 userRateLimitExceeded); retrying in 15 s (attempt 2 of 4).',
      'Google did not answer freebusy.query within 8 s; retrying at once (attempt 2 of 4).',
      'Google could not be reached for oauth.token (ECONNRESET); retrying in 350 ms (attempt 4 of 4).',
    ]);
    expect(messages[0]).not.toHaveProperty('calendarId');
    expect(messages[1]).toMatchObject({ timeoutMs: 8000, retryInMs: 0 });
    expect(messages[2]).toMatchObject({ code: 'ECONNRESET' });
  });
});
