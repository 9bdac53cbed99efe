/**
 * Connecting and removing Microsoft 365 and Outlook.com accounts, shared by the dashboard's OAuth
 * callback and `calgate connect microsoft`: the account's tokens (a rotated refresh token is
 * sealed as soon as the connection it belongs to is known), `/me` for whose account it is,
 * `/me/calendars` (every page) for its calendars, and then the same recording and grants as a
 * Google account (CalendarRecorder), so both answer one shape.
 */
import { CalgateError } from '@calgate/core';
import {
  accountEmailOf,
  type CredentialStore,
  fromGraphCalendar,
  type GraphCalendar,
  GraphClient,
  type GraphMailboxSettings,
  type GraphUser,
  MailboxLimiter,
  type MicrosoftClientConfig,
  MicrosoftTokenSource,
  mailboxZoneOf,
  type OAuthCredentials,
  parseScopes,
} from '@calgate/providers';
import type { ApiKeyRepository, ConnectionRepository, TenancyRepository } from '@calgate/store';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { CalendarRecorder, type ConnectResult, type GrantChoice } from '../connections/record.ts';
import { connectionCredentials } from '../google/providers.ts';
import { connectionWritable } from '../google/service.ts';
import type { ConnectionMirror } from '../mirror/lifecycle.ts';
import { MicrosoftOAuth } from './authorize.ts';

export interface MicrosoftSetup {
  /** Present when MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are configured. */
  client: MicrosoftClientConfig | undefined;
  /** MICROSOFT_GRAPH_URL. */
  graphUrl: string;
}

export function microsoftSetup(config: Pick<Config, 'microsoft'>): MicrosoftSetup {
  const { clientId, clientSecret, tenant, loginUrl, graphUrl } = config.microsoft;
  return {
    client:
      clientId === undefined || clientSecret === undefined
        ? undefined
        : { clientId, clientSecret, tenant, loginUrl },
    graphUrl,
  };
}

/** Why "Connect Microsoft" is off, and what turns it on. */
export const MICROSOFT_NOT_CONFIGURED =
  'Connecting Microsoft accounts is turned off on this Calgate: MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET are not set.';

/** Where the Microsoft settings are explained (docs/ ships with every install). */
export const MICROSOFT_SETUP_DOCS = 'docs/accounts/microsoft.md (“Microsoft 365 and Outlook accounts”)';

/** What to do about it, naming the redirect URI the Azure app registration needs. */
export function microsoftSetupFix(publicUrl: string | undefined): string {
  return `Register an app in Microsoft Entra ID (Azure portal → App registrations) with the web redirect URI ${(publicUrl ?? 'PUBLIC_URL').replace(/\/+$/, '')}/oauth/microsoft/callback, set MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET and restart Calgate. See ${MICROSOFT_SETUP_DOCS}.`;
}

/** A Microsoft connection's stored tokens: opened and sealed through the repository. */
export function microsoftCredentials(
  connections: ConnectionRepository,
  tenantId: string,
  connectionId: string,
  onNeedsReauth: (reason: string) => void = () => {},
): CredentialStore {
  return connectionCredentials(connections, tenantId, connectionId, onNeedsReauth, 'Microsoft');
}

const TOKEN_TIMEOUT_MS = 15_000;

export class MicrosoftConnections {
  readonly #setup: MicrosoftSetup;
  readonly #connections: ConnectionRepository;
  readonly #log: Logger;
  readonly #changed: (tenantId: string) => void;
  readonly #mirror: ConnectionMirror | undefined;
  readonly #calendars: CalendarRecorder;

  /**
   * With `mirror`, calendars found on a connection get their mirror's sync queued, and
   * disconnecting stops the account's change notifications and deletes its mirror.
   */
  constructor(
    setup: MicrosoftSetup,
    connections: ConnectionRepository,
    tenancy: TenancyRepository,
    log: Logger,
    onChange: (tenantId: string) => void,
    keys: ApiKeyRepository,
    mirror?: ConnectionMirror,
  ) {
    this.#setup = setup;
    this.#connections = connections;
    this.#log = log;
    this.#changed = onChange;
    this.#mirror = mirror;
    this.#calendars = new CalendarRecorder({ tenancy, keys, log, onChange, mirror });
  }

  /** Whether an app registration is configured (MICROSOFT_CLIENT_ID and MICROSOFT_CLIENT_SECRET). */
  configured(): boolean {
    return this.#setup.client !== undefined;
  }

  #client(): MicrosoftClientConfig {
    const client = this.#setup.client;
    if (client === undefined) {
      throw new CalgateError('unavailable', MICROSOFT_NOT_CONFIGURED);
    }
    return client;
  }

  oauth(): MicrosoftOAuth {
    return new MicrosoftOAuth(this.#client());
  }

  /**
   * Connects (or reconnects) the account the tokens belong to. With only a refresh token (the
   * CLI), it is refreshed first; Microsoft answers a new one and retires the old, so the new one
   * is what gets sealed. The connection is created or brought back to active, its calendars
   * recorded, and the new ones granted as `choice` says.
   */
  async connectOAuth(
    tenantId: string,
    tokens: OAuthCredentials,
    choice: GrantChoice,
    /** Reconnecting: the account it must be (Microsoft lets the person pick another one). */
    expectedAccount?: string,
  ): Promise<ConnectResult> {
    const client = this.#client();
    let latest: OAuthCredentials = { ...tokens };
    let stored: string | undefined;
    // Rotated tokens are kept in memory until the connection is known, then sealed at once.
    const store: CredentialStore = {
      load: async () => latest,
      save: async (credentials) => {
        latest = credentials;
        if (stored !== undefined) {
          await this.#connections.storeCredentials(tenantId, stored, JSON.stringify(credentials));
        }
      },
      // Connecting fails with Microsoft's answer; a connection already stored is left as it was.
      markNeedsReauth: async () => {},
    };
    const graph = new GraphClient({
      graphUrl: this.#setup.graphUrl,
      tokens: new MicrosoftTokenSource(client, store, {
        now: Date.now,
        requestTimeoutMs: TOKEN_TIMEOUT_MS,
      }),
      limiter: new MailboxLimiter(),
    });
    const me = await graph.request<GraphUser>({ path: '/me', operation: 'me.get' });
    const email = accountEmailOf(me ?? {})?.toLowerCase();
    if (email === undefined) {
      throw new CalgateError(
        'upstream_unavailable',
        'Microsoft Graph did not say whose account this is (/me has neither mail nor userPrincipalName).',
      );
    }
    if (expectedAccount !== undefined && email !== expectedAccount.toLowerCase()) {
      throw new CalgateError(
        'invalid_argument',
        `Microsoft signed in ${email}, but reconnecting ${expectedAccount} was asked; nothing changed. Reconnect again and choose ${expectedAccount} on Microsoft's page.`,
      );
    }
    const reconnected = (await this.#connections.list(tenantId)).some(
      (connection) => connection.provider === 'microsoft' && connection.accountEmail === email,
    );
    const scopes = parseScopes(latest.scope);
    const connection = await this.#connections.upsert(tenantId, {
      provider: 'microsoft',
      accountEmail: email,
      auth: 'oauth',
      ...(scopes.length === 0 ? {} : { scopes }),
    });
    stored = connection.id;
    await this.#connections.storeCredentials(tenantId, connection.id, JSON.stringify(latest));
    const zone = await this.#mailboxZone(graph);
    const listed = await graph.all<GraphCalendar>({ path: '/me/calendars', operation: 'calendars.list' });
    const writable = connectionWritable(connection);
    const calendars = await this.#calendars.record(
      tenantId,
      connection.id,
      listed.filter((calendar) => calendar.id).map((calendar) => fromGraphCalendar(calendar, zone, email)),
      choice,
      writable,
    );
    this.#log.info(
      { tenantId, connectionId: connection.id, calendars: calendars.length, reconnected, writable },
      'Microsoft account connected',
    );
    return {
      connectionId: connection.id,
      accountEmail: connection.accountEmail,
      reconnected,
      scopes: connection.scopes,
      writable,
      calendars,
    };
  }

  /**
   * The mailbox's zone (calendars carry none). Reading it needs MailboxSettings.Read, which
   * Calgate does not ask for (least privilege): refused, the calendars are recorded in UTC.
   */
  async #mailboxZone(graph: GraphClient): Promise<string> {
    try {
      return mailboxZoneOf(
        await graph.request<GraphMailboxSettings>({
          path: '/me/mailboxSettings',
          operation: 'mailboxSettings.get',
        }),
      );
    } catch (error) {
      if (error instanceof CalgateError && error.code === 'permission_denied') {
        return 'UTC';
      }
      throw error;
    }
  }

  /**
   * Deletes the connection with its credentials, calendars and grants (and its mirror). The
   * identity platform has no endpoint that revokes one app's refresh token, so nothing is
   * revoked at Microsoft: the sealed token is deleted, and the person can remove Calgate's
   * access under "Apps and services" of their Microsoft account or My Apps.
   */
  async disconnect(tenantId: string, connectionId: string): Promise<{ revoked: boolean }> {
    const connection = await this.#connections.get(tenantId, connectionId);
    if (connection === null || connection.provider !== 'microsoft') {
      throw new CalgateError('not_found', `No Microsoft connection ${connectionId} in this tenant.`);
    }
    await this.#mirror?.disconnecting(tenantId, connectionId).catch((error: unknown) => {
      this.#log.warn({ err: error, connectionId }, 'mirror clean-up failed; removing the connection anyway');
    });
    await this.#connections.delete(tenantId, connectionId);
    this.#changed(tenantId);
    this.#log.info({ tenantId, connectionId }, 'Microsoft account disconnected');
    return { revoked: false };
  }
}
