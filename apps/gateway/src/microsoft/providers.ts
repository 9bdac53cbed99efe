/**
 * Outlook connections: one MicrosoftCalendarProvider per connection, over a Graph client whose
 * access tokens come from the connection's sealed refresh token (MicrosoftTokenSource stores
 * every rotated refresh token at once; a refused refresh marks the connection needs_reauth), and
 * whose requests share the mailbox's limits (four in flight, 10,000 per 10 minutes) with the
 * mirror's syncs, in this process and, through Redis, in every other (mailbox-limits.ts). The mirror's sync
 * source for Outlook calendars (calendarView/delta) is made here too.
 */
import { CalgateError } from '@calgate/core';
import {
  GraphClient,
  MailboxLimiters,
  type MailboxLimits,
  MICROSOFT_MIRROR_FORMAT,
  MicrosoftCalendarProvider,
  MicrosoftTokenSource,
  microsoftSyncSource,
} from '@calgate/providers';
import type { ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { Logger } from 'pino';
import type { ConnectionSources } from '../mirror/sources.ts';
import { type MicrosoftSetup, microsoftCredentials } from './connect.ts';

export { type MicrosoftSetup, microsoftSetup } from './connect.ts';

const NO_CLIENT =
  'Microsoft is not configured on this Calgate (MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are unset), so its Outlook calendars cannot be reached.';

const CLOCK = { now: Date.now, requestTimeoutMs: 20_000 };

export class MicrosoftProviders {
  readonly #setup: MicrosoftSetup;
  readonly #connections: ConnectionRepository;
  readonly #tenancy: Pick<TenancyRepository, 'getTenant'> | undefined;
  readonly #log: Logger;
  readonly #onNeedsReauth: (tenantId: string) => void;
  readonly #limiters: MailboxLimits;
  readonly #byConnection = new Map<string, MicrosoftCalendarProvider>();

  constructor(
    setup: MicrosoftSetup,
    connections: ConnectionRepository,
    log: Logger,
    /** Told the tenant of an account marked needs_reauth (its keys' cached lookups are stale). */
    onNeedsReauth: (tenantId: string) => void,
    /** Where a connection's workspace zone is read (the zone when mailboxSettings is refused). */
    tenancy?: Pick<TenancyRepository, 'getTenant'>,
    /** The mailboxes' Graph limits, shared with every other process through Redis when there is one. */
    limits: MailboxLimits = new MailboxLimiters(),
  ) {
    this.#limiters = limits;
    this.#setup = setup;
    this.#connections = connections;
    this.#log = log;
    this.#onNeedsReauth = onNeedsReauth;
    this.#tenancy = tenancy;
  }

  get setup(): MicrosoftSetup {
    return this.#setup;
  }

  /** A Graph client for the connection, sharing the mailbox's limiter. */
  client(tenantId: string, connectionId: string, onNeedsReauth: (reason: string) => void): GraphClient {
    const client = this.#setup.client;
    if (client === undefined) {
      throw new CalgateError('unavailable', NO_CLIENT);
    }
    const store = microsoftCredentials(this.#connections, tenantId, connectionId, onNeedsReauth);
    return new GraphClient({
      graphUrl: this.#setup.graphUrl,
      tokens: new MicrosoftTokenSource(client, store, CLOCK),
      limiter: this.#limiters.for(connectionId),
    });
  }

  forConnection(tenantId: string, connectionId: string, accountEmail?: string): MicrosoftCalendarProvider {
    const cached = this.#byConnection.get(connectionId);
    if (cached !== undefined) {
      return cached;
    }
    const tenancy = this.#tenancy;
    const provider = new MicrosoftCalendarProvider({
      client: this.client(tenantId, connectionId, (reason) => {
        this.#log.warn({ connectionId, reason }, 'Microsoft account needs to be reconnected');
        this.forget(connectionId);
        this.#onNeedsReauth(tenantId);
      }),
      ...(accountEmail === undefined ? {} : { account: accountEmail }),
      ...(tenancy === undefined
        ? {}
        : { fallbackZone: async () => (await tenancy.getTenant(tenantId))?.timeZone ?? undefined }),
    });
    this.#byConnection.set(connectionId, provider);
    return provider;
  }

  /** Drops a cached provider, e.g. after the account was reconnected or removed. */
  forget(connectionId: string): void {
    this.#byConnection.delete(connectionId);
  }

  /** The mirror's sync sources for Outlook calendars: calendarView/delta, and Graph subscriptions. */
  syncSources(options: { pageSize?: number } = {}): ConnectionSources {
    return {
      provider: 'microsoft',
      label: 'Microsoft 365',
      push: true,
      format: MICROSOFT_MIRROR_FORMAT,
      forConnection: async (connection) => {
        const email = (await this.#connections.get(connection.tenantId, connection.connectionId))
          ?.accountEmail;
        const client = this.client(connection.tenantId, connection.connectionId, (reason) => {
          this.#log.warn(
            { connectionId: connection.connectionId, reason },
            'Microsoft account needs to be reconnected',
          );
          this.forget(connection.connectionId);
          this.#onNeedsReauth(connection.tenantId);
        });
        return microsoftSyncSource(client, {
          ...(options.pageSize === undefined ? {} : { pageSize: options.pageSize }),
          ...(email === undefined ? {} : { account: email }),
        });
      },
    };
  }
}
