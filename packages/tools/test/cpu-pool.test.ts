import { threadId } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { formatText, jsonOf, rememberAnswer } from '../src/format.ts';
import { CpuPool } from '../src/index.ts';
import { expandInstances, expansionResult, expansionToon } from '../src/tools/availability/expansion.ts';

describe('CpuPool: CPU-bound work in worker threads', () => {
  const request = {
    rrule: 'FREQ=WEEKLY;BYDAY=MO',
    dtstart: '2026-03-23T09:00:00',
    timeZone: 'Europe/Berlin',
    durationMinutes: 30,
    count: 3,
    exdates: [],
  };

  it('makes the whole expand_rrule answer once: the result, its JSON and its text', async () => {
    const pool = new CpuPool(1);
    try {
      const large = { ...request, rrule: 'FREQ=DAILY', count: 5_000, pageSize: 5_000 };
      for (const format of ['json', 'toon'] as const) {
        const answer = await pool.run('expandRruleAnswer', { request: large, format });
        const expected = expansionResult(large);
        expect(expected.instances).toHaveLength(5_000);
        expect(answer.result).toEqual(expected);
        expect(answer.json).toBe(JSON.stringify(expected));
        expect(answer.text).toBe(formatText(expected, format));
        // Remembered, the answer's JSON and text are not made again on this thread.
        rememberAnswer(answer.result, answer.json, format, answer.text);
        expect(jsonOf(answer.result)).toBe(answer.json);
        expect(formatText(answer.result, format)).toBe(answer.text);
      }
    } finally {
      await pool.close();
    }
  });

  it('writes the TOON of an expansion exactly as the general encoder does', () => {
    const cases = [
      { ...request, count: 3 },
      { ...request, rrule: 'FREQ=DAILY', count: 2_000, timeZone: 'UTC' },
      // A first page of several: the next page's token follows the table.
      { ...request, rrule: 'FREQ=DAILY', count: 2_000, pageSize: 50 },
      // Off the rule: warnings follow the table.
      { ...request, rrule: 'FREQ=WEEKLY;BYDAY=TU', count: 4 },
      { ...request, rrule: 'FREQ=DAILY;COUNT=2', count: 5 },
      {
        ...request,
        rrule: 'FREQ=DAILY;COUNT=3',
        exdates: ['2026-03-23T09:00:00', '2026-03-24T09:00:00', '2026-03-25T09:00:00'],
      },
    ];
    for (const input of cases) {
      const result = expansionResult(input);
      expect(expansionToon(result)).toBe(formatText(result, 'toon'));
    }
  });

  it('answers exactly what the in-process expansion answers, across the DST change', async () => {
    const pool = new CpuPool(2);
    try {
      const [a, b] = await Promise.all([pool.run('expandRrule', request), pool.run('expandRrule', request)]);
      expect(a).toEqual(expandInstances(request));
      expect(b).toEqual(a);
      expect(a.instances[1]).toEqual({
        start: '2026-03-30T09:00:00+02:00',
        end: '2026-03-30T09:30:00+02:00',
      });
      expect(threadId).toBe(0);
    } finally {
      await pool.close();
    }
  });

  it('carries a CalgateError back with its code and message; the worker stays usable', async () => {
    const pool = new CpuPool(1);
    try {
      await expect(pool.run('expandRrule', { ...request, rrule: 'FREQ=SOMETIMES' })).rejects.toMatchObject({
        name: 'CalgateError',
        code: 'invalid_argument',
      });
      await expect(pool.run('expandRrule', { ...request, dtstart: '2026-03-23 09:00' })).rejects.toThrow(
        "dtstart '2026-03-23 09:00' must be a local date-time YYYY-MM-DDTHH:MM:SS",
      );
      expect((await pool.run('expandRrule', request)).instances).toHaveLength(3);
    } finally {
      await pool.close();
    }
  });

  it('refuses work after close, and queued work is refused, not lost silently', async () => {
    const pool = new CpuPool(1);
    const queued = Array.from({ length: 5 }, () =>
      pool.run('expandRrule', { ...request, count: 5_000, pageSize: 5_000 }),
    );
    const outcomes = Promise.allSettled(queued);
    await pool.close();
    const settled = await outcomes;
    expect(settled.filter((outcome) => outcome.status === 'rejected').length).toBeGreaterThanOrEqual(4);
    for (const outcome of settled) {
      if (outcome.status === 'rejected') {
        expect(outcome.reason).toMatchObject({ code: expect.stringMatching(/^(unavailable|internal)$/) });
      }
    }
    await expect(pool.run('expandRrule', request)).rejects.toMatchObject({ code: 'unavailable' });
  });
});
