/**
 * What a Google connection authenticates with: an OAuth client plus the account's tokens (kept
 * by the gateway, sealed at rest, behind CredentialStore), or a service account's key.
 */
import type { GoogleEndpoints } from './endpoints.ts';

export interface GoogleClientConfig {
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  endpoints: GoogleEndpoints;
}

export interface OAuthCredentials {
  refreshToken: string;
  accessToken?: string;
  /** When the access token expires, epoch milliseconds. */
  expiresAt?: number;
  scope?: string;
}

/** One connection's tokens. The provider calls it; the gateway implements it over the database. */
export interface CredentialStore {
  load(): Promise<OAuthCredentials>;
  /** Persists refreshed tokens (the gateway seals them). */
  save(credentials: OAuthCredentials): Promise<void>;
  /** Called when Google answers invalid_grant: the account must be connected again. */
  markNeedsReauth(reason: string): Promise<void>;
}

/** The fields of a Google service-account key file that signing needs. */
export interface ServiceAccountKey {
  client_email: string;
  private_key: string;
  private_key_id?: string;
}

export type GoogleAuth =
  | { kind: 'oauth'; client: GoogleClientConfig; credentials: CredentialStore }
  | { kind: 'service_account'; key: ServiceAccountKey; endpoints: GoogleEndpoints };
