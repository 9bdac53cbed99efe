/**
 * A gateway that reaches Postgres through a relay the test can cut and restore (its connections
 * dropped, new ones refused), for tests of what calls do while the database is away. Keys stay
 * cached through a short cut (KEY_CACHE_TTL_MS), so a call reaches its tool. The owner's Work
 * calendar holds one event, "Standup" on 1 December 2026, written straight to the database.
 */
import { LocalCalendarProvider } from '@calgate/providers';
import { LocalEventStore, openDatabase } from '@calgate/store';
import { cuttableRelay, type Relay, type TestDatabase } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import { connectClient, HIGH_RATE_LIMITS, startTestGateway, type TestGateway } from './harness.ts';

export interface GatewayBehindRelay {
  relay: Relay;
  /** The gateway's own connection to the database, through the relay. */
  gatewayDb: TestDatabase;
  gw: TestGateway;
  owner: { tenantId: string; keyId: string; secret: string };
  /** The owner's Work calendar. */
  work: string;
  /** A client of the owner's key. */
  client: Client;
  /** list_events on Work for 1 December 2026. */
  listEvents(): ReturnType<Client['callTool']>;
}

/** Starts the relay to `db` (reached directly by the test) and the gateway behind it. */
export async function startGatewayBehindRelay(db: TestDatabase): Promise<GatewayBehindRelay> {
  const relay = await cuttableRelay(db.url);
  const gatewayDb = { ...openDatabase({ url: relay.url }), url: relay.url };
  const gw = await startTestGateway({ ...HIGH_RATE_LIMITS, KEY_CACHE_TTL_MS: '5000' }, { db: gatewayDb });
  const owner = await gw.seedTenant('Owner');
  const work = await gw.localCalendar(owner.tenantId, 'Work', 'Europe/Berlin');
  await gw.grant(owner.tenantId, owner.keyId, work, { read: true, write: true });
  await new LocalCalendarProvider(new LocalEventStore(db)).insertEvent(
    { id: work, externalId: work, timeZone: 'Europe/Berlin' },
    {
      summary: 'Standup',
      start: { dateTime: '2026-12-01T09:00:00Z' },
      end: { dateTime: '2026-12-01T09:15:00Z' },
    },
  );
  const client = await connectClient(gw.mcpUrl, owner.secret);
  const listEvents = () =>
    client.callTool({
      name: 'list_events',
      arguments: { calendarId: work, timeMin: '2026-12-01', timeMax: '2026-12-02' },
    });
  return { relay, gatewayDb, gw, owner, work, client, listEvents };
}
