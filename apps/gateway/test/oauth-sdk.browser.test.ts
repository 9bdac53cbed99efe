import { createServer as createHttpsServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { TenancyRepository } from '@calgate/store';
import { createTestDatabase, redisUrl, type TestDatabase } from '@calgate/testkit';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openDashboard, ownAddress, screenshot, startDashboard } from './browser.ts';
import {
  type GatewayProcess,
  HIGH_RATE_LIMITS,
  spawnGatewayProcess,
  type TestGateway,
  textOf,
} from './harness.ts';
import { type Callback, MemoryOAuthProvider, pkce, registerClient, startCallback } from './oauth-flow.ts';
import { selfSignedCertificate, type TestCertificate } from './tls.ts';

const PASSWORD = 'correct horse battery staple';

/** The calendars a signed-up owner's tenant gets for these tests: Work and Home (local, writable). */
async function seedCalendars(db: TestDatabase, email: string): Promise<{ work: string; home: string }> {
  const { rows } = await db.pool.query<{ tenant_id: string }>(
    'SELECT tenant_id FROM users WHERE email = $1',
    [email],
  );
  const tenantId = rows[0]?.tenant_id;
  if (tenantId === undefined) {
    throw new Error(`no user ${email}`);
  }
  const tenancy = new TenancyRepository(db.prisma);
  const work = await tenancy.createLocalCalendar(tenantId, { summary: 'Work', timeZone: 'Europe/Berlin' });
  const home = await tenancy.createLocalCalendar(tenantId, { summary: 'Home', timeZone: 'Europe/Berlin' });
  return { work: work.id, home: home.id };
}

/**
 * The official SDK client's OAuth flow, start to end, against a running gateway: the 401 leads
 * it to the metadata, it registers (or names its metadata document), sends the person to
 * /oauth/authorize in a browser; Chromium signs in, sees the consent page and clicks Allow; the
 * code comes back to the client's loopback redirect, the SDK exchanges it with its PKCE verifier
 * and calls tools with the token.
 */
async function sdkFlow(options: {
  mcpUrl: string;
  page: Page;
  callback: Callback;
  clientMetadataUrl?: string;
  consent: (page: Page) => Promise<void>;
}): Promise<{ client: Client; provider: MemoryOAuthProvider }> {
  let authorizationUrl: URL | undefined;
  const provider = new MemoryOAuthProvider({
    redirectUri: options.callback.redirectUri,
    onRedirect: (url) => {
      authorizationUrl = url;
    },
    ...(options.clientMetadataUrl === undefined ? {} : { clientMetadataUrl: options.clientMetadataUrl }),
  });
  const first = new StreamableHTTPClientTransport(new URL(options.mcpUrl), { authProvider: provider });
  await expect(new Client({ name: 'agent', version: '1.0.0' }).connect(first)).rejects.toThrow(
    UnauthorizedError,
  );
  if (authorizationUrl === undefined) {
    throw new Error('the SDK did not start authorization');
  }
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');
  expect(authorizationUrl.searchParams.get('resource')).toBe(options.mcpUrl);
  const arrived = options.callback.next();
  await options.page.goto(authorizationUrl.toString());
  await options.consent(options.page);
  const params = await arrived;
  // The browser's own navigation to the callback ends too, so the test's next page.goto does not
  // race it (the callback server answers before the page has loaded).
  await options.page.waitForURL((url) => url.href.startsWith(options.callback.redirectUri));
  expect(params.get('state')).toBe('state-123');
  await first.finishAuth(params.get('code') ?? '');
  const client = new Client({ name: 'agent', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(options.mcpUrl), { authProvider: provider }),
  );
  return { client, provider };
}

/**
 * A loopback gateway whose PUBLIC_URL is its own address, a signed-up owner with Work and Home,
 * the client's loopback redirect and a Chromium page (signed out again when `signedOut`).
 */
async function consentStack(email: string, options: { signedOut?: boolean } = {}) {
  const callback = await startCallback();
  const { gw, browser, page } = await startDashboard({
    env: HIGH_RATE_LIMITS,
    owner: { email, password: PASSWORD },
  });
  const calendars = await seedCalendars(gw.db, email);
  if (options.signedOut === true) {
    await page.context().clearCookies();
  }
  return {
    gw,
    callback,
    browser,
    page,
    calendars,
    async stop() {
      await browser.close();
      await callback.close();
      await gw.stop();
    },
  };
}

async function calendarIds(client: Client): Promise<string[]> {
  const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
  expect(listed.isError, textOf(listed)).toBeFalsy();
  return (listed.structuredContent as { calendars: { id: string }[] }).calendars.map((c) => c.id);
}

describe('the SDK client connects through OAuth with dynamic registration (Chromium consent)', () => {
  const email = 'ann@example.test';
  let stack: Awaited<ReturnType<typeof consentStack>>;
  let gw: TestGateway;
  let page: Page;
  let callback: Callback;
  let calendars: { work: string; home: string };

  beforeAll(async () => {
    stack = await consentStack(email, { signedOut: true });
    ({ gw, page, callback, calendars } = stack);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('signs in, consents to Work read-only, and the token reaches Work only', async () => {
    const { client, provider } = await sdkFlow({
      mcpUrl: gw.mcpUrl,
      page,
      callback,
      consent: async (consentPage) => {
        // Not signed in: the dashboard asks first, then comes back to the consent page.
        await consentPage.getByLabel('Email').fill(email);
        await consentPage.getByLabel('Password (at least 12 characters)').fill(PASSWORD);
        await consentPage.getByRole('button', { name: 'Sign in' }).click();
        await consentPage
          .getByRole('heading', { level: 1, name: 'Allow Test Agent to use your calendars?' })
          .waitFor();
        await expect(
          consentPage.getByText(`You will return to ${new URL(callback.redirectUri).host}.`).count(),
        ).resolves.toBe(1);
        // What the app asks for, in plain words (the SDK asked for both scopes).
        const asks = consentPage.getByRole('region', { name: 'What Test Agent asks for' });
        const asked = (await asks.getByRole('listitem').allTextContents()).map((text) => text.trim());
        expect(asked).toEqual([
          expect.stringMatching(/^See the calendars you tick below and their events \(calendars:read\)$/),
          expect.stringMatching(
            /^Create, change and delete events on the calendars you tick Write for \(calendars:write\)$/,
          ),
        ]);
        await asks.getByText('Test Agent asks to read and to change events', { exact: false }).waitFor();
        // Read-only on every readable calendar by default.
        expect(await consentPage.getByLabel('Read Work (Calgate calendars)').isChecked()).toBe(true);
        expect(await consentPage.getByLabel('Read Home (Calgate calendars)').isChecked()).toBe(true);
        expect(await consentPage.getByLabel('Write Work (Calgate calendars)').isChecked()).toBe(false);
        expect(await consentPage.getByLabel('Write Home (Calgate calendars)').isChecked()).toBe(false);
        await consentPage.getByLabel('Read Home (Calgate calendars)').uncheck();
        await screenshot(consentPage, 'oauth-consent');
        await consentPage.getByRole('button', { name: /^Allow/ }).click();
      },
    });
    try {
      expect(provider.clientInformation()?.client_id).toMatch(/^ocl_/);
      expect(provider.tokens()?.refresh_token).toMatch(/^ocr_/);
      expect(await calendarIds(client)).toEqual([calendars.work]);
      const write = await client.callTool({
        name: 'create_event',
        arguments: {
          calendarId: calendars.work,
          summary: 'Planning',
          start: { dateTime: '2026-12-02T10:00:00+01:00' },
          end: { dateTime: '2026-12-02T11:00:00+01:00' },
        },
      });
      expect(write.isError).toBe(true);
    } finally {
      await client.close();
    }
    // The dashboard lists the app.
    await page.goto(`${gw.url}/apps`);
    await page.getByRole('cell', { name: 'Test Agent' }).first().waitFor();
  });

  it('ticking Write grants write on that calendar; Deny sends access_denied', async () => {
    const { client } = await sdkFlow({
      mcpUrl: gw.mcpUrl,
      page,
      callback,
      consent: async (consentPage) => {
        await consentPage.getByRole('heading', { level: 1, name: /^Allow Test Agent/ }).waitFor();
        await consentPage.getByLabel('Write Home (Calgate calendars)').check();
        await consentPage.getByRole('button', { name: /^Allow/ }).click();
      },
    });
    try {
      const created = await client.callTool({
        name: 'create_event',
        arguments: {
          calendarId: calendars.home,
          summary: 'Dentist',
          start: { dateTime: '2026-12-02T10:00:00+01:00' },
          end: { dateTime: '2026-12-02T11:00:00+01:00' },
        },
      });
      expect(created.isError, textOf(created)).toBeFalsy();
    } finally {
      await client.close();
    }

    let authorizationUrl: URL | undefined;
    const provider = new MemoryOAuthProvider({
      redirectUri: callback.redirectUri,
      onRedirect: (url) => {
        authorizationUrl = url;
      },
    });
    const transport = new StreamableHTTPClientTransport(new URL(gw.mcpUrl), { authProvider: provider });
    await expect(new Client({ name: 'agent', version: '1.0.0' }).connect(transport)).rejects.toThrow(
      UnauthorizedError,
    );
    const arrived = callback.next();
    await page.goto(String(authorizationUrl));
    await page.getByRole('button', { name: 'Deny' }).click();
    const params = await arrived;
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
    expect(params.get('error')).toBe('access_denied');
    expect(params.get('code')).toBeNull();
  });
});

/**
 * A whole OAuth flow in Chromium (registration, consent page, token, MCP calls) takes seconds on a
 * quiet machine but has taken over 30 s when the whole suite loads the machine; a flow cut short
 * by the timeout would also leave its late redirect for the next test's callback.
 */
const BROWSER_FLOW_MS = 90_000;

describe('toolsets and scopes on the consent page (Chromium)', { timeout: BROWSER_FLOW_MS }, () => {
  const email = 'cara@example.test';
  let stack: Awaited<ReturnType<typeof consentStack>>;
  let gw: TestGateway;
  let page: Page;
  let callback: Callback;
  let calendars: { work: string; home: string };

  beforeAll(async () => {
    stack = await consentStack(email);
    ({ gw, page, callback, calendars } = stack);
  });

  afterAll(async () => {
    await stack?.stop();
  });

  it('unticking a toolset (and ticking another) leaves the connection without its tools', async () => {
    const { client } = await sdkFlow({
      mcpUrl: gw.mcpUrl,
      page,
      callback,
      consent: async (consentPage) => {
        await consentPage.getByRole('heading', { level: 1, name: /^Allow Test Agent/ }).waitFor();
        const toolsets = consentPage.getByRole('group', { name: 'Tools the app may use' });
        const box = (name: string) => toolsets.getByRole('checkbox', { name, exact: true });
        // calendar, booking and search ticked by default; rules and scheduler not.
        for (const [name, ticked] of [
          ['calendar', true],
          ['booking', true],
          ['search', true],
          ['rules', false],
          ['scheduler', false],
        ] as const) {
          expect(await box(name).isChecked(), name).toBe(ticked);
        }
        await box('booking').uncheck();
        await box('search').uncheck();
        await box('rules').check();
        await consentPage.getByLabel('Write Work (Calgate calendars)').check();
        await consentPage.getByRole('button', { name: /^Allow/ }).click();
      },
    });
    try {
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      expect(listed).toEqual(expect.arrayContaining(['list_calendars', 'create_event', 'list_projects']));
      for (const hidden of ['book_slot', 'find_free_slots', 'search', 'fetch']) {
        expect(listed).not.toContain(hidden);
      }
      const booked = await client.callTool({
        name: 'book_slot',
        arguments: {
          calendarId: calendars.work,
          start: '2026-12-02T10:00:00Z',
          end: '2026-12-02T10:30:00Z',
          summary: 'Not allowed',
        },
      });
      expect(booked.isError).toBe(true);
      expect(textOf(booked)).toMatch(/'booking' toolset/);
      const { rows } = await gw.db.pool.query('SELECT count(*)::int AS n FROM bookings');
      expect(rows[0].n).toBe(0);
    } finally {
      await client.close();
    }
    // The connection holds the toolsets ticked, nothing else.
    const { rows } = await gw.db.pool.query<{ toolsets: string[] }>(
      "SELECT toolsets FROM api_keys WHERE kind = 'oauth' AND revoked_at IS NULL",
    );
    expect(rows.map((row) => row.toolsets)).toEqual([['calendar', 'rules']]);
  });

  it('a client asking for read only is told so, and Write cannot be ticked', async () => {
    const registered = await registerClient(gw, {
      client_name: 'Reader',
      redirect_uris: [callback.redirectUri],
    });
    expect(registered.status).toBe(201);
    const url = new URL(`${gw.url}/oauth/authorize`);
    for (const [name, value] of Object.entries({
      response_type: 'code',
      client_id: registered.body.client_id as string,
      redirect_uri: callback.redirectUri,
      code_challenge: pkce().challenge,
      code_challenge_method: 'S256',
      scope: 'calendars:read',
    })) {
      url.searchParams.set(name, value);
    }
    await page.goto(url.toString());
    const asks = page.getByRole('region', { name: 'What Reader asks for' });
    await asks.waitFor();
    expect((await asks.getByRole('listitem').allTextContents()).map((text) => text.trim())).toEqual([
      'See the calendars you tick below and their events (calendars:read)',
    ]);
    await asks.getByText('Reader asks for read access only: it cannot change any event.').waitFor();
    expect(await page.getByLabel('Write Work (Calgate calendars)').isDisabled()).toBe(true);
    await screenshot(page, 'oauth-consent-read-only');
    const arrived = callback.next();
    await page.getByRole('button', { name: 'Deny' }).click();
    expect((await arrived).get('error')).toBe('access_denied');
    await page.waitForURL((url) => url.href.startsWith(callback.redirectUri));
  });
});

describe('the SDK client connects with a client ID metadata document (https, Chromium consent)', () => {
  const email = 'bob@example.test';
  let db: TestDatabase;
  let gateway: GatewayProcess;
  let certificate: TestCertificate;
  let documents: Server;
  let browser: Browser;
  let page: Page;
  let callback: Callback;
  let calendars: { work: string; home: string };
  let clientMetadataUrl: string;
  let fetched = 0;

  beforeAll(async () => {
    db = await createTestDatabase();
    callback = await startCallback();
    certificate = selfSignedCertificate();
    documents = createHttpsServer({ key: certificate.key, cert: certificate.cert }, (_request, response) => {
      fetched += 1;
      response.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=300' }).end(
        JSON.stringify({
          client_id: clientMetadataUrl,
          client_name: 'Doc Agent',
          redirect_uris: [callback.redirectUri],
          grant_types: ['authorization_code', 'refresh_token'],
          response_types: ['code'],
          token_endpoint_auth_method: 'none',
        }),
      );
    });
    await new Promise<void>((resolve) => documents.listen(0, '127.0.0.1', resolve));
    clientMetadataUrl = `https://127.0.0.1:${(documents.address() as AddressInfo).port}/oauth/client.json`;
    // Its own process: the document server's certificate is trusted the way an operator would
    // trust a private CA, with NODE_EXTRA_CA_CERTS.
    gateway = await spawnGatewayProcess({
      ...(await ownAddress()).env,
      DATABASE_URL: db.url,
      REDIS_URL: redisUrl(),
      OAUTH_ALLOW_PRIVATE_CLIENTS: 'true',
      NODE_EXTRA_CA_CERTS: certificate.certFile,
      ...HIGH_RATE_LIMITS,
    });
    ({ browser, page } = await openDashboard(gateway, { owner: { email, password: PASSWORD } }));
    calendars = await seedCalendars(db, email);
  });

  afterAll(async () => {
    await browser?.close();
    await gateway?.stop();
    await callback?.close();
    documents?.closeAllConnections();
    await new Promise((resolve) => documents?.close(resolve));
    certificate?.remove();
    await db?.close();
  });

  it('the document names the client; consent and tokens work as for a registered one', async () => {
    const { client, provider } = await sdkFlow({
      mcpUrl: gateway.mcpUrl,
      page,
      callback,
      clientMetadataUrl,
      consent: async (consentPage) => {
        await consentPage
          .getByRole('heading', { level: 1, name: 'Allow Doc Agent to use your calendars?' })
          .waitFor();
        await consentPage.getByText(clientMetadataUrl).first().waitFor();
        await consentPage.getByLabel('Read Work (Calgate calendars)').uncheck();
        await consentPage.getByRole('button', { name: /^Allow/ }).click();
      },
    });
    try {
      expect(provider.clientInformation()?.client_id).toBe(clientMetadataUrl);
      expect(await calendarIds(client)).toEqual([calendars.home]);
      expect(fetched).toBeGreaterThanOrEqual(1);
      const { rows } = await db.pool.query<{ kind: string }>(
        'SELECT kind FROM oauth_clients WHERE client_id = $1',
        [clientMetadataUrl],
      );
      expect(rows).toEqual([{ kind: 'metadata_document' }]);
    } finally {
      await client.close();
    }
  });
});
