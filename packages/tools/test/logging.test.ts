import { describe, expect, it } from 'vitest';
import { isLogLevel, type LogLevel, logAtOrAbove, logPartialResult } from '../src/logging.ts';
import { retryOnce } from '../src/transient.ts';

function collector() {
  const sent: { level: LogLevel; data: unknown }[] = [];
  return { sent, log: (level: LogLevel, data: unknown) => sent.push({ level, data }) };
}

describe('logAtOrAbove', () => {
  it('sends messages at or above the level, as the calgate logger', async () => {
    const sent: unknown[] = [];
    const log = logAtOrAbove('warning', async (params) => {
      sent.push(params);
    });
    log('notice', 'quiet');
    log('warning', 'kept');
    log('emergency', 'kept too');
    expect(sent).toEqual([
      { level: 'warning', logger: 'calgate', data: 'kept' },
      { level: 'emergency', logger: 'calgate', data: 'kept too' },
    ]);
  });

  it('sends nothing without a level and never throws when sending fails', () => {
    let calls = 0;
    logAtOrAbove(undefined, async () => {
      calls += 1;
    })('emergency', 'x');
    expect(calls).toBe(0);
    expect(() => logAtOrAbove('debug', () => Promise.reject(new Error('gone')))('info', 'x')).not.toThrow();
  });

  it('knows the eight RFC 5424 levels only', () => {
    expect(isLogLevel('notice')).toBe(true);
    expect(isLogLevel('warn')).toBe(false);
    expect(isLogLevel(3)).toBe(false);
  });
});

describe('logPartialResult', () => {
  it('warns per calendar left out, from any failure field, then notes the answer is partial', () => {
    const { sent, log } = collector();
    logPartialResult(
      'get_availability',
      {
        unavailableCalendars: [{ calendarId: 'cal_a', code: 'needs_reauth', message: 'Reconnect.' }],
        errors: [{ calendarId: 'cal_b', code: 'upstream_unavailable', message: 'Google did not answer.' }],
      },
      log,
    );
    expect(sent).toEqual([
      {
        level: 'warning',
        data: {
          tool: 'get_availability',
          calendarId: 'cal_b',
          code: 'upstream_unavailable',
          message: 'Google did not answer.',
        },
      },
      {
        level: 'warning',
        data: { tool: 'get_availability', calendarId: 'cal_a', code: 'needs_reauth', message: 'Reconnect.' },
      },
      {
        level: 'notice',
        data: {
          tool: 'get_availability',
          partial: true,
          calendarIds: ['cal_b', 'cal_a'],
          message: 'get_availability answered without 2 calendars that could not be read.',
        },
      },
    ]);
  });

  it('says nothing about a whole result or fields of other shapes', () => {
    const { sent, log } = collector();
    logPartialResult('list_events', { events: [], errors: [] }, log);
    logPartialResult('create_event', { errors: ['not a calendar failure'] }, log);
    logPartialResult('x', null, log);
    expect(sent).toEqual([]);
  });
});

describe('retryOnce onRetry', () => {
  it('is told before the one retry of a transient failure', async () => {
    let retries = 0;
    let attempts = 0;
    const value = await retryOnce(
      async () => {
        attempts += 1;
        if (attempts === 1) {
          throw Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
        }
        return 'ok';
      },
      { delayMs: 1, onRetry: () => (retries += 1) },
    );
    expect({ value, retries }).toEqual({ value: 'ok', retries: 1 });
  });
});
