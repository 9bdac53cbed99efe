/**
 * The CalDAV sync source choosing the getctag + ETag fallback on its own: Radicale and Xandikos
 * behind a front that answers REPORT sync-collection as servers without RFC 6578 do (403 with
 * DAV:supported-report, or 501). A full sync and then a change made directly on the server,
 * found by comparing ETags.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CaldavClient,
  caldavEventId,
  caldavSyncSource,
  type SyncBatch,
  type SyncSource,
} from '../../src/index.ts';
import {
  ics,
  startRadicale,
  startSyncRefusingProxy,
  startXandikos,
  type TestCaldavServer,
} from './servers.ts';

const single = (uid: string, summary: string, day: number) =>
  ics(
    'BEGIN:VEVENT',
    `UID:${uid}`,
    'DTSTAMP:20260101T000000Z',
    `SUMMARY:${summary}`,
    `DTSTART:202702${String(day).padStart(2, '0')}T090000Z`,
    `DTEND:202702${String(day).padStart(2, '0')}T100000Z`,
    'END:VEVENT',
  );

const summaries = (batch: SyncBatch) => batch.upserts.map((row) => row.summary ?? '').sort();

async function fullSync(source: SyncSource, calendar: Parameters<SyncSource['full']>[0]) {
  const seen: string[] = [];
  let step = await source.full(calendar, { pageToken: null });
  for (;;) {
    expect(step.kind).toBe('batch');
    const batch = step as SyncBatch;
    seen.push(...summaries(batch));
    if ('cursor' in batch.next) {
      return { seen: seen.sort(), cursor: batch.next.cursor };
    }
    step = await source.full(calendar, { pageToken: batch.next.pageToken });
  }
}

describe.each([
  ['Radicale', startRadicale],
  ['Xandikos', startXandikos],
] as const)('CalDAV sync without sync-collection on %s', (_name, start) => {
  let server: TestCaldavServer;

  beforeAll(async () => {
    server = await start();
  }, 60_000);
  afterAll(async () => {
    await server?.stop();
  });

  it.each([403, 501] as const)(
    'falls back to getctag and ETags when sync-collection is answered %i, and sees a change made on the server',
    async (status) => {
      const proxy = await startSyncRefusingProxy(server.root, status);
      try {
        const path = `${new URL(server.home).pathname}nosync-${status}/`;
        const url = new URL(path, proxy.root).toString();
        await server.makeCalendar(path, { displayName: `No sync ${status}` });
        for (let day = 1; day <= 3; day++) {
          await server.seed(`${path}e${day}.ics`, single(`e${day}-${status}@hand`, `Event ${day}`, day));
        }
        const client = new CaldavClient({
          credentials: { username: server.username, password: server.password },
          policy: { allowPrivate: true },
        });
        const source = caldavSyncSource(client, { batchSize: 2, zoneOf: async () => 'UTC' });
        const calendar = { calendarId: 'cal_x', tenantId: 'ten_x', externalId: url };

        const first = await fullSync(source, calendar);
        expect(proxy.refused).toBe(1);
        expect(first.seen).toEqual(['Event 1', 'Event 2', 'Event 3']);
        expect(first.cursor.startsWith('e:')).toBe(true);

        // Nothing changed: nothing read, the cursor stays.
        const idle = (await source.changes(calendar, { cursor: first.cursor, pageToken: null })) as SyncBatch;
        expect(idle.kind).toBe('batch');
        expect(idle.upserts).toEqual([]);
        expect(idle.removals).toEqual([]);

        // Another client changes one event, adds one and deletes one directly on the server.
        await server.seed(`${path}e2.ics`, single(`e2-${status}@hand`, 'Event 2 moved', 12));
        await server.seed(`${path}e4.ics`, single(`e4-${status}@hand`, 'Event 4', 4));
        await server.raw('DELETE', `${path}e3.ics`);
        const changed = (await source.changes(calendar, {
          cursor: first.cursor,
          pageToken: null,
        })) as SyncBatch;
        expect(changed.kind).toBe('batch');
        expect(summaries(changed)).toEqual(['Event 2 moved', 'Event 4']);
        expect(changed.removals).toEqual([caldavEventId(`${path}e3.ics`)]);
        expect('cursor' in changed.next && changed.next.cursor.startsWith('e:')).toBe(true);
        // The source never got past the front's refusal to a sync token.
        expect(proxy.refused).toBe(1);
      } finally {
        await proxy.stop();
      }
    },
  );

  it.each([403, '403 bare'] as const)(
    'starts over on the fallback when a server that gave a sync token stops offering sync-collection (%s)',
    async (status) => {
      const proxy = await startSyncRefusingProxy(server.root, status);
      try {
        proxy.refusing = false;
        const path = `${new URL(server.home).pathname}downgraded-${String(status).replace(' ', '-')}/`;
        const url = new URL(path, proxy.root).toString();
        await server.makeCalendar(path, { displayName: 'Downgraded' });
        await server.seed(`${path}a.ics`, single(`a-down-${status}@hand`, 'Before', 1));
        const client = new CaldavClient({
          credentials: { username: server.username, password: server.password },
          policy: { allowPrivate: true },
        });
        const source = caldavSyncSource(client, { zoneOf: async () => 'UTC' });
        const calendar = {
          calendarId: `cal_${String(status).replace(' ', '_')}`,
          tenantId: 'ten_x',
          externalId: url,
        };
        const first = await fullSync(source, calendar);
        expect(first.cursor.startsWith('s:')).toBe(true);

        proxy.refusing = true;
        await server.seed(`${path}b.ics`, single(`b-down-${status}@hand`, 'After', 2));
        const step = await source.changes(calendar, { cursor: first.cursor, pageToken: null });
        // The engine starts a full sync over on `expired`; that one takes the fallback.
        expect(step.kind).toBe('expired');
        const again = await fullSync(source, calendar);
        expect(again.seen).toEqual(['After', 'Before']);
        expect(again.cursor.startsWith('e:')).toBe(true);
      } finally {
        await proxy.stop();
      }
    },
  );
});
