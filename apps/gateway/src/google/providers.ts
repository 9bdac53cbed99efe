import { CalgateError } from '@calgate/core';
import {
  type CredentialStore,
  type GoogleAuth,
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
  /** Whose account it is, for the reconnect message. */
  provider = 'Google',
): CredentialStore {
  return {
    async load(): Promise<OAuthCredentials> {
      const text = await connections.readCredentials(tenantId, connectionId);
      if (text === null) {
        throw new CalgateError(
          'needs_reauth',
          `This ${provider} account has no stored credentials; reconnect it.`,
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

const NO_CLIENT =
  'Google is not configured on this Calgate (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are unset).';
const NO_SERVICE_ACCOUNT =
  'No Google service account is configured on this Calgate (GOOGLE_SERVICE_ACCOUNT_KEY_FILE is unset).';

/** The service account's sign-in (one for every calendar shared with it). */
export function serviceAccountAuth(setup: GoogleSetup): GoogleAuth {
  if (setup.serviceAccount === undefined) {
    throw new CalgateError('unavailable', NO_SERVICE_ACCOUNT);
  }
  return { kind: 'service_account', key: setup.serviceAccount, endpoints: setup.endpoints };
}

/**
 * How one connection signs in to Google: the OAuth client with the connection's stored tokens,
 * or the service account's key. The providers and the mirror's sync jobs (mirror/google-client.ts)
 * both build their token sources from it, so refreshes, storing back and needs_reauth are one code.
 */
export function googleAuth(
  setup: GoogleSetup,
  connections: ConnectionRepository,
  connection: { tenantId: string; connectionId: string; auth: 'oauth' | 'service_account' | 'password' },
  onNeedsReauth: (reason: string) => void,
): GoogleAuth {
  if (connection.auth === 'service_account') {
    return serviceAccountAuth(setup);
  }
  if (setup.client === undefined) {
    throw new CalgateError('unavailable', NO_CLIENT);
  }
  return {
    kind: 'oauth',
    client: setup.client,
    credentials: connectionCredentials(
      connections,
      connection.tenantId,
      connection.connectionId,
      onNeedsReauth,
    ),
  };
}

/**
 * One GoogleCalendarProvider per OAuth connection (so token refreshes are single-flight per
 * account) and one for the service account, built on first use.
 */
export class GoogleProviders {
  readonly #setup: GoogleSetup;
  readonly #connections: ConnectionRepository;
  readonly #onNeedsReauth: (tenantId: string) => void;
  readonly #log: Logger;
  readonly #byConnection = new Map<string, GoogleCalendarProvider>();
  #serviceAccount: GoogleCalendarProvider | undefined;

  /** `onNeedsReauth` is told the tenant of an account marked needs_reauth (its keys' cached lookups are stale). */
  constructor(
    setup: GoogleSetup,
    connections: ConnectionRepository,
    log: Logger,
    onNeedsReauth: (tenantId: string) => void,
  ) {
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
    auth: 'oauth' | 'service_account' | 'none' | 'password',
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
    const provider = new GoogleCalendarProvider({
      ...(accountEmail === undefined ? {} : { account: accountEmail }),
      auth: googleAuth(
        this.#setup,
        this.#connections,
        { tenantId, connectionId, auth: 'oauth' },
        (reason) => {
          this.#log.warn({ connectionId, reason }, 'Google account needs to be reconnected');
          this.forget(connectionId);
          this.#onNeedsReauth(tenantId);
        },
      ),
    });
    this.#byConnection.set(connectionId, provider);
    return provider;
  }

  serviceAccount(): GoogleCalendarProvider {
    this.#serviceAccount ??= new GoogleCalendarProvider({ auth: serviceAccountAuth(this.#setup) });
    return this.#serviceAccount;
  }

  /** Drops a cached provider, e.g. after the account was reconnected or removed. */
  forget(connectionId: string): void {
    this.#byConnection.delete(connectionId);
  }
}
