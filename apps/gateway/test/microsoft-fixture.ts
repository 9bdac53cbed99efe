/**
 * Microsoft accounts in gateway tests: the Graph emulator with the app registration Calgate signs
 * in as, the MICROSOFT_* settings that point a gateway (and the CLI) at it, refresh tokens as if an
 * account had consented, "Connect Microsoft" as a browser goes through it (the emulator's
 * /authorize redirects at once with a code), and an account connected the way the connect flows
 * leave it: a `microsoft` connection in the store with its refresh token sealed in the
 * OAuthCredentials shape, calendars discovered through Graph and granted to a key.
 */
import { randomBytes } from 'node:crypto';
import {
  type MicrosoftEmulator,
  type MicrosoftSeed,
  startMicrosoftEmulator,
} from '@calgate/microsoft-emulator';
import {
  GraphClient,
  MailboxLimiter,
  MICROSOFT_READ_SCOPES,
  MICROSOFT_WRITE_SCOPES,
  MicrosoftTokenSource,
} from '@calgate/providers';
import { ConnectionRepository, SecretBox } from '@calgate/store';
import { expect } from 'vitest';
import { microsoftCredentials } from '../src/microsoft/connect.ts';
import { startTestGateway, type TestGateway } from './harness.ts';

export const MS_CLIENT = { clientId: 'c0ffee00-0000-4000-8000-000000000028', clientSecret: 'ms-app-secret' };

export interface TestMicrosoftEmulator extends MicrosoftEmulator {
  /** The MICROSOFT_* settings (with OUTBOUND_ALLOW_PRIVATE and one ENCRYPTION_KEY) that point a gateway at the emulator. */
  env: Record<string, string>;
  /** A refresh token of the account, as after consent to `scopes` (default: the emulator's). */
  refreshToken(email: string, scopes?: readonly string[]): string;
  /** A Graph request with a token of the account's own: someone changing things in Outlook directly. */
  editDirectly(
    email: string,
    method: 'POST' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
  ): Promise<Response>;
}

export interface TestEmulatorOptions {
  /** Registers MS_CLIENT with the redirect URI `${publicUrl}/oauth/microsoft/callback` (consent flows). */
  publicUrl?: string;
  /** What `refreshToken` consents to by default (read and write unless said). */
  scopes?: readonly string[];
}

export async function startTestMicrosoftEmulator(
  seed: Omit<MicrosoftSeed, 'clients'>,
  options: TestEmulatorOptions = {},
): Promise<TestMicrosoftEmulator> {
  const { publicUrl, scopes: defaultScopes = MICROSOFT_WRITE_SCOPES } = options;
  const emulator = await startMicrosoftEmulator({
    seed:
      publicUrl === undefined
        ? seed
        : { ...seed, clients: [{ ...MS_CLIENT, redirectUris: [`${publicUrl}/oauth/microsoft/callback`] }] },
  });
  const client = publicUrl === undefined ? emulator.client : MS_CLIENT;
  return Object.assign(emulator, {
    env: {
      MICROSOFT_CLIENT_ID: client.clientId,
      MICROSOFT_CLIENT_SECRET: client.clientSecret,
      MICROSOFT_GRAPH_URL: emulator.graphUrl,
      MICROSOFT_LOGIN_URL: emulator.loginUrl,
      // The emulator listens on loopback: API roots there need this.
      OUTBOUND_ALLOW_PRIVATE: 'true',
      ENCRYPTION_KEY: randomBytes(32).toString('base64'),
    },
    refreshToken: (email: string, scopes: readonly string[] = defaultScopes) =>
      emulator.admin.issueTokens({
        email,
        clientId: client.clientId,
        scopes: scopes.filter((scope) => scope !== 'offline_access'),
        offline: true,
      }).refresh_token as string,
    editDirectly: (email: string, method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) =>
      fetch(`${emulator.graphUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${emulator.admin.issueTokens({ email, scopes: ['Calendars.ReadWrite'] }).access_token}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      }),
  });
}

/** The emulator as the consent-flow tests use it: MS_CLIENT redirecting to `publicUrl`, read-only consent by default. */
export function startMicrosoftTestEmulator(
  seed: Omit<MicrosoftSeed, 'clients'>,
  publicUrl = 'http://calgate.test',
): Promise<TestMicrosoftEmulator> {
  return startTestMicrosoftEmulator(seed, { publicUrl, scopes: MICROSOFT_READ_SCOPES });
}

/**
 * "Connect Microsoft" as the dashboard's browser does it for `cookie`: /oauth/microsoft/start with
 * `query`, Microsoft's authorize endpoint (which redirects at once), then Calgate's callback.
 * Returns the callback URL Microsoft sent the browser to, and Calgate's answer.
 */
export async function connectMicrosoftByConsent(
  gw: TestGateway,
  cookie: string,
  query: string,
): Promise<{ callback: URL; authorize: URL; response: Response }> {
  const start = await fetch(`${gw.url}/oauth/microsoft/start?${query}`, {
    headers: { cookie },
    redirect: 'manual',
  });
  expect(start.status, await start.clone().text()).toBe(302);
  const authorize = new URL(start.headers.get('location') as string);
  const back = await fetch(authorize, { redirect: 'manual' });
  expect(back.status).toBe(302);
  const callback = new URL(back.headers.get('location') as string);
  expect(callback.pathname).toBe('/oauth/microsoft/callback');
  const response = await fetch(`${gw.url}${callback.pathname}${callback.search}`, { headers: { cookie } });
  return { callback, authorize, response };
}

export interface ConnectedOutlook {
  connectionId: string;
  /** Calgate's calendar id by Outlook calendar name. */
  calendars: Record<string, string>;
  /** The Outlook calendar id by name. */
  externalIds: Record<string, string>;
  timeZone: string;
}

/**
 * Connects the Outlook account to the tenant as the connect flows do, granting `access` on its
 * calendars to `keyIds` (write only where Outlook lets the account edit). `scopes` are those
 * consented to: Calgate's least-privilege read or write set, which has no MailboxSettings.Read.
 */
export async function connectOutlookAccount(
  gw: TestGateway,
  emulator: TestMicrosoftEmulator,
  tenantId: string,
  keyIds: readonly string[],
  email: string,
  access: 'read' | 'write',
  scopes: readonly string[] = access === 'write' ? MICROSOFT_WRITE_SCOPES : MICROSOFT_READ_SCOPES,
): Promise<ConnectedOutlook> {
  const { connections, tenancy, microsoftProviders } = gw.runtime;
  const connection = await connections.upsert(tenantId, {
    provider: 'microsoft',
    accountEmail: email.toLowerCase(),
    auth: 'oauth',
    scopes: [...scopes],
  });
  await connections.storeCredentials(
    tenantId,
    connection.id,
    JSON.stringify({ refreshToken: emulator.refreshToken(email, scopes), scope: scopes.join(' ') }),
  );
  microsoftProviders.forget(connection.id);
  const provider = microsoftProviders.forConnection(tenantId, connection.id, connection.accountEmail);
  const account = await provider.discover();
  expect(account.email).toBe(email.toLowerCase());
  const writable = scopes.includes('Calendars.ReadWrite');
  const synced = await tenancy.syncCalendars(
    tenantId,
    connection.id,
    account.calendars.map((calendar) => ({
      ...calendar,
      accessRole: writable ? calendar.accessRole : 'reader',
    })),
  );
  const out: ConnectedOutlook = {
    connectionId: connection.id,
    calendars: {},
    externalIds: {},
    timeZone: account.timeZone,
  };
  for (const calendar of synced.calendars) {
    out.calendars[calendar.summary] = calendar.id;
    out.externalIds[calendar.summary] = calendar.externalId;
    for (const keyId of keyIds) {
      await tenancy.setGrant(tenantId, keyId, calendar.id, {
        read: true,
        write: access === 'write' && calendar.accessRole !== 'reader',
      });
    }
  }
  gw.forgetKeys(tenantId);
  return out;
}

/** An Outlook calendar behind a gateway: the Graph emulator, the gateway pointed at it, a tenant and its connected mailbox. */
export interface OutlookCalendarGateway {
  ms: TestMicrosoftEmulator;
  gw: TestGateway;
  tenant: { tenantId: string; keyId: string; secret: string };
  outlook: ConnectedOutlook;
}

/**
 * Starts the Graph emulator seeded with `seed` and a gateway pointed at it (with `env`), seeds the
 * tenant `tenant` and connects the mailbox `connect.email` to it with `connect.access`, granted to
 * the tenant's key (connectOutlookAccount). `beforeConnect` runs once the tenant exists: settings
 * that decide what the account's calendars get when they are first synced (the workspace's zone).
 */
export async function startOutlookCalendarGateway(options: {
  seed: Omit<MicrosoftSeed, 'clients'>;
  env?: Record<string, string>;
  tenant?: string;
  beforeConnect?: (gw: TestGateway, tenant: OutlookCalendarGateway['tenant']) => Promise<unknown>;
  connect: { email: string; access: 'read' | 'write' };
}): Promise<OutlookCalendarGateway> {
  const ms = await startTestMicrosoftEmulator(options.seed);
  const gw = await startTestGateway({ ...ms.env, ...options.env });
  const tenant = await gw.seedTenant(options.tenant ?? 'Acme');
  await options.beforeConnect?.(gw, tenant);
  const { email, access } = options.connect;
  const outlook = await connectOutlookAccount(gw, ms, tenant.tenantId, [tenant.keyId], email, access);
  return { ms, gw, tenant, outlook };
}

/** The store's connections, unsealed with the ENCRYPTION_KEY of the emulator's settings (the gateway's). */
export function connectionsSealedFor(gw: TestGateway, emulator: TestMicrosoftEmulator): ConnectionRepository {
  return new ConnectionRepository(
    gw.db.prisma,
    new SecretBox([new Uint8Array(Buffer.from(emulator.env.ENCRYPTION_KEY as string, 'base64'))]),
  );
}

/**
 * Consent withdrawn at Microsoft for the connected `email`: its refresh tokens are revoked, the
 * connection keeps only its refresh token (no access token to use meanwhile), and the next Graph
 * call (as Calgate's app, MS_CLIENT) is answered invalid_grant, which marks it needs_reauth.
 */
export async function withdrawMicrosoftConsent(
  emulator: TestMicrosoftEmulator,
  connections: ConnectionRepository,
  tenantId: string,
  connectionId: string,
  email: string,
): Promise<void> {
  emulator.admin.revokeRefreshTokens({ email });
  const held = JSON.parse((await connections.readCredentials(tenantId, connectionId)) ?? '{}');
  await connections.storeCredentials(
    tenantId,
    connectionId,
    JSON.stringify({ refreshToken: held.refreshToken }),
  );
  const graph = new GraphClient({
    graphUrl: emulator.graphUrl,
    tokens: new MicrosoftTokenSource(
      { ...MS_CLIENT, tenant: 'common', loginUrl: emulator.loginUrl },
      microsoftCredentials(connections, tenantId, connectionId),
      { now: Date.now, requestTimeoutMs: 5000 },
    ),
    limiter: new MailboxLimiter(),
  });
  await expect(graph.request({ path: '/me', operation: 'me.get' })).rejects.toMatchObject({
    code: 'needs_reauth',
  });
}
