/**
 * Subscribed iCalendar feeds (provider `ics`): `calgate connect ics` and the dashboard's
 * "Subscribe to a calendar feed" fetch the feed once before anything is saved, then keep one
 * read-only calendar per subscription. The feed's address is sealed like a password (many are
 * secret addresses), so the connection's auth is `password`; the subscription's name is its
 * account name, and subscribing again under the same name replaces that subscription's address.
 * The mirror keeps the calendar (icsSyncSource: conditional requests, refreshed every
 * ICS_REFRESH_INTERVAL or the feed's longer REFRESH-INTERVAL), and IcsCalendarProvider answers
 * what the mirror sends upstream.
 */
import { CalgateError, isCalgateError, isValidTimeZone } from '@calgate/core';
import {
  CALENDAR_EVENT_FORMAT,
  feedEvents,
  feedUrl,
  fetchFeed,
  IcsCalendarProvider,
  icsSyncSource,
} from '@calgate/providers';
import type { ApiKeyRepository, ConnectionRepository, Database, TenancyRepository } from '@calgate/store';
import { MirrorRepository } from '@calgate/store';
import type { ConnectResult, GrantChoice } from '../connections/record.ts';
import type { GoogleConnections } from '../google/service.ts';
import type { ConnectionSources } from '../mirror/sources.ts';

/** What an `ics` connection keeps sealed. */
export interface IcsSecret {
  url: string;
}

/** The one calendar of a subscription, by its connection. */
export const FEED_EXTERNAL_ID = 'feed';
const NAME_MAX = 200;

export function parseIcsSecret(text: string | null): IcsSecret {
  const value = text === null ? null : (JSON.parse(text) as Partial<IcsSecret>);
  if (value === null || typeof value.url !== 'string') {
    throw new CalgateError(
      'not_found',
      'This subscription has no stored feed address; subscribe to the feed again.',
    );
  }
  return { url: value.url };
}

export interface IcsSubscribeDeps {
  connections: ConnectionRepository;
  tenancy: TenancyRepository;
  /** Records and grants the calendar (shared with every connect). */
  google: GoogleConnections;
  /** OUTBOUND_ALLOW_PRIVATE (alias TARGETS_ALLOW_PRIVATE). */
  allowPrivate: boolean;
  /** Given, a subscription whose address changed has its mirror read again from the start. */
  db?: Database;
  /** Given, keys named in the grant choice must be live keys of the tenant. */
  keys?: Pick<ApiKeyRepository, 'list'>;
  /** Drops the cached provider of a resubscribed feed. */
  forget?: (connectionId: string) => void;
}

export interface IcsSubscription {
  url: string;
  name: string;
}

/** ConnectResult plus how many events the feed holds now. */
export type IcsConnectResult = ConnectResult & { events: number };

/**
 * Fetches the feed once (refusing what is no calendar, with one sentence), then saves the
 * subscription and grants its calendar as `choice` says (read at most). Subscribing again under
 * the same name keeps the calendar, its id and grants; another address is read from the start.
 */
export async function subscribeIcs(
  deps: IcsSubscribeDeps,
  tenantId: string,
  subscription: IcsSubscription,
  choice: GrantChoice,
): Promise<IcsConnectResult> {
  const name = subscription.name.trim();
  if (name === '' || name.length > NAME_MAX) {
    throw new CalgateError(
      'invalid_argument',
      `Give the subscription a name of 1 to ${NAME_MAX} characters (it is the calendar's name in Calgate).`,
    );
  }
  if (choice.access === 'write') {
    throw new CalgateError(
      'invalid_argument',
      'A subscribed feed is read-only: grant read (or none), never write.',
    );
  }
  if (deps.keys !== undefined && choice.keyIds.length > 0) {
    const live = new Set(
      (await deps.keys.list(tenantId)).filter((key) => key.revokedAt === null).map((key) => key.id),
    );
    const unknown = choice.keyIds.filter((id) => !live.has(id));
    if (unknown.length > 0) {
      throw new CalgateError(
        'invalid_argument',
        `${unknown.join(', ')} ${unknown.length === 1 ? 'is not a live API key' : 'are not live API keys'} of this workspace; name keys from calgate key list (or the API keys page).`,
      );
    }
  }
  const url = subscription.url.trim();
  const origin = feedUrl(url).origin;
  const fetched = await fetchFeed(url, { policy: { allowPrivate: deps.allowPrivate } });
  if (fetched.status !== 'fetched') {
    throw new CalgateError('upstream_unavailable', `The feed at ${origin} answered 304 to a first request.`);
  }
  const fallbackZone = (await deps.tenancy.getTenant(tenantId))?.timeZone ?? 'UTC';
  const declaredZone = /^X-WR-TIMEZONE:(.+)$/im.exec(fetched.text)?.[1]?.trim();
  const timeZone = declaredZone !== undefined && isValidTimeZone(declaredZone) ? declaredZone : fallbackZone;
  let events: number;
  try {
    if (!/^\uFEFF?\s*BEGIN:VCALENDAR/i.test(fetched.text)) {
      throw new CalgateError('invalid_argument', 'no VCALENDAR');
    }
    events = feedEvents(fetched.text, timeZone).events.length;
  } catch (error) {
    if (!isCalgateError(error)) {
      throw error;
    }
    throw new CalgateError(
      'invalid_argument',
      `The address at ${origin} answered, but not with an iCalendar feed (no VCALENDAR could be read); give the address of an .ics or webcal feed.`,
    );
  }
  const before = await deps.connections.list(tenantId);
  const existing = before.find(
    (connection) => connection.provider === 'ics' && connection.accountEmail === name,
  );
  const previous =
    existing === undefined
      ? undefined
      : await deps.connections
          .readCredentials(tenantId, existing.id)
          .then(parseIcsSecret)
          .catch(() => undefined);
  const connection = await deps.connections.upsert(tenantId, {
    provider: 'ics',
    accountEmail: name,
    auth: 'password',
  });
  await deps.connections.storeCredentials(
    tenantId,
    connection.id,
    JSON.stringify({ url } satisfies IcsSecret),
  );
  deps.forget?.(connection.id);
  const calendars = await deps.google.recordCalendars(
    tenantId,
    connection.id,
    [{ externalId: FEED_EXTERNAL_ID, summary: name, timeZone, primary: false, accessRole: 'reader' }],
    choice,
    false,
  );
  if (previous !== undefined && previous.url !== url && deps.db !== undefined) {
    // Another address: the old one's validators and rows mean nothing for it. Forgotten, the
    // calendar is read from the start, as the planner does for a calendar never synced.
    await new MirrorRepository(deps.db).deleteConnection(tenantId, connection.id);
  }
  return {
    connectionId: connection.id,
    accountEmail: name,
    reconnected: existing !== undefined,
    scopes: [],
    writable: false,
    calendars,
    events,
  };
}

/** The gateway's subscriptions: one provider per connection and the mirror's sync sources. */
export class IcsSubscriptions {
  readonly #connections: ConnectionRepository;
  readonly #allowPrivate: boolean;
  readonly #refreshMs: number;
  readonly #providers = new Map<string, IcsCalendarProvider>();

  constructor(connections: ConnectionRepository, allowPrivate: boolean, refreshMs: number) {
    this.#connections = connections;
    this.#allowPrivate = allowPrivate;
    this.#refreshMs = refreshMs;
  }

  async #url(tenantId: string, connectionId: string): Promise<string> {
    return parseIcsSecret(await this.#connections.readCredentials(tenantId, connectionId)).url;
  }

  forConnection(tenantId: string, connectionId: string): IcsCalendarProvider {
    let provider = this.#providers.get(connectionId);
    if (provider === undefined) {
      provider = new IcsCalendarProvider({
        url: () => this.#url(tenantId, connectionId),
        policy: { allowPrivate: this.#allowPrivate },
        reuseMs: Math.min(60_000, this.#refreshMs),
      });
      this.#providers.set(connectionId, provider);
    }
    return provider;
  }

  /** Drops a cached provider (resubscribed with another address, or removed). */
  forget(connectionId: string): void {
    this.#providers.delete(connectionId);
  }

  /** The mirror's sources for subscriptions: polled when their cursor says the feed is due. */
  syncSources(db: Database): ConnectionSources {
    return {
      provider: 'ics',
      label: 'the feed',
      push: false,
      format: CALENDAR_EVENT_FORMAT,
      forConnection: async (connection) => {
        const { rows } = await db.pool.query<{ time_zone: string }>(
          'SELECT time_zone FROM calendars WHERE connection_id = $1 AND tenant_id = $2 ORDER BY id LIMIT 1',
          [connection.connectionId, connection.tenantId],
        );
        return icsSyncSource({
          url: await this.#url(connection.tenantId, connection.connectionId),
          policy: { allowPrivate: this.#allowPrivate },
          timeZone: rows[0]?.time_zone ?? 'UTC',
          floorMs: this.#refreshMs,
          intervalMs: this.#refreshMs,
        });
      },
    };
  }
}
