/**
 * Rows read at a calendar's mirror version are kept for that version (MirrorBatches): the same
 * read again at that version asks nothing of the repository; another version, another window, a
 * read without a version, and a merged read of several calendars do.
 */
import type { MirrorRangeQuery, MirrorResourceRow } from '@calgate/store';
import { describe, expect, it } from 'vitest';
import { MirrorBatches, type MirrorReads } from '../src/mirror/batch.ts';

const row = (eventId: string): MirrorResourceRow => ({
  eventId,
  recurringEventId: null,
  originalStart: null,
  status: 'confirmed',
  etag: `"${eventId}"`,
  raw: { id: eventId, summary: 'Planning', start: { dateTime: '2026-12-01T09:00:00Z' } },
});

/** A repository that answers every calendar with one row and counts what it was asked. */
function counting() {
  const asked: string[] = [];
  const mirror: MirrorReads = {
    freshness: async () => new Map(),
    readResources: async (ids: readonly string[]) => {
      asked.push(`rows ${ids.join(',')}`);
      return new Map(ids.map((id) => [id, [row(`${id}-event`)]]));
    },
    readFirst: async (ids: readonly string[]) => {
      asked.push(`first ${ids.join(',')}`);
      return new Map(ids.map((id) => [id, { rows: [row(`${id}-event`)], throughMs: 1_000 }]));
    },
  };
  return { mirror, asked };
}

const december: MirrorRangeQuery = {
  timeMin: new Date('2026-12-01T00:00:00Z'),
  timeMax: new Date('2026-12-31T00:00:00Z'),
};

describe('mirror rows kept per calendar version', () => {
  it('answers the same read at the same version without the repository, and nothing else', async () => {
    const { mirror, asked } = counting();
    const batches = new MirrorBatches(mirror);
    const first = { ...december, first: 10 };
    const read = await batches.firstRows('cal_a', first, '7');
    expect(await batches.firstRows('cal_a', first, '7')).toEqual(read);
    expect(asked).toEqual(['first cal_a']);

    await batches.firstRows('cal_a', first, '8'); // the calendar changed
    await batches.firstRows('cal_a', { ...first, first: 40 }, '8'); // another read
    await batches.firstRows('cal_a', first); // version not known: always read
    await batches.firstRows('cal_a', first);
    expect(asked).toHaveLength(5);

    await batches.rows('cal_a', december, '8');
    await batches.rows('cal_a', december, '8');
    await batches.rows('cal_a', { ...december, query: 'planning' }, '8');
    expect(asked.slice(5)).toEqual(['rows cal_a', 'rows cal_a']);
  });

  it('keeps no merged read: its throughMs depends on the calendars read with it', async () => {
    const { mirror, asked } = counting();
    const batches = new MirrorBatches(mirror);
    const first = { ...december, first: 10 };
    const both = () =>
      Promise.all([batches.firstRows('cal_a', first, '1'), batches.firstRows('cal_b', first, '1')]);
    const [a] = await both();
    expect(a.shared).toBe(true);
    await both();
    expect(asked).toEqual(['first cal_a,cal_b', 'first cal_a,cal_b']);
  });

  it('gives kept rows read-only: a reader cannot change what the next one gets', async () => {
    const { mirror } = counting();
    const batches = new MirrorBatches(mirror);
    await batches.rows('cal_a', december, '3');
    const kept = await batches.rows('cal_a', december, '3');
    const event = kept[0]?.raw as { summary: string; start: { dateTime: string } };
    expect(() => {
      event.summary = 'Changed';
    }).toThrow(TypeError);
    expect(() => {
      event.start.dateTime = '2027-01-01T00:00:00Z';
    }).toThrow(TypeError);
    expect((await batches.rows('cal_a', december, '3'))[0]?.raw).toMatchObject({ summary: 'Planning' });
  });
});
