import { describe, expect, it } from 'vitest';
import { httpFailure, parseRetryAfter, permanentError } from '../src/google/failure.ts';
import { clampPageSize } from '../src/index.ts';

describe('reading Google failures', () => {
  const now = Date.parse('2026-01-05T10:00:00Z');

  it('reads Retry-After as seconds or as an HTTP date', () => {
    expect(parseRetryAfter('3', now)).toBe(3000);
    expect(parseRetryAfter('Mon, 05 Jan 2026 10:00:07 GMT', now)).toBe(7000);
    expect(parseRetryAfter('Mon, 05 Jan 2026 09:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });

  it("reads both of Google's error bodies", () => {
    const calendar = {
      error: { code: 403, message: 'Forbidden', errors: [{ reason: 'forbiddenForNonOrganizer' }] },
    };
    expect(httpFailure(403, calendar, undefined, now)).toEqual({
      kind: 'http',
      status: 403,
      reason: 'forbiddenForNonOrganizer',
      message: 'Forbidden',
    });
    expect(httpFailure(400, { error: 'invalid_grant', error_description: 'Bad Request' }, '2', now)).toEqual({
      kind: 'http',
      status: 400,
      reason: 'invalid_grant',
      message: 'Bad Request',
      retryAfterMs: 2000,
    });
  });

  it('maps permanent statuses to Calgate codes', () => {
    const where = { operation: 'events.get', calendarId: 'c', eventId: 'e1' };
    const code = (status: number, reason?: string) =>
      permanentError({ kind: 'http', status, message: 'm', ...(reason ? { reason } : {}) }, where).code;
    expect(code(400)).toBe('invalid_argument');
    expect(code(403, 'forbiddenForNonOrganizer')).toBe('permission_denied');
    expect(code(404)).toBe('not_found');
    expect(code(409)).toBe('already_exists');
    expect(code(410, 'fullSyncRequired')).toBe('precondition_failed');
    expect(code(412)).toBe('precondition_failed');
    expect(code(503)).toBe('upstream_unavailable');
    const deleted = permanentError({ kind: 'http', status: 410, reason: 'deleted', message: 'm' }, where);
    expect(deleted).toMatchObject({ code: 'not_found', context: { alreadyDeleted: true, eventId: 'e1' } });
  });

  it("clamps page sizes to Google's range", () => {
    expect(clampPageSize(5000)).toBe(2500);
    expect(clampPageSize(0)).toBe(1);
    expect(clampPageSize(Number.NaN)).toBe(250);
  });
});
