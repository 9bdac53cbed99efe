import { CalgateError } from '@calgate/core';
import { GoogleOAuth, grantsWrite, parseScopes } from '@calgate/providers';
import type { ApiKeyRepository, ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { Logger } from 'pino';
import {
  CalendarRecorder,
  type ConnectResult,
  type DiscoveredCalendar,
  type GrantChoice,
} from '../connections/record.ts';
import type { ConnectionMirror } from '../mirror/lifecycle.ts';
import type { GoogleProviders } from './providers.ts';

export {
  type ConnectResult,
  cappedRole,
  type GrantChoice,
} from '../connections/record.ts';

/**
 * Whether Calgate may write through a connection: service accounts ask for full access; an OAuth
 * connection only when Google granted a write scope. Unknown scopes (an account connected from a
 * token whose answer did not list them) count as write, as every connection did before scopes
 * were recorded; the provider still refuses what the token does not cover.
 */
export function connectionWritable(connection: {
  provider?: string;
  auth: string;
  scopes: readonly string[];
}): boolean {
  if (connection.auth !== 'oauth' || connection.scopes.length === 0) {
    return true;
  }
  // A Microsoft connection writes with Calendars.ReadWrite (Graph answers scopes without its prefix).
  return connection.provider === 'microsoft'
    ? connection.scopes.some((scope) => /(^|\/)Calendars\.ReadWrite(\.Shared)?$/i.test(scope))
    : grantsWrite(connection.scopes);
}

/**
 * Connecting, refreshing and removing Google accounts, shared by the dashboard's OAuth callback,
 * the service-account flow and the CLI.
 */
export class GoogleConnections {
  readonly #providers: GoogleProviders;
  readonly #connections: ConnectionRepository;
  readonly #log: Logger;
  readonly #changed: (tenantId: string) => void;
  readonly #mirror: ConnectionMirror | undefined;
  readonly #calendars: CalendarRecorder;

  /**
   * With `keys`, connecting an account also makes its primary calendar the default of the keys
   * that can read it and are still on no default or the first-run calendar (see #adoptPrimary).
   * With `mirror`, calendars found on a connection get their mirror's sync queued, and
   * disconnecting stops the account's push channels and deletes its mirror.
   */
  constructor(
    providers: GoogleProviders,
    connections: ConnectionRepository,
    tenancy: TenancyRepository,
    log: Logger,
    onChange: (tenantId: string) => void,
    keys: ApiKeyRepository,
    mirror?: ConnectionMirror,
  ) {
    this.#providers = providers;
    this.#connections = connections;
    this.#log = log;
    this.#changed = onChange;
    this.#mirror = mirror;
    this.#calendars = new CalendarRecorder({ tenancy, keys, log, onChange, mirror });
  }

  /** Whether an OAuth client is configured (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET). */
  configured(): boolean {
    return this.#providers.setup.client !== undefined;
  }

  oauth(): GoogleOAuth {
    const client = this.#providers.setup.client;
    if (client === undefined) {
      throw new CalgateError(
        'unavailable',
        'Connecting Google accounts is disabled: set GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET.',
      );
    }
    return new GoogleOAuth(client);
  }

  /** Stores an OAuth account's refresh token (sealed), discovers its calendars and grants them. */
  async connectOAuth(
    tenantId: string,
    account: {
      email: string;
      refreshToken: string;
      accessToken?: string;
      expiresAt?: number;
      scope?: string;
    },
    choice: GrantChoice,
  ): Promise<ConnectResult> {
    const before = await this.#connections.list(tenantId);
    const reconnected = before.some(
      (connection) =>
        connection.provider === 'google' && connection.accountEmail === account.email.toLowerCase(),
    );
    const scopes = parseScopes(account.scope);
    const connection = await this.#connections.upsert(tenantId, {
      provider: 'google',
      accountEmail: account.email.toLowerCase(),
      auth: 'oauth',
      ...(scopes.length === 0 ? {} : { scopes }),
    });
    const credentials: Record<string, unknown> = { refreshToken: account.refreshToken };
    for (const field of ['accessToken', 'expiresAt', 'scope'] as const) {
      if (account[field] !== undefined) {
        credentials[field] = account[field];
      }
    }
    await this.#connections.storeCredentials(tenantId, connection.id, JSON.stringify(credentials));
    this.#providers.forget(connection.id);
    const provider = this.#providers.forConnection(tenantId, connection.id, 'oauth', connection.accountEmail);
    const writable = connectionWritable(connection);
    const discovered = await provider.listCalendars();
    const result = await this.#calendars.record(tenantId, connection.id, discovered, choice, writable);
    this.#log.info(
      { tenantId, connectionId: connection.id, calendars: result.length, reconnected, writable },
      'Google account connected',
    );
    return {
      connectionId: connection.id,
      accountEmail: connection.accountEmail,
      reconnected,
      scopes: connection.scopes,
      writable,
      calendars: result,
    };
  }

  /**
   * Finishes "Allow writing" on a connected account: the consent was for the same account (Google
   * lets the person pick another one, which is refused here), its new token replaces the old one,
   * the scopes are updated and the calendars' roles refreshed. Calendars and grants stay as they
   * were; Write ticks a person set before now take effect.
   */
  async upgradeOAuth(
    tenantId: string,
    connectionId: string,
    account: {
      email: string;
      refreshToken: string;
      accessToken?: string;
      expiresAt?: number;
      scope?: string;
    },
  ): Promise<ConnectResult> {
    const connection = await this.#connections.get(tenantId, connectionId);
    if (connection === null || connection.provider !== 'google' || connection.auth !== 'oauth') {
      throw new CalgateError('not_found', `No Google account connection ${connectionId} in this tenant.`);
    }
    if (connection.accountEmail !== account.email.toLowerCase()) {
      throw new CalgateError(
        'invalid_argument',
        `Google signed in ${account.email}, but writing was requested for ${connection.accountEmail}. Start "Allow writing" again and choose ${connection.accountEmail} on Google's page.`,
      );
    }
    return this.connectOAuth(tenantId, account, { access: 'none', keyIds: [] });
  }

  /** Verifies that the service account can reach a calendar shared with it, then adds it. */
  async connectServiceAccountCalendar(
    tenantId: string,
    calendarId: string,
    choice: GrantChoice,
  ): Promise<ConnectResult> {
    const provider = this.#providers.serviceAccount();
    const key = this.#providers.setup.serviceAccount;
    let info: Awaited<ReturnType<typeof provider.getCalendar>>;
    try {
      info = await provider.getCalendar(calendarId);
    } catch (error) {
      if (
        error instanceof CalgateError &&
        (error.code === 'not_found' || error.code === 'permission_denied')
      ) {
        throw new CalgateError(
          'not_found',
          `Calgate's service account cannot see calendar '${calendarId}'. In Google Calendar, share it with ${key?.client_email} ("Make changes to events" for write access), then try again.`,
        );
      }
      throw error;
    }
    const connection = await this.#connections.upsert(tenantId, {
      provider: 'google',
      accountEmail: (key?.client_email ?? 'service-account').toLowerCase(),
      auth: 'service_account',
    });
    const calendars = await this.#calendars.record(tenantId, connection.id, [info], choice, true);
    return {
      connectionId: connection.id,
      accountEmail: connection.accountEmail,
      reconnected: false,
      scopes: connection.scopes,
      writable: true,
      calendars,
    };
  }

  /**
   * Revokes the account's token at Google (best effort: the account is removed either way) and
   * deletes the connection with its calendars and grants.
   */
  async disconnect(tenantId: string, connectionId: string): Promise<{ revoked: boolean }> {
    const connection = await this.#connections.get(tenantId, connectionId);
    // CalDAV accounts and feed subscriptions are removed the same way (their secret is simply deleted).
    if (
      connection === null ||
      (connection.provider !== 'google' && connection.provider !== 'caldav' && connection.provider !== 'ics')
    ) {
      throw new CalgateError('not_found', `No Google connection ${connectionId} in this tenant.`);
    }
    // First, while the account's token still works: Google is told to stop pushing.
    await this.#mirror?.disconnecting(tenantId, connectionId).catch((error: unknown) => {
      this.#log.warn({ err: error, connectionId }, 'mirror clean-up failed; removing the connection anyway');
    });
    let revoked = false;
    if (connection.auth === 'oauth' && this.#providers.setup.client !== undefined) {
      try {
        const stored = await this.#connections.readCredentials(tenantId, connectionId);
        if (stored !== null) {
          await this.oauth().revoke((JSON.parse(stored) as { refreshToken: string }).refreshToken);
          revoked = true;
        }
      } catch (error) {
        this.#log.warn(
          { err: error, connectionId },
          'token revocation failed; removing the connection anyway',
        );
      }
    }
    await this.#connections.delete(tenantId, connectionId);
    this.#providers.forget(connectionId);
    this.#changed(tenantId);
    return { revoked };
  }

  /**
   * Records calendars discovered on any connection (CalDAV too) as a Google connect does:
   * stored, granted to the chosen keys, primary adopted, first mirror syncs queued.
   */
  recordCalendars(
    tenantId: string,
    connectionId: string,
    discovered: readonly DiscoveredCalendar[],
    choice: GrantChoice,
    writable: boolean,
  ): Promise<ConnectResult['calendars']> {
    return this.#calendars.record(tenantId, connectionId, discovered, choice, writable);
  }
}
