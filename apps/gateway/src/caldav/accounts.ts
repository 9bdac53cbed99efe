/**
 * CalDAV accounts in the gateway: their sealed credentials (`{username, password, url,
 * principalUrl}`), one CaldavCalendarProvider per connection and the mirror's sync sources. A
 * 401 from the server marks the connection `needs_reauth` (the password changed or was revoked).
 */
import { CalgateError, isCalgateError } from '@calgate/core';
import {
  CALENDAR_EVENT_FORMAT,
  CaldavCalendarProvider,
  CaldavClient,
  type CaldavClientOptions,
  caldavSyncSource,
} from '@calgate/providers';
import type { ConnectionRepository, Database } from '@calgate/store';
import type { Logger } from 'pino';
import type { ConnectionSources } from '../mirror/sources.ts';

/** What a CalDAV connection keeps sealed. */
export interface CaldavSecret {
  username: string;
  password: string;
  /** The URL the account was connected with (discovery starts there again on reconnect). */
  url: string;
  principalUrl?: string;
}

export const NEEDS_REAUTH_DETAIL =
  'The CalDAV server refused the stored username and password; run calgate connect caldav again with the current password.';

/**
 * A client that reports a refused password once per connection; when the account was reconnected
 * meanwhile (from the CLI or another gateway), the request is sent again once with the new one.
 */
class ReportingClient extends CaldavClient {
  readonly #onRefused: () => Promise<CaldavClient | undefined>;

  constructor(options: CaldavClientOptions, onRefused: () => Promise<CaldavClient | undefined>) {
    super(options);
    this.#onRefused = onRefused;
  }

  override async request(...args: Parameters<CaldavClient['request']>): ReturnType<CaldavClient['request']> {
    try {
      return await super.request(...args);
    } catch (error) {
      if (isCalgateError(error) && error.code === 'needs_reauth') {
        const renewed = await this.#onRefused();
        if (renewed !== undefined) {
          return renewed.request(...args);
        }
      }
      throw error;
    }
  }
}

export function parseCaldavSecret(text: string | null): CaldavSecret {
  const value = text === null ? null : (JSON.parse(text) as Partial<CaldavSecret>);
  if (value === null || typeof value.username !== 'string' || typeof value.password !== 'string') {
    throw new CalgateError('needs_reauth', 'This CalDAV account has no stored password; connect it again.');
  }
  return value as CaldavSecret;
}

export class CaldavAccounts {
  readonly #connections: ConnectionRepository;
  readonly #allowPrivate: boolean;
  readonly #log: Logger;
  readonly #invalidate: (tenantId: string) => void;
  readonly #providers = new Map<string, CaldavCalendarProvider>();

  /** `invalidate` is told the tenant of an account marked needs_reauth (its keys' cached lookups are stale). */
  constructor(
    connections: ConnectionRepository,
    allowPrivate: boolean,
    log: Logger,
    invalidate: (tenantId: string) => void,
  ) {
    this.#connections = connections;
    this.#allowPrivate = allowPrivate;
    this.#log = log;
    this.#invalidate = invalidate;
  }

  /** A client signed in as the connection's account. */
  async client(tenantId: string, connectionId: string): Promise<CaldavClient> {
    const secret = parseCaldavSecret(await this.#connections.readCredentials(tenantId, connectionId));
    return new ReportingClient(
      {
        credentials: { username: secret.username, password: secret.password },
        policy: { allowPrivate: this.#allowPrivate },
      },
      async () => {
        this.forget(connectionId);
        const reconnected = await this.#refused(tenantId, connectionId, secret).catch((error: unknown) => {
          this.#log.error({ err: error, connectionId }, 'could not mark needs_reauth');
          return false;
        });
        return reconnected ? this.client(tenantId, connectionId) : undefined;
      },
    );
  }

  /**
   * The server refused `used`: the account needs reconnecting, unless it was reconnected (with
   * another password) meanwhile, when it answers true and the new one is used.
   */
  async #refused(tenantId: string, connectionId: string, used: CaldavSecret): Promise<boolean> {
    const stored = parseCaldavSecret(await this.#connections.readCredentials(tenantId, connectionId));
    if (stored.username !== used.username || stored.password !== used.password) {
      return true;
    }
    this.#log.warn({ connectionId }, 'CalDAV account needs to be reconnected');
    await this.#connections.setStatus(tenantId, connectionId, 'needs_reauth', NEEDS_REAUTH_DETAIL);
    this.#invalidate(tenantId);
    return false;
  }

  forConnection(tenantId: string, connectionId: string, accountEmail?: string): CaldavCalendarProvider {
    let provider = this.#providers.get(connectionId);
    if (provider === undefined) {
      let client: Promise<CaldavClient> | undefined;
      provider = new CaldavCalendarProvider({
        client: () => {
          client ??= this.client(tenantId, connectionId).catch((error: unknown) => {
            client = undefined;
            throw error;
          });
          return client;
        },
        ...(accountEmail === undefined ? {} : { accountEmail }),
      });
      this.#providers.set(connectionId, provider);
    }
    return provider;
  }

  /** Drops a cached provider (reconnected with a new password, or removed). */
  forget(connectionId: string): void {
    this.#providers.delete(connectionId);
  }

  /** The mirror's sources for CalDAV connections (polled: CalDAV has no push Calgate can use). */
  syncSources(db: Database): ConnectionSources {
    return {
      provider: 'caldav',
      label: 'CalDAV',
      push: false,
      format: CALENDAR_EVENT_FORMAT,
      forConnection: async (connection) => {
        const account = await this.#connections.get(connection.tenantId, connection.connectionId);
        return caldavSyncSource(await this.client(connection.tenantId, connection.connectionId), {
          ...(account === null ? {} : { accountEmail: account.accountEmail }),
          zoneOf: async (calendar) => {
            const { rows } = await db.pool.query<{ time_zone: string }>(
              'SELECT time_zone FROM calendars WHERE id = $1 AND tenant_id = $2',
              [calendar.calendarId, calendar.tenantId],
            );
            return rows[0]?.time_zone ?? 'UTC';
          },
          exceptionsOf: async (calendar, seriesIds) => {
            const { rows } = await db.pool.query<{ event_id: string }>(
              'SELECT event_id FROM mirror_events WHERE calendar_id = $1 AND recurring_event_id = ANY($2)',
              [calendar.calendarId, [...seriesIds]],
            );
            return rows.map((row) => row.event_id);
          },
        });
      },
    };
  }
}
