import {
  DEFAULT_TOOLSETS,
  displayPrefix,
  generateApiKeySecret,
  hashApiKey,
  loadMigrations,
  migrate,
  TOOLSETS,
} from '@calgate/store';
import { createTestDatabase } from '@calgate/testkit';
import { catalogue } from '@calgate/tools';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Browser, call, sessionFor } from './api-client.ts';
import { connectClient, startTestGateway, type TestGateway, textOf } from './harness.ts';

/** The catalogue's tools of these toolsets, in catalogue order. */
function toolsOf(toolsets: readonly string[]): string[] {
  return catalogue()
    .entries.filter((entry) => toolsets.includes(entry.definition.toolset))
    .map((entry) => entry.definition.name);
}

async function names(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((tool) => tool.name);
}

async function waitFor(check: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) {
      throw new Error(`not within ${timeoutMs} ms`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('toolsets: a key sees the tools of its toolsets, over MCP and in /api/docs', () => {
  let gw: TestGateway;
  let tenantId: string;
  let calendar: string;
  let owner: Browser;
  const clients: Client[] = [];

  beforeAll(async () => {
    gw = await startTestGateway({
      MCP_STREAM_KEEPALIVE_MS: '200',
      MCP_STREAM_RECHECK_MS: '300',
      KEY_CACHE_TTL_MS: '500',
    });
    const tenant = await gw.seedTenant('Toolsets');
    tenantId = tenant.tenantId;
    calendar = await gw.localCalendar(tenantId, 'Work');
    owner = await sessionFor(gw, tenantId);
  });
  afterAll(async () => {
    for (const client of clients) {
      await client.close().catch(() => {});
    }
    await gw?.stop();
  });

  /** A key made through the dashboard API with read and write on the calendar, and its MCP client. */
  async function keyWith(body: { name: string; toolsets?: string[] }) {
    const created = await call(gw, 'POST', '/api/v1/keys', { as: owner, body });
    expect(created.status).toBe(201);
    const keyId = created.body.key.id as string;
    await gw.grant(tenantId, keyId, calendar, { read: true, write: true });
    const client = await connectClient(gw.mcpUrl, created.body.secret);
    clients.push(client);
    const seen = { listChanged: 0 };
    client.setNotificationHandler('notifications/tools/list_changed', () => {
      seen.listChanged++;
    });
    return { keyId, client, seen, toolsets: created.body.key.toolsets as string[] };
  }

  it('every tool belongs to a toolset a key can have; a new key has calendar, booking and search', async () => {
    for (const { definition } of catalogue().entries) {
      expect(TOOLSETS, definition.name).toContain(definition.toolset);
    }
    expect(DEFAULT_TOOLSETS).toEqual(['calendar', 'booking', 'search']);
    const { client, toolsets } = await keyWith({ name: 'default' });
    expect(toolsets).toEqual(['calendar', 'booking', 'search']);
    const listed = await names(client);
    expect(listed).toEqual(toolsOf(DEFAULT_TOOLSETS));
    expect(listed).toEqual(
      expect.arrayContaining(['list_events', 'create_event', 'book_slot', 'search', 'fetch']),
    );
  });

  it('a calendar-only key sees no booking or search tools; calling one says which toolset to switch on and how', async () => {
    const { keyId, client } = await keyWith({ name: 'calendar only', toolsets: ['calendar'] });
    const listed = await names(client);
    expect(listed).toEqual(toolsOf(['calendar']));
    expect(listed).toContain('create_event');
    for (const hidden of [...toolsOf(['booking']), 'search', 'fetch']) {
      expect(listed).not.toContain(hidden);
    }
    const result = await client.callTool({
      name: 'book_slot',
      arguments: {
        calendarId: calendar,
        start: '2027-03-01T10:00:00Z',
        end: '2027-03-01T10:30:00Z',
        summary: 'x',
      },
    });
    expect(result.isError).toBe(true);
    expect(textOf(result)).toBe(
      `book_slot is in the 'booking' toolset, which this API key has not switched on (its toolsets: calendar). Ask the owner to tick 'booking' for this key on the dashboard's API keys page, or run \`calgate key set --key ${keyId} --toolsets calendar,booking\`.`,
    );
    const { rows } = await gw.db.pool.query('SELECT count(*)::int AS n FROM bookings');
    expect(rows[0].n).toBe(0);
  });

  it('PATCH toolsets changes tools/list at once, and the GET stream announces the change', async () => {
    const { keyId, client, seen } = await keyWith({ name: 'changing', toolsets: ['calendar'] });
    expect(await names(client)).not.toContain('book_slot');
    // Let the client's GET stream open before the change.
    await new Promise((resolve) => setTimeout(resolve, 400));
    const patched = await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
      as: owner,
      body: { toolsets: ['booking', 'calendar'] },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.key.toolsets).toEqual(['calendar', 'booking']);
    expect(await names(client)).toEqual(toolsOf(['calendar', 'booking']));
    await waitFor(() => seen.listChanged === 1, 3000);

    const narrowed = await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
      as: owner,
      body: { toolsets: ['search'] },
    });
    expect(narrowed.status).toBe(200);
    expect(await names(client)).toEqual(['search', 'fetch']);
    await waitFor(() => seen.listChanged === 2, 3000);

    // A refused change changes nothing and announces nothing.
    const refused = await call(gw, 'PATCH', `/api/v1/keys/${keyId}`, {
      as: owner,
      body: { toolsets: ['nope'] },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(
      "Unknown toolset 'nope': the toolsets are calendar, booking, search, rules, scheduler, ics.",
    );
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(seen.listChanged).toBe(2);
    expect(await names(client)).toEqual(['search', 'fetch']);
  });

  it('/api/docs?toolsets=booking lists only booking tools, each naming its toolset; unknown names are a 400', async () => {
    const all = (await (await fetch(`${gw.url}/api/docs`)).json()) as {
      toolsets: { available: string[]; default: string[]; shown: string[] };
      tools: { name: string; toolset: string }[];
    };
    expect(all.tools.map((tool) => tool.name)).toEqual(catalogue().entries.map((e) => e.definition.name));
    expect(all.toolsets).toEqual({
      available: ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'],
      default: ['calendar', 'booking', 'search'],
      shown: ['calendar', 'booking', 'search', 'rules', 'scheduler', 'ics'],
    });
    for (const tool of all.tools) {
      expect(tool.toolset, tool.name).toBe(catalogue().get(tool.name)?.definition.toolset);
    }

    const booking = await fetch(`${gw.url}/api/docs?toolsets=booking`);
    expect(booking.status).toBe(200);
    const docs = (await booking.json()) as typeof all;
    expect(docs.tools.map((tool) => tool.name)).toEqual(toolsOf(['booking']));
    expect(docs.tools.map((tool) => tool.toolset)).toEqual(toolsOf(['booking']).map(() => 'booking'));
    expect(docs.toolsets.shown).toEqual(['booking']);

    const two = (await (await fetch(`${gw.url}/api/docs?toolsets=search,%20calendar`)).json()) as typeof all;
    expect(two.tools.map((tool) => tool.name)).toEqual(toolsOf(['calendar', 'search']));

    for (const [query, message] of [
      [
        'booking,agenda',
        "Unknown toolset 'agenda': the toolsets are calendar, booking, search, rules, scheduler, ics.",
      ],
      ['', 'Give at least one toolset: the toolsets are calendar, booking, search, rules, scheduler, ics.'],
    ]) {
      const refused = await fetch(`${gw.url}/api/docs?toolsets=${query}`);
      expect(refused.status, query).toBe(400);
      const body = (await refused.json()) as { error: { code: string; message: string } };
      expect(body.error).toMatchObject({ code: 'invalid_argument', message });
    }
  });
});

describe('toolsets: keys made before toolsets existed', () => {
  it('get the default set from the migration and keep seeing every tool they saw', async () => {
    const db = await createTestDatabase({ migrated: false });
    const before = (await loadMigrations()).filter(
      (migration) => migration.name < '20261123030000_key_toolsets',
    );
    await migrate(db.pool, before);
    const secret = generateApiKeySecret();
    await db.pool.query(`INSERT INTO tenants (id, name) VALUES ('tnt_old', 'Old')`);
    await db.pool.query(
      `INSERT INTO api_keys (id, tenant_id, name, prefix, hash) VALUES ('key_old', 'tnt_old', 'old', $1, $2)`,
      [displayPrefix(secret), hashApiKey(secret)],
    );
    const gw = await startTestGateway({}, { db });
    try {
      const { rows } = await db.pool.query(`SELECT toolsets FROM api_keys WHERE id = 'key_old'`);
      expect(rows[0].toolsets).toEqual(['calendar', 'booking', 'search']);
      const calendar = await gw.localCalendar('tnt_old', 'Old calendar');
      await gw.grant('tnt_old', 'key_old', calendar, { read: true, write: true });
      const client = await connectClient(gw.mcpUrl, secret);
      expect(await names(client)).toEqual(toolsOf(['calendar', 'booking', 'search']));
      await client.close();
    } finally {
      await gw.stop();
      await db.close();
    }
  });
});
