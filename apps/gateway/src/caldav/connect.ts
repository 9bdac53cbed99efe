/**
 * Connecting a CalDAV account: discovery from whatever URL was given (server root,
 * /.well-known/caldav, principal or calendar), the connection upserted with its password sealed,
 * the calendars recorded and granted as a Google connect does (GoogleConnections.recordCalendars).
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import { type CaldavAccount, CaldavClient } from '@calgate/providers';
import type { HostResolver } from '@calgate/scheduler';
import type { ConnectionRecord, ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { ConnectResult, GrantChoice } from '../connections/record.ts';
import type { GoogleConnections } from '../google/service.ts';
import { type CaldavSecret, parseCaldavSecret } from './accounts.ts';

export interface CaldavLogin {
  url: string;
  username: string;
  password: string;
}

export interface CaldavConnectDeps {
  connections: ConnectionRepository;
  /** The workspace's time zone is a calendar's when its server names none. */
  tenancy: TenancyRepository;
  /** Records and grants the calendars (shared with the Google connect). */
  google: GoogleConnections;
  /** OUTBOUND_ALLOW_PRIVATE (alias TARGETS_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** How the server's host name is resolved for the outbound check; absent, the system's. */
  resolve?: HostResolver | undefined;
  /** Drops the cached provider of a reconnected account. */
  forget?: (connectionId: string) => void;
}

/** The account's calendars from `login.url`, with plain sentences for the usual mistakes. */
export async function discoverCaldav(
  login: CaldavLogin,
  allowPrivate: boolean,
  resolve?: HostResolver,
): Promise<CaldavAccount> {
  let url: URL;
  try {
    url = new URL(login.url);
  } catch {
    throw new CalgateError(
      'invalid_argument',
      `--url '${login.url}' is not a URL; give the server's https address.`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new CalgateError('invalid_argument', `--url must be an http(s) address, not ${url.protocol}.`);
  }
  const client = new CaldavClient({
    credentials: { username: login.username, password: login.password },
    policy: { allowPrivate, ...(resolve === undefined ? {} : { resolve }) },
  });
  try {
    return await client.discover(url.toString());
  } catch (error) {
    if (isCalgateError(error) && error.code === 'needs_reauth') {
      throw new CalgateError(
        'needs_reauth',
        `The CalDAV server at ${url.origin} refused the username '${login.username}' with this password: the password is wrong (iCloud needs an app-specific password).`,
      );
    }
    throw error;
  }
}

/**
 * Which account this is in Calgate (a connection's `accountEmail`): the address the server gives
 * the principal, else the username qualified by the server the principal is on
 * (`alice@dav.example.com`, with the port when it is not the scheme's default), so that one
 * username on two servers is two accounts.
 */
export function caldavIdentity(login: CaldavLogin, account: CaldavAccount): string {
  if (account.accountEmail !== undefined && account.accountEmail !== '') {
    return account.accountEmail.toLowerCase();
  }
  const server = new URL(account.principalUrl ?? account.calendars[0]?.url ?? login.url).host;
  return `${login.username}@${server}`.toLowerCase();
}

const originOf = (url: string | undefined): string[] => {
  try {
    return url === undefined ? [] : [new URL(url).origin];
  } catch {
    return [];
  }
};

/**
 * The tenant's connection of this account: the one under its identity or, for a connection made
 * when a username's identity was the bare username, the one under that name whose sealed
 * credentials are for the same server (another server's account of that name is another account).
 */
async function connectionOf(
  deps: CaldavConnectDeps,
  tenantId: string,
  before: readonly ConnectionRecord[],
  identity: string,
  login: CaldavLogin,
  account: CaldavAccount,
): Promise<ConnectionRecord | undefined> {
  const caldav = before.filter((connection) => connection.provider === 'caldav');
  const same = caldav.find((connection) => connection.accountEmail === identity);
  const bare = login.username.toLowerCase();
  const earlier = caldav.find((connection) => connection.accountEmail === bare);
  if (same !== undefined || earlier === undefined || identity === bare) {
    return same;
  }
  let secret: CaldavSecret;
  try {
    secret = parseCaldavSecret(await deps.connections.readCredentials(tenantId, earlier.id));
  } catch {
    return undefined;
  }
  const servers = new Set(
    [login.url, account.principalUrl, ...account.calendars.map((calendar) => calendar.url)].flatMap(originOf),
  );
  return [secret.url, secret.principalUrl].flatMap(originOf).some((origin) => servers.has(origin))
    ? earlier
    : undefined;
}

export async function connectCaldav(
  deps: CaldavConnectDeps,
  tenantId: string,
  login: CaldavLogin,
  choice: GrantChoice,
): Promise<ConnectResult> {
  const account = await discoverCaldav(login, deps.allowPrivate, deps.resolve);
  if (account.calendars.length === 0) {
    throw new CalgateError(
      'not_found',
      `The CalDAV server at ${new URL(login.url).origin} has no calendars for '${login.username}'.`,
    );
  }
  const accountEmail = caldavIdentity(login, account);
  const fallbackZone = (await deps.tenancy.getTenant(tenantId))?.timeZone ?? 'UTC';
  const before = await deps.connections.list(tenantId);
  const existing = await connectionOf(deps, tenantId, before, accountEmail, login, account);
  const reconnected = existing !== undefined;
  if (existing !== undefined && existing.accountEmail !== accountEmail) {
    // Kept under the identity naming its server from now on: its id, calendars and grants stay.
    await deps.connections.rename(tenantId, existing.id, accountEmail);
  }
  const connection = await deps.connections.upsert(tenantId, {
    provider: 'caldav',
    accountEmail,
    auth: 'password',
  });
  const secret: CaldavSecret = {
    username: login.username,
    password: login.password,
    url: login.url,
    ...(account.principalUrl === undefined ? {} : { principalUrl: account.principalUrl }),
  };
  await deps.connections.storeCredentials(tenantId, connection.id, JSON.stringify(secret));
  deps.forget?.(connection.id);
  const calendars = await deps.google.recordCalendars(
    tenantId,
    connection.id,
    account.calendars.map((calendar, index) => ({
      externalId: calendar.url,
      summary: calendar.displayName,
      ...(calendar.description === undefined ? {} : { description: calendar.description }),
      timeZone: calendar.timeZone ?? fallbackZone,
      primary: index === 0 && !before.some((c) => c.provider !== 'local'),
      accessRole: calendar.writable ? 'owner' : 'reader',
    })),
    choice,
    true,
  );
  return {
    connectionId: connection.id,
    accountEmail,
    reconnected,
    scopes: [],
    writable: account.calendars.some((calendar) => calendar.writable),
    calendars,
  };
}
