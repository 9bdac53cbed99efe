import { CalgateError } from '@calgate/core';
import { GoogleOAuth } from '@calgate/providers';
import type {
  ApiKeyRepository,
  CalendarRecord,
  ConnectionRepository,
  GrantAccess,
  TenancyRepository,
} from '@calgate/store';
import type { Logger } from 'pino';
import type { GoogleProviders } from './providers.ts';

export interface GrantChoice {
  access: GrantAccess;
  /** Keys to grant; empty means every live key of the tenant. */
  keyIds: readonly string[];
}

export interface ConnectResult {
  connectionId: string;
  accountEmail: string;
  reconnected: boolean;
  calendars: { id: string; summary: string; externalId: string; created: boolean }[];
}

/**
 * Connecting, refreshing and removing Google accounts, shared by the dashboard's OAuth callback,
 * the service-account flow and the CLI.
 */
export class GoogleConnections {
  readonly #providers: GoogleProviders;
  readonly #connections: ConnectionRepository;
  readonly #tenancy: TenancyRepository;
  readonly #log: Logger;
  readonly #changed: () => void;
  readonly #keys: ApiKeyRepository;

  /**
   * With `keys`, connecting an account also makes its primary calendar the default of the keys
   * that can read it and are still on no default or the first-run calendar (see #adoptPrimary).
   */
  constructor(
    providers: GoogleProviders,
    connections: ConnectionRepository,
    tenancy: TenancyRepository,
    log: Logger,
    onChange: () => void,
    keys: ApiKeyRepository,
  ) {
    this.#providers = providers;
    this.#connections = connections;
    this.#tenancy = tenancy;
    this.#log = log;
    this.#changed = onChange;
    this.#keys = keys;
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
    const connection = await this.#connections.upsert(tenantId, {
      provider: 'google',
      accountEmail: account.email.toLowerCase(),
      auth: 'oauth',
    });
    const credentials: Record<string, unknown> = { refreshToken: account.refreshToken };
    for (const field of ['accessToken', 'expiresAt', 'scope'] as const) {
      if (account[field] !== undefined) {
        credentials[field] = account[field];
      }
    }
    await this.#connections.storeCredentials(tenantId, connection.id, JSON.stringify(credentials));
    this.#providers.forget(connection.id);
    const provider = this.#providers.forConnection(tenantId, connection.id, 'oauth');
    const discovered = await provider.listCalendars();
    const result = await this.#record(tenantId, connection.id, discovered, choice);
    this.#log.info(
      { tenantId, connectionId: connection.id, calendars: result.length, reconnected },
      'Google account connected',
    );
    return {
      connectionId: connection.id,
      accountEmail: connection.accountEmail,
      reconnected,
      calendars: result,
    };
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
    const calendars = await this.#record(tenantId, connection.id, [info], choice);
    return {
      connectionId: connection.id,
      accountEmail: connection.accountEmail,
      reconnected: false,
      calendars,
    };
  }

  /**
   * Revokes the account's token at Google (best effort: the account is removed either way) and
   * deletes the connection with its calendars and grants.
   */
  async disconnect(tenantId: string, connectionId: string): Promise<{ revoked: boolean }> {
    const connection = await this.#connections.get(tenantId, connectionId);
    if (connection === null || connection.provider !== 'google') {
      throw new CalgateError('not_found', `No Google connection ${connectionId} in this tenant.`);
    }
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
    this.#changed();
    return { revoked };
  }

  async #record(
    tenantId: string,
    connectionId: string,
    discovered: {
      externalId: string;
      summary: string;
      description?: string;
      timeZone: string;
      primary: boolean;
      accessRole: string;
    }[],
    choice: GrantChoice,
  ): Promise<ConnectResult['calendars']> {
    const visible = discovered.filter((calendar) => calendar.accessRole !== 'freeBusyReader');
    const { created, calendars } = await this.#tenancy.syncCalendars(tenantId, connectionId, visible);
    const fresh = new Set(created);
    if (choice.access !== 'none') {
      const toGrant: CalendarRecord[] = calendars.filter((calendar) => fresh.has(calendar.id));
      await this.#tenancy.grantCalendars(tenantId, toGrant, choice.access, choice.keyIds);
    }
    await this.#adoptPrimary(tenantId, calendars);
    this.#changed();
    return calendars.map((calendar) => ({
      id: calendar.id,
      summary: calendar.summary,
      externalId: calendar.externalId,
      created: fresh.has(calendar.id),
    }));
  }

  /**
   * "Add a call at 10:00" must land in a calendar the person sees. Until a Google account is
   * connected, a first-run key writes to the local calendar Calgate created on first start (the
   * primary calendar of the tenant's local account); once the account's primary calendar is
   * connected, keys that can read it and have no default, or still that first-run calendar, take
   * it as their default. A default a person chose (any other calendar) is left alone. A calendar
   * a service account reaches is shared with it, never its primary, so that path changes nothing.
   */
  async #adoptPrimary(tenantId: string, calendars: readonly CalendarRecord[]): Promise<void> {
    const primary = calendars.find((calendar) => calendar.primary && calendar.enabled);
    if (primary === undefined) {
      return;
    }
    const keyIds = await this.#keys.adoptDefaultCalendar(tenantId, primary.id);
    if (keyIds.length > 0) {
      this.#log.info({ tenantId, calendarId: primary.id, keys: keyIds.length }, 'default calendar set');
    }
  }
}
