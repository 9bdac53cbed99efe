import { CalgateError } from '@calgate/core';
import {
  type CredentialStore,
  GoogleCalendarProvider,
  type GoogleClientConfig,
  type GoogleEndpoints,
  type OAuthCredentials,
  type ServiceAccountKey,
} from '@calgate/providers';
import type { ConnectionRepository } from '@calgate/store';
import type { Logger } from 'pino';

export interface GoogleSetup {
  /** Present when GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are configured. */
  client: GoogleClientConfig | undefined;
  /** Present when a service-account key is configured. */
  serviceAccount: ServiceAccountKey | undefined;
  endpoints: GoogleEndpoints;
}

/** Stored OAuth credentials of one connection: opened and sealed through the repository. */
export function connectionCredentials(
  connections: ConnectionRepository,
  tenantId: string,
  connectionId: string,
  onNeedsReauth: (reason: string) => void,
): CredentialStore {
  return {
    async load(): Promise<OAuthCredentials> {
      const text = await connections.readCredentials(tenantId, connectionId);
      if (text === null) {
        throw new CalgateError(
          'needs_reauth',
          'This Google account has no stored credentials; reconnect it.',
          {
            context: { connectionId },
          },
        );
      }
      return JSON.parse(text) as OAuthCredentials;
    },
    async save(credentials: OAuthCredentials): Promise<void> {
      await connections.storeCredentials(tenantId, connectionId, JSON.stringify(credentials));
    },
    async markNeedsReauth(reason: string): Promise<void> {
      await connections.setStatus(tenantId, connectionId, 'needs_reauth', reason);
      onNeedsReauth(reason);
    },
  };
}

/**
 * One GoogleCalendarProvider per OAuth connection (so token refreshes are single-flight per
 * account) and one for the service account, built on first use.
 */
export class GoogleProviders {
  readonly #setup: GoogleSetup;
  readonly #connections: ConnectionRepository;
  readonly #onNeedsReauth: (reason: string) => void;
  readonly #log: Logger;
  readonly #byConnection = new Map<string, GoogleCalendarProvider>();
  #serviceAccount: GoogleCalendarProvider | undefined;

  constructor(setup: GoogleSetup, connections: ConnectionRepository, log: Logger, onNeedsReauth: () => void) {
    this.#setup = setup;
    this.#connections = connections;
    this.#log = log;
    this.#onNeedsReauth = onNeedsReauth;
  }

  get setup(): GoogleSetup {
    return this.#setup;
  }

  forConnection(
    tenantId: string,
    connectionId: string,
    auth: 'oauth' | 'service_account' | 'none',
    /** The account's email, named in errors such as a write through a read-only connection. */
    accountEmail?: string,
  ): GoogleCalendarProvider {
    if (auth === 'service_account') {
      return this.serviceAccount();
    }
    const cached = this.#byConnection.get(connectionId);
    if (cached !== undefined) {
      return cached;
    }
    const client = this.#setup.client;
    if (client === undefined) {
      throw new CalgateError(
        'unavailable',
        'Google is not configured on this Calgate (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are unset).',
      );
    }
    const provider = new GoogleCalendarProvider({
      ...(accountEmail === undefined ? {} : { account: accountEmail }),
      auth: {
        kind: 'oauth',
        client,
        credentials: connectionCredentials(this.#connections, tenantId, connectionId, (reason) => {
          this.#log.warn({ connectionId, reason }, 'Google account needs to be reconnected');
          this.forget(connectionId);
          this.#onNeedsReauth(reason);
        }),
      },
    });
    this.#byConnection.set(connectionId, provider);
    return provider;
  }

  serviceAccount(): GoogleCalendarProvider {
    const key = this.#setup.serviceAccount;
    if (key === undefined) {
      throw new CalgateError(
        'unavailable',
        'No Google service account is configured on this Calgate (GOOGLE_SERVICE_ACCOUNT_KEY_FILE is unset).',
      );
    }
    this.#serviceAccount ??= new GoogleCalendarProvider({
      auth: { kind: 'service_account', key, endpoints: this.#setup.endpoints },
    });
    return this.#serviceAccount;
  }

  /** Drops a cached provider, e.g. after the account was reconnected or removed. */
  forget(connectionId: string): void {
    this.#byConnection.delete(connectionId);
  }
}
