/**
 * Connecting a CalDAV account: discovery from whatever URL was given (server root,
 * /.well-known/caldav, principal or calendar), the connection upserted with its password sealed,
 * the calendars recorded and granted as a Google connect does (GoogleConnections.recordCalendars).
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import { type CaldavAccount, CaldavClient } from '@calgate/providers';
import type { ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { ConnectResult, GrantChoice } from '../connections/record.ts';
import type { GoogleConnections } from '../google/service.ts';
import type { CaldavSecret } from './accounts.ts';

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
  /** Drops the cached provider of a reconnected account. */
  forget?: (connectionId: string) => void;
}

/** The account's calendars from `login.url`, with plain sentences for the usual mistakes. */
export async function discoverCaldav(login: CaldavLogin, allowPrivate: boolean): Promise<CaldavAccount> {
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
    policy: { allowPrivate },
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

export async function connectCaldav(
  deps: CaldavConnectDeps,
  tenantId: string,
  login: CaldavLogin,
  choice: GrantChoice,
): Promise<ConnectResult> {
  const account = await discoverCaldav(login, deps.allowPrivate);
  if (account.calendars.length === 0) {
    throw new CalgateError(
      'not_found',
      `The CalDAV server at ${new URL(login.url).origin} has no calendars for '${login.username}'.`,
    );
  }
  const accountEmail = (account.accountEmail ?? login.username).toLowerCase();
  const fallbackZone = (await deps.tenancy.getTenant(tenantId))?.timeZone ?? 'UTC';
  const before = await deps.connections.list(tenantId);
  const reconnected = before.some(
    (connection) => connection.provider === 'caldav' && connection.accountEmail === accountEmail,
  );
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
