/**
 * A delete over MCP racing a mirror sync of a Google calendar (the emulator, over HTTP): the sync
 * reads a page holding the event from Google, the event is deleted through Calgate (Google, then
 * the mirror), and only then is the page stored. The event must stay deleted in what list_events
 * answers from the mirror. The race is played in a fixed order: the page is stored only once the
 * delete has been answered.
 */
import { MirrorRepository } from '@calgate/store';
import type { TestDatabase } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { googleSyncSources } from '../src/google/sync-sources.ts';
import { syncConnectionCalendar } from '../src/mirror/jobs.ts';
import { SyncSources } from '../src/mirror/sources.ts';
import {
  connectGoogleAccount,
  emulatorGoogleProviders,
  startTestEmulator,
  type TestEmulator,
} from './google-fixture.ts';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway, textOf } from './harness.ts';

const CLIENT = { clientId: 'tombstones.apps.googleusercontent.com', clientSecret: 'tombstones-secret' };
const ANN = 'ann@example.com';
const DAY = 86_400_000;
const DAY0 = Math.floor(Date.now() / DAY) * DAY + 7 * DAY;
const at = (hours: number) => new Date(DAY0 + hours * 3_600_000).toISOString().replace('.000Z', 'Z');
const timed = (summary: string, hour: number) => ({
  summary,
  start: { dateTime: at(hour), timeZone: 'UTC' },
  end: { dateTime: at(hour + 1), timeZone: 'UTC' },
});

describe('a delete racing a mirror sync (Google emulator, over MCP)', () => {
  let emulator: TestEmulator;
  let gw: TestGateway;
  let client: Client;
  let calendarId = '';
  let sync: (store: MirrorRepository) => Promise<unknown>;
  const mirrorOf = () => new MirrorRepository(gw.db);

  const call = async (name: string, args: Record<string, unknown>) => {
    const result = await client.callTool({ name, arguments: args });
    expect(result.isError, `${name}: ${textOf(result)}`).toBeFalsy();
    return result.structuredContent as Record<string, unknown>;
  };
  const listed = async () =>
    (
      (await call('list_events', {
        calendarId,
        timeMin: at(-24),
        timeMax: at(48),
        timeZone: 'UTC',
      })) as { events: { id: string; summary: string }[] }
    ).events.map((event) => event.summary);

  beforeAll(async () => {
    emulator = await startTestEmulator(CLIENT, {
      accounts: [{ email: ANN, timeZone: 'UTC', events: [timed('Doomed', 9), timed('Kept', 11)] }],
    });
    // Reads answer from the mirror as it is (an hour's staleness): no read syncs behind the test's back.
    gw = await startTestGateway({ ...emulator.env, ...HIGH_RATE_LIMITS, MIRROR_MAX_STALENESS: '3600' });
    const tenant = await gw.seedTenant('Racer');
    calendarId = await connectGoogleAccount(gw, emulator, tenant, ANN, 'write');
    client = await connectClient(gw.mcpUrl, tenant.secret);
    const { connections, providers } = emulatorGoogleProviders(
      emulator,
      CLIENT,
      gw.db as unknown as TestDatabase,
      pino({ level: 'silent' }),
    );
    const sources = new SyncSources([googleSyncSources(providers.setup, connections, () => {})]);
    const { rows } = await gw.db.pool.query<{ connection_id: string }>(
      'SELECT connection_id FROM calendars WHERE id = $1',
      [calendarId],
    );
    const connection = {
      tenantId: tenant.tenantId,
      connectionId: rows[0]?.connection_id as string,
      auth: 'oauth' as const,
    };
    sync = (store) =>
      syncConnectionCalendar(sources, { provider: 'google', connection, calendarId, externalId: ANN, store });
    await sync(mirrorOf());
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await gw?.stop();
    await emulator?.close();
  });

  it('a page read before the delete and stored after it does not bring the event back', async () => {
    expect(await listed()).toEqual(['Doomed', 'Kept']);
    const doomed = (
      (await call('list_events', { calendarId, timeMin: at(-24), timeMax: at(48) })) as {
        events: { id: string; summary: string }[];
      }
    ).events.find((event) => event.summary === 'Doomed');
    // Someone renames the event in Google: the next incremental sync's page holds it.
    const token = emulator.admin.issueTokens({
      email: ANN,
      scopes: ['https://www.googleapis.com/auth/calendar'],
    }).access_token as string;
    const renamed = await fetch(
      `${emulator.env.GOOGLE_API_ROOT_URL}calendar/v3/calendars/${encodeURIComponent(ANN)}/events/${doomed?.id}`,
      {
        method: 'PATCH',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ summary: 'Doomed (renamed)' }),
      },
    );
    expect(renamed.status).toBe(200);

    // The sync has read its page from Google; before it is stored, the event is deleted over MCP.
    const real = mirrorOf();
    const pages: string[][] = [];
    const applyPage = async (...args: Parameters<MirrorRepository['applyPage']>) => {
      pages.push(args[2].map((event) => event.summary ?? ''));
      if (pages.length === 1) {
        await call('delete_event', { calendarId, eventId: doomed?.id });
        expect(await listed()).toEqual(['Kept']);
      }
      return real.applyPage(...args);
    };
    // The mirror as the sync sees it, except that storing a page waits for the delete.
    const racing = new Proxy(real, {
      get(target, name) {
        if (name === 'applyPage') {
          return applyPage;
        }
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    await sync(racing);
    expect(pages[0]).toContain('Doomed (renamed)');
    expect(await listed()).toEqual(['Kept']);
    // The next sync brings Google's delete: still gone.
    await sync(mirrorOf());
    expect(await listed()).toEqual(['Kept']);
  });
});
