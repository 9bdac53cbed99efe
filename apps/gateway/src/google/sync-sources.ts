/**
 * Google's sync sources for the mirror (mirror/sources.ts): googleSyncSource over a googleapis
 * Calendar client authorised for one connection, for the sync jobs and the push channels. The
 * source needs a raw client (sync tokens and watch channels are not in the CalendarProvider
 * contract), so its access token comes from the same token sources as the provider
 * (`accessTokenSource` over `googleAuth`): OAuth tokens from the connection's sealed credentials,
 * refreshed and stored back, a refused refresh marking the account needs_reauth; a service
 * account's from a signed JWT-bearer assertion.
 *
 * A token is fetched once per job. A 401 in the middle of a sync is answered by one more source
 * with `refresh` (syncConnectionCalendar), which resumes from the stored page token.
 */
import {
  type AccessTokenSource,
  accessTokenSource,
  GOOGLE_MIRROR_FORMAT,
  googleSyncSource,
  type MirrorConnection,
  type TokenClock,
} from '@calgate/providers';
import type { ConnectionRepository } from '@calgate/store';
import { auth, calendar as googleCalendar } from '@googleapis/calendar';
import type { ConnectionSources } from '../mirror/sources.ts';
import { type GoogleSetup, googleAuth } from './providers.ts';

const CLOCK: TokenClock = { now: Date.now, requestTimeoutMs: 20_000 };

/** Sync sources for Google connections from the gateway's Google setup and stored credentials. */
export function googleSyncSources(
  setup: GoogleSetup,
  connections: ConnectionRepository,
  onNeedsReauth: (connection: MirrorConnection, reason: string) => void,
  options: { pageSize?: number } = {},
): ConnectionSources {
  const rootUrl = `${setup.endpoints.apiRootUrl.replace(/\/+$/, '')}/`;
  // The service account's token is the same for every calendar shared with it: one source, so
  // concurrent syncs sign one assertion an hour. OAuth sources are made per job instead: each
  // loads the connection's credentials afresh, so a reconnect in a gateway is seen at once.
  let serviceAccount: AccessTokenSource | undefined;
  const sourceFor = (connection: MirrorConnection): AccessTokenSource => {
    const auth = googleAuth(setup, connections, connection, (reason) => onNeedsReauth(connection, reason));
    if (auth.kind === 'service_account') {
      serviceAccount ??= accessTokenSource(auth, CLOCK);
      return serviceAccount;
    }
    return accessTokenSource(auth, CLOCK);
  };
  return {
    provider: 'google',
    label: 'Google',
    push: true,
    format: GOOGLE_MIRROR_FORMAT,
    async forConnection(connection, refresh = false) {
      const source = sourceFor(connection);
      const signal = AbortSignal.timeout(CLOCK.requestTimeoutMs * 2);
      let token = await source.token(signal);
      if (refresh) {
        source.invalidate(token);
        token = await source.token(signal);
      }
      const client = new auth.OAuth2();
      client.setCredentials({ access_token: token });
      return googleSyncSource(
        googleCalendar({ version: 'v3', rootUrl, auth: client, retry: false }),
        options.pageSize === undefined ? {} : { pageSize: options.pageSize },
      );
    },
  };
}
