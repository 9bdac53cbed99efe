/**
 * A googleapis Calendar client authorised for one connection, for the mirror's sync jobs and its
 * push channels. syncCalendar takes a raw client (it needs sync tokens, which the
 * CalendarProvider contract does not speak), so the job gets its access token from the same token
 * sources as the provider (`accessTokenSource` over `googleAuth`): OAuth tokens from the
 * connection's sealed credentials, refreshed and stored back, a refused refresh marking the
 * account needs_reauth; a service account's from a signed JWT-bearer assertion.
 *
 * A token is fetched once per job. A 401 in the middle of a sync is answered by one more client
 * with `refresh` (runMirrorSync), which resumes from the stored page token.
 */
import { type AccessTokenSource, accessTokenSource, type TokenClock } from '@calgate/providers';
import type { ConnectionRepository } from '@calgate/store';
import { auth, type calendar_v3, calendar as googleCalendar } from '@googleapis/calendar';
import { type GoogleSetup, googleAuth } from '../google/providers.ts';

const CLOCK: TokenClock = { now: Date.now, requestTimeoutMs: 20_000 };

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
  // The service account's token is the same for every calendar shared with it: one source, so
  // concurrent syncs sign one assertion an hour. OAuth sources are made per job instead: each
  // loads the connection's credentials afresh, so a reconnect in a gateway is seen at once.
  let serviceAccount: AccessTokenSource | undefined;
  const sourceFor = (connection: MirrorConnection): AccessTokenSource => {
    const auth = googleAuth(setup, connections, connection, (reason) =>
      onNeedsReauth(connection.connectionId, reason),
    );
    if (auth.kind === 'service_account') {
      serviceAccount ??= accessTokenSource(auth, CLOCK);
      return serviceAccount;
    }
    return accessTokenSource(auth, CLOCK);
  };
  return {
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
      return googleCalendar({ version: 'v3', rootUrl, auth: client, retry: false });
    },
  };
}
