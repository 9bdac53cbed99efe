/**
 * Google accounts in gateway tests: the emulator with the OAuth client Calgate signs in as, the
 * settings that point a gateway (and the CLI) at it, and the three ways an account gets connected:
 * through the runtime, through `calgate connect google`, and through the consent page as a browser
 * goes through it.
 */
import { randomBytes } from 'node:crypto';
import {
  type EmulatorSeed,
  type GoogleEmulator,
  type SeedAccount,
  startGoogleEmulator,
} from '@calgate/google-emulator';
import { GOOGLE_SCOPES } from '@calgate/providers';
import { ConnectionRepository, SecretBox } from '@calgate/store';
import { freePort, type TestDatabase } from '@calgate/testkit';
import type { Client } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import { main } from '../src/cli.ts';
import { GoogleProviders } from '../src/google/providers.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

export interface OAuthClient {
  clientId: string;
  clientSecret: string;
}

export interface TestEmulator extends GoogleEmulator {
  /**
   * The GOOGLE_* settings that point a gateway at the emulator as the OAuth client, and one
   * ENCRYPTION_KEY, so that every gateway and CLI run given them reads the tokens another sealed.
   */
  env: Record<string, string>;
  /** A refresh token of the account, as if it had consented to all of Calgate's scopes. */
  refreshToken(email: string): string;
  /**
   * A Calendar API request on the account's primary calendar's events (`path` after `/events`)
   * with a token of the account's own: someone changing them in Google directly, not through Calgate.
   */
  editDirectly(
    email: string,
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<Response>;
}

/** The emulator seeded with `seed` and the OAuth client, which redirects to the test gateway's callback. */
export async function startTestEmulator(
  client: OAuthClient,
  seed: Omit<EmulatorSeed, 'oauthClients'>,
): Promise<TestEmulator> {
  const emulator = await startGoogleEmulator({
    seed: {
      ...seed,
      oauthClients: [{ ...client, redirectUris: ['http://calgate.test/oauth/google/callback'] }],
    },
  });
  return {
    ...emulator,
    env: {
      GOOGLE_CLIENT_ID: client.clientId,
      GOOGLE_CLIENT_SECRET: client.clientSecret,
      GOOGLE_API_ROOT_URL: `${emulator.url}/`,
      GOOGLE_OAUTH_URL: emulator.url,
      // The emulator listens on loopback: an API root there needs this.
      OUTBOUND_ALLOW_PRIVATE: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    refreshToken: (email) =>
      emulator.admin.issueTokens({
        email,
        offline: true,
        clientId: client.clientId,
        scopes: [...GOOGLE_SCOPES],
      }).refresh_token as string,
    editDirectly: (email, method, path, body) =>
      fetch(`${emulator.url}/calendar/v3/calendars/${encodeURIComponent(email)}/events${path}`, {
        method,
        headers: {
          authorization: `Bearer ${emulator.admin.issueTokens({ email, scopes: [...GOOGLE_SCOPES] }).access_token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
  };
}

/**
 * The emulator and a gateway on a free loopback port whose PUBLIC_URL is its own address, so a
 * browser goes through the emulator's consent page and back to the gateway's callback. `env`
 * adds settings that need the running emulator (a service-account key file, say).
 */
export async function startGatewayWithGoogle(
  client: OAuthClient,
  seed: Omit<EmulatorSeed, 'oauthClients'>,
  env: (emulator: GoogleEmulator) => Promise<Record<string, string>> | Record<string, string> = () => ({}),
): Promise<{ emulator: GoogleEmulator; gw: TestGateway; url: string }> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const emulator = await startGoogleEmulator({
    seed: { ...seed, oauthClients: [{ ...client, redirectUris: [`${url}/oauth/google/callback`] }] },
  });
  const gw = await startTestGateway({
    PORT: String(port),
    PUBLIC_URL: url,
    GOOGLE_CLIENT_ID: client.clientId,
    GOOGLE_CLIENT_SECRET: client.clientSecret,
    GOOGLE_API_ROOT_URL: `${emulator.url}/`,
    GOOGLE_OAUTH_URL: emulator.url,
    OUTBOUND_ALLOW_PRIVATE: 'true',
    ...(await env(emulator)),
  });
  return { emulator, gw, url };
}

/**
 * Connects the account to the tenant from a refresh token, as the dashboard's callback does,
 * granting `access` on its calendars to the tenant's key; returns the id Calgate gave its primary
 * calendar.
 */
export async function connectGoogleAccount(
  gw: TestGateway,
  emulator: TestEmulator,
  tenant: { tenantId: string; keyId: string },
  email: string,
  access: 'read' | 'write',
): Promise<string> {
  await gw.runtime.google.connectOAuth(
    tenant.tenantId,
    { email, refreshToken: emulator.refreshToken(email) },
    { access, keyIds: [tenant.keyId] },
  );
  gw.forgetKeys(tenant.tenantId);
  const { rows } = await gw.db.pool.query(
    'SELECT id FROM calendars WHERE external_id = $1 AND tenant_id = $2',
    [email, tenant.tenantId],
  );
  expect(rows, `${email}'s primary calendar`).toHaveLength(1);
  return rows[0].id as string;
}

/**
 * Connects the account as an operator does, with `calgate connect google --refresh-token`, to the
 * gateway's only tenant and every key of it. The gateway must run with `emulator.env`.
 */
export async function connectGoogleAccountByCli(
  gw: TestGateway,
  emulator: TestEmulator,
  email: string,
  access: 'read' | 'write',
): Promise<void> {
  let err = '';
  const code = await main(
    ['connect', 'google', '--refresh-token', emulator.refreshToken(email), '--access', access],
    { ...emulator.env, DATABASE_URL: gw.db.url },
    { out: () => {}, err: (text) => (err += text) },
  );
  expect(err).toBe('');
  expect(code).toBe(0);
  const { rows } = await gw.db.pool.query<{ tenant_id: string }>(
    "SELECT tenant_id FROM connections WHERE provider = 'google' AND account_email = lower($1)",
    [email],
  );
  expect(rows, `${email}'s connection`).not.toHaveLength(0);
  for (const row of rows) {
    gw.forgetKeys(row.tenant_id);
  }
}

/** Opens Google's consent page like a browser and submits it; returns the redirect back to Calgate. */
export async function consent(emulator: GoogleEmulator, authUrl: string, account: string): Promise<URL> {
  const html = await (await fetch(authUrl)).text();
  const form = new URLSearchParams();
  for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) {
    form.set(m[1] as string, (m[2] as string).replace(/&amp;/g, '&').replace(/&quot;/g, '"'));
  }
  form.set('account', account);
  form.set('decision', 'approve');
  const action = /<form method="post" action="([^"]+)">/.exec(html)?.[1] as string;
  const response = await fetch(new URL(action, emulator.url), {
    method: 'POST',
    body: form,
    redirect: 'manual',
  });
  return new URL(response.headers.get('location') as string);
}

/**
 * Connects the account as the dashboard does for the signed-in `cookie`: /oauth/google/start,
 * consent in the emulator, then Calgate's callback; returns the callback's answer.
 */
export async function connectGoogleAccountByConsent(
  gw: TestGateway,
  emulator: GoogleEmulator,
  cookie: string,
  account: string,
  access: 'read' | 'write',
): Promise<Response> {
  const start = await fetch(`${gw.url}/oauth/google/start?access=${access}`, {
    headers: { cookie },
    redirect: 'manual',
  });
  expect(start.status).toBe(302);
  const back = await consent(emulator, start.headers.get('location') as string, account);
  expect(back.pathname).toBe('/oauth/google/callback');
  return fetch(`${gw.url}${back.pathname}${back.search}`, { headers: { cookie } });
}

/**
 * The Google providers a gateway or worker builds, pointed at the emulator as the OAuth client
 * `client`, over the test database; for tests that wire parts of the worker themselves.
 */
export function emulatorGoogleProviders(
  emulator: TestEmulator,
  client: OAuthClient,
  db: TestDatabase,
  log: Logger,
): { box: SecretBox; connections: ConnectionRepository; providers: GoogleProviders } {
  const box = new SecretBox([new Uint8Array(Buffer.from(emulator.env.ENCRYPTION_KEY as string, 'base64'))]);
  const connections = new ConnectionRepository(db.prisma, box);
  const endpoints = { apiRootUrl: emulator.env.GOOGLE_API_ROOT_URL as string, oauthUrl: emulator.url };
  const providers = new GoogleProviders(
    {
      client: { ...client, redirectUri: 'http://calgate.test/oauth/google/callback', endpoints },
      serviceAccount: undefined,
      endpoints,
    },
    connections,
    log,
    () => {},
  );
  return { box, connections, providers };
}

/** A Google calendar behind a gateway: the emulator, the gateway pointed at it, and a tenant. */
export interface GoogleCalendarGateway {
  emulator: TestEmulator;
  gw: TestGateway;
  tenant: { tenantId: string; keyId: string; secret: string };
  /** The id Calgate gave each account's primary calendar, by email (for accounts connected through the runtime). */
  calendars: Record<string, string>;
}

/**
 * Starts the emulator seeded with `seed` and a gateway pointed at it (with `env`, which may need
 * the running emulator), seeds the tenant `tenant`, and connects each account of `connect` to it:
 * through the runtime with its key granted `access` (connectGoogleAccount), or with
 * `calgate connect google` (`by: 'cli'`, connectGoogleAccountByCli). `prepare` runs between the
 * emulator's start and the gateway's: what someone did in Google before Calgate looked.
 */
export async function startGoogleCalendarGateway(options: {
  client: OAuthClient;
  seed: Omit<EmulatorSeed, 'oauthClients'>;
  prepare?: (emulator: TestEmulator) => Promise<void>;
  env?: (emulator: TestEmulator) => Promise<Record<string, string>> | Record<string, string>;
  tenant?: string;
  connect: { email: string; access: 'read' | 'write'; by?: 'cli' }[];
}): Promise<GoogleCalendarGateway> {
  const emulator = await startTestEmulator(options.client, options.seed);
  await options.prepare?.(emulator);
  const gw = await startTestGateway({ ...emulator.env, ...(await options.env?.(emulator)) });
  const tenant = await gw.seedTenant(options.tenant ?? 'Acme');
  const calendars: Record<string, string> = {};
  for (const { email, access, by } of options.connect) {
    if (by === 'cli') {
      await connectGoogleAccountByCli(gw, emulator, email, access);
    } else {
      calendars[email] = await connectGoogleAccount(gw, emulator, tenant, email, access);
    }
  }
  return { emulator, gw, tenant, calendars };
}

/**
 * An invitation from `organizer` landing in the account's primary calendar as Google delivers
 * it (events.import under the iCalUID `uid`); expects Google to take it.
 */
export async function inviteDirectly(
  emulator: TestEmulator,
  email: string,
  uid: string,
  organizer: string,
  fields: Record<string, unknown>,
): Promise<void> {
  const response = await emulator.editDirectly(email, 'POST', '/import', {
    iCalUID: uid,
    organizer: { email: organizer },
    ...fields,
  });
  expect(response.status).toBe(200);
}

/** The id of the account's calendar as the key sees it in list_calendars. */
export async function calendarOfAccount(client: Client, email: string): Promise<string> {
  const listed = await client.callTool({ name: 'list_calendars', arguments: {} });
  const calendars = (listed.structuredContent as { calendars: { id: string; accountEmail: string }[] })
    .calendars;
  const id = calendars.find((calendar) => calendar.accountEmail === email)?.id as string;
  expect(id).toBeDefined();
  return id;
}

/**
 * Ann's account on 1 December 2026 (Europe/Berlin): "Ann 09:00" in her primary calendar and
 * "Team 11:00" in the calendar `team` she owns.
 */
export function annWithTeam(email: string, team: string): SeedAccount {
  return {
    email,
    timeZone: 'Europe/Berlin',
    events: [
      {
        summary: 'Ann 09:00',
        start: { dateTime: '2026-12-01T09:00:00Z' },
        end: { dateTime: '2026-12-01T09:30:00Z' },
      },
    ],
    calendars: [
      {
        id: team,
        summary: 'Team',
        events: [
          {
            summary: 'Team 11:00',
            start: { dateTime: '2026-12-01T11:00:00Z' },
            end: { dateTime: '2026-12-01T12:00:00Z' },
          },
        ],
      },
    ],
  };
}
