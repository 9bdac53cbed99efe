/**
 * The CalDAV sync source against real Radicale and Xandikos: a full sync in batches, changes by
 * sync-collection token, the getctag + ETag fallback (its cursor driven directly), and a token
 * the server no longer honours answered as `expired`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CaldavClient,
  caldavEventId,
  caldavSyncSource,
  type SyncBatch,
  type SyncSource,
} from '../../src/index.ts';
import { startRadicale, startXandikos, type TestCaldavServer } from './servers.ts';

function single(uid: string, summary: string, day: number): string {
  return [
    'BEGIN:VCALENDAR',
    'VERSION:2.0',
    'PRODID:-//Hand//Written//EN',
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    `SUMMARY:${summary}`,
    `DTSTART:202701${String(day).padStart(2, '0')}T090000Z`,
    `DTEND:202701${String(day).padStart(2, '0')}T100000Z`,
    'END:VEVENT',
    'END:VCALENDAR',
    '',
  ].join('\r\n');
}

const summaries = (batch: SyncBatch) => batch.upserts.map((row) => row.summary ?? '').sort();

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('CalDAV sync source on %s', (_name, start) => {
  let server: TestCaldavServer;
  let source: SyncSource;
  let url: string;
  const calendar = () => ({ calendarId: 'cal_x', tenantId: 'ten_x', externalId: url });

  beforeAll(async () => {
    server = await start();
    url = `${server.home}sync/`;
    await server.makeCalendar(new URL(url).pathname, { displayName: 'Sync' });
    for (let day = 1; day <= 5; day++) {
      await server.seed(`${new URL(url).pathname}e${day}.ics`, single(`e${day}@hand`, `Event ${day}`, day));
    }
    const client = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: true },
    });
    source = caldavSyncSource(client, { batchSize: 2, zoneOf: async () => 'Europe/Berlin' });
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it('syncs everything in batches, then only what changed, by sync token', async () => {
    const seen: string[] = [];
    let step = await source.full(calendar(), { pageToken: null });
    let batches = 0;
    let cursor: string | undefined;
    for (;;) {
      expect(step.kind).toBe('batch');
      const batch = step as SyncBatch;
      batches += 1;
      seen.push(...summaries(batch));
      if ('cursor' in batch.next) {
        cursor = batch.next.cursor;
        break;
      }
      step = await source.full(calendar(), { pageToken: batch.next.pageToken });
    }
    expect(batches).toBe(3);
    expect(seen.sort()).toEqual(['Event 1', 'Event 2', 'Event 3', 'Event 4', 'Event 5']);
    expect(cursor).toMatch(/^s:/);

    await server.seed(`${new URL(url).pathname}e2.ics`, single('e2@hand', 'Event 2 renamed', 2));
    await server.raw('DELETE', `${new URL(url).pathname}e3.ics`);
    const changes = (await source.changes(calendar(), {
      cursor: cursor as string,
      pageToken: null,
    })) as SyncBatch;
    expect(summaries(changes)).toEqual(['Event 2 renamed']);
    expect(changes.removals).toEqual([caldavEventId(`${new URL(url).pathname}e3.ics`)]);
  });

  it('answers a token the server no longer honours as expired', async () => {
    const step = await source.changes(calendar(), {
      cursor: `s:${server.root}sync-token/not-a-real-token`,
      pageToken: null,
    });
    expect(step.kind).toBe('expired');
  });

  it('falls back to getctag and ETags: unchanged reads nothing, a change reads that object only', async () => {
    const client = new CaldavClient({
      credentials: { username: server.username, password: server.password },
      policy: { allowPrivate: true },
    });
    const state = await client.collectionState(url);
    const etags = await client.listEtags(url);
    const map = Object.fromEntries(etags.map((entry) => [caldavEventId(entry.href), entry.etag ?? '']));
    const cursor = `e:${JSON.stringify({ ctag: state.ctag ?? null, etags: map })}`;
    if (state.ctag !== undefined) {
      const idle = (await source.changes(calendar(), { cursor, pageToken: null })) as SyncBatch;
      expect(idle.upserts).toEqual([]);
      expect(idle.next).toEqual({ cursor });
    }
    await server.seed(`${new URL(url).pathname}e4.ics`, single('e4@hand', 'Event 4 moved', 14));
    await server.seed(`${new URL(url).pathname}e6.ics`, single('e6@hand', 'Event 6', 6));
    await server.raw('DELETE', `${new URL(url).pathname}e5.ics`);
    const changed = (await source.changes(calendar(), { cursor, pageToken: null })) as SyncBatch;
    expect(summaries(changed)).toEqual(['Event 4 moved', 'Event 6']);
    expect(changed.removals).toEqual([caldavEventId(`${new URL(url).pathname}e5.ics`)]);
    expect('cursor' in changed.next && changed.next.cursor.startsWith('e:')).toBe(true);
  });
});
