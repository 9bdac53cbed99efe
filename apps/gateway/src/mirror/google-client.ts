/**
 * A googleapis Calendar client authorised for one connection, for the mirror's sync jobs.
 * syncCalendar takes a raw client (it needs sync tokens, which the CalendarProvider contract does
 * not speak), so the job gets an access token the way the provider does: OAuth tokens from the
 * connection's sealed credentials (refreshed and stored back, invalid_grant marking the account
 * needs_reauth), a service account's from a signed JWT-bearer assertion.
 *
 * A token is fetched once per job and must last well past a sync's length; a 401 in the middle
 * ends the job, and pg-boss's retry starts it again with a fresh token.
 */
import { createPrivateKey } from 'node:crypto';
import { CalgateError } from '@calgate/core';
import {
  GoogleOAuth,
  type OAuthCredentials,
  resolveOAuthUrls,
  SERVICE_ACCOUNT_SCOPES,
  type ServiceAccountKey,
} from '@calgate/providers';
import type { ConnectionRepository } from '@calgate/store';
import { type calendar_v3, google } from 'googleapis';
import { SignJWT } from 'jose';
import { connectionCredentials, type GoogleSetup } from '../google/providers.ts';

/** A stored token is used only when it outlives a long sync by this much. */
const TOKEN_MARGIN_MS = 10 * 60_000;
const TOKEN_TIMEOUT_MS = 20_000;

export interface MirrorConnection {
  tenantId: string;
  connectionId: string;
  auth: 'oauth' | 'service_account';
}

export interface CalendarClients {
  /**
   * A Calendar client whose requests carry a valid access token of the connection; `refresh`
   * skips the stored OAuth token (Google refused it) and asks for a new one.
   */
  forConnection(connection: MirrorConnection, refresh?: boolean): Promise<calendar_v3.Calendar>;
}

/** Clients for mirror syncs from the gateway's Google setup and stored credentials. */
export function calendarClients(
  setup: GoogleSetup,
  connections: ConnectionRepository,
  onNeedsReauth: (connectionId: string, reason: string) => void,
): CalendarClients {
  const rootUrl = `${setup.endpoints.apiRootUrl.replace(/\/+$/, '')}/`;
  return {
    async forConnection(connection, refresh = false) {
      const token =
        connection.auth === 'service_account'
          ? await serviceAccountToken(setup)
          : await oauthToken(setup, connections, connection, onNeedsReauth, refresh);
      const auth = new google.auth.OAuth2();
      auth.setCredentials({ access_token: token });
      return google.calendar({ version: 'v3', rootUrl, auth, retry: false });
    },
  };
}

async function oauthToken(
  setup: GoogleSetup,
  connections: ConnectionRepository,
  connection: MirrorConnection,
  onNeedsReauth: (connectionId: string, reason: string) => void,
  refresh: boolean,
): Promise<string> {
  const client = setup.client;
  if (client === undefined) {
    throw new CalgateError(
      'unavailable',
      'Google is not configured on this Calgate (GOOGLE_CLIENT_ID and GOOGLE_CLIENT_SECRET are unset).',
    );
  }
  const { tenantId, connectionId } = connection;
  const store = connectionCredentials(connections, tenantId, connectionId, (reason) =>
    onNeedsReauth(connectionId, reason),
  );
  const stored: OAuthCredentials = await store.load();
  if (!refresh && stored.accessToken && (stored.expiresAt ?? 0) - TOKEN_MARGIN_MS > Date.now()) {
    return stored.accessToken;
  }
  try {
    const fresh = await new GoogleOAuth(client, { timeoutMs: TOKEN_TIMEOUT_MS }).refresh(stored.refreshToken);
    await store.save({
      ...stored,
      accessToken: fresh.accessToken,
      expiresAt: fresh.expiresAt,
      ...(fresh.scope === undefined ? {} : { scope: fresh.scope }),
    });
    return fresh.accessToken;
  } catch (error) {
    if (error instanceof CalgateError && error.code === 'needs_reauth') {
      await store.markNeedsReauth('Google refused a token refresh for the mirror sync');
    }
    throw error;
  }
}

/** A service-account token: one RS256 JWT-bearer exchange (tokens last an hour). */
async function serviceAccountToken(setup: GoogleSetup): Promise<string> {
  const key: ServiceAccountKey | undefined = setup.serviceAccount;
  if (key === undefined) {
    throw new CalgateError(
      'unavailable',
      'No Google service account is configured on this Calgate (GOOGLE_SERVICE_ACCOUNT_KEY_FILE is unset).',
    );
  }
  const tokenUrl = resolveOAuthUrls(setup.endpoints).token;
  const iat = Math.floor(Date.now() / 1000);
  const assertion = await new SignJWT({ scope: SERVICE_ACCOUNT_SCOPES.join(' ') })
    .setProtectedHeader({
      alg: 'RS256',
      typ: 'JWT',
      ...(key.private_key_id ? { kid: key.private_key_id } : {}),
    })
    .setIssuer(key.client_email)
    .setAudience(tokenUrl)
    .setIssuedAt(iat)
    .setExpirationTime(iat + 3600)
    .sign(createPrivateKey(key.private_key));
  let response: Response;
  try {
    response = await fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams({
        grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer',
        assertion,
      }).toString(),
      signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
    });
  } catch (error) {
    throw new CalgateError('upstream_unavailable', "Google's token endpoint could not be reached.", {
      retry: true,
      context: { cause: error instanceof Error ? error.name : 'unknown' },
    });
  }
  const body = (await response.json().catch(() => ({}))) as { access_token?: unknown };
  if (!response.ok || typeof body.access_token !== 'string') {
    const transient = response.status >= 500 || response.status === 429;
    throw new CalgateError(
      transient ? 'upstream_unavailable' : 'permission_denied',
      `Google's token endpoint refused the service account (HTTP ${response.status}).`,
      { retry: transient, context: { status: response.status } },
    );
  }
  return body.access_token;
}
