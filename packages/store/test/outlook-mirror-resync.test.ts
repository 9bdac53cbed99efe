/**
 * The outlook_mirror_resync migration: every Outlook calendar's mirror is sent back to a full
 * sync (its rows lack the all-day zones and own answers that free/busy now reads), with a new
 * generation and version; other providers' mirrors stay as they are. Run again over a database
 * already migrated, as the runner ran it on the empty template.
 */
import { readFile } from 'node:fs/promises';
import { createTestDatabase, type TestDatabase } from '@calgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MirrorRepository } from '../src/index.ts';
import { mirrorEvent } from './mirror-events.ts';

const MIGRATION = new URL(
  '../../../prisma/migrations/20261128204517_outlook_mirror_resync/migration.sql',
  import.meta.url,
);

let db: TestDatabase;
let mirror: MirrorRepository;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.prisma.tenant.create({ data: { id: 'tnt_a', name: 'a' } });
  for (const [provider, connectionId, calendarId] of [
    ['microsoft', 'con_ms', 'cal_ms'],
    ['google', 'con_g', 'cal_g'],
  ] as const) {
    await db.prisma.connection.create({
      data: {
        id: connectionId,
        tenantId: 'tnt_a',
        provider,
        accountEmail: `${provider}@example.com`,
        auth: 'oauth',
      },
    });
    await db.prisma.calendar.create({
      data: {
        id: calendarId,
        tenantId: 'tnt_a',
        connectionId,
        externalId: `${calendarId}-upstream`,
        summary: calendarId,
        timeZone: 'UTC',
      },
    });
  }
  mirror = new MirrorRepository(db);
});

afterAll(async () => {
  await db.close();
});

describe('outlook_mirror_resync', () => {
  it("sends Outlook calendars' mirrors to a full sync and leaves Google's", async () => {
    for (const calendarId of ['cal_ms', 'cal_g']) {
      await mirror.resetForFullSync(calendarId, 'tnt_a');
      await mirror.applyPage(calendarId, 'tnt_a', [mirrorEvent('e1')], { nextSyncToken: 'done' });
    }
    const before = {
      ms: await mirror.syncState('cal_ms'),
      g: await mirror.syncState('cal_g'),
      version: (await mirror.freshness(['cal_ms'])).get('cal_ms')?.version,
    };
    expect(before.ms).toMatchObject({ syncToken: 'done', status: 'ok' });
    await db.pool.query(await readFile(MIGRATION, 'utf8'));
    const ms = await mirror.syncState('cal_ms');
    expect(ms).toMatchObject({ syncToken: null, pageToken: null, status: 'syncing' });
    expect(ms?.generation).toBe((before.ms?.generation ?? 0) + 1);
    const freshness = (await mirror.freshness(['cal_ms'])).get('cal_ms');
    expect(freshness?.ready).toBe(false);
    expect(freshness?.version).toBeDefined();
    expect(freshness?.version).not.toBe(before.version);
    expect(await mirror.syncState('cal_g')).toEqual(before.g);
  });
});
