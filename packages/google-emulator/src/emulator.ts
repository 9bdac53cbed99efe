/**
 * startGoogleEmulator: wires state, tokens, faults and routes into one node:http server.
 */
import { listen } from '@calgate/emulator-kit';
import { createAdmin, type EmulatorAdmin } from './admin.ts';
import { adminRoutes } from './admin-routes.ts';
import type { ApiDeps } from './api.ts';
import { calendarRoutes } from './calendar/calendars-routes.ts';
import { freeBusyRoutes } from './calendar/freebusy.ts';
import { calendarListRoutes } from './calendar/list-routes.ts';
import { eventReadRoutes } from './events/read-routes.ts';
import { eventWriteRoutes } from './events/write-routes.ts';
import { Faults } from './faults.ts';
import { Router } from './http.ts';
import { authorizeRoutes } from './oauth/authorize.ts';
import { infoRoutes } from './oauth/info.ts';
import { IdTokenSigner } from './oauth/jwt.ts';
import { tokenRoutes } from './oauth/token.ts';
import { TokenStore } from './oauth/tokens.ts';
import { applySeed, type EmulatorSeed } from './seed.ts';
import { createPipeline, type RequestLogEntry } from './server.ts';
import { type Clock, EmulatorState } from './state.ts';
import { ChannelRegistry } from './watch/channels.ts';
import { DEFAULT_RETRY, type RetryPolicy } from './watch/delivery.ts';
import { watchRoutes } from './watch/routes.ts';

export interface GoogleEmulatorOptions {
  /** 0 (default) picks a free port. */
  port?: number;
  host?: string;
  seed?: EmulatorSeed;
  clock?: Clock;
  /** Seed for the fault-injection dice (error rates, jitter). */
  randomSeed?: number;
  /** Push-notification retries (default 3 retries, 100 ms doubling). */
  notificationRetry?: RetryPolicy;
}

export interface GoogleEmulator {
  /** Base URL without a trailing slash: googleapis takes `rootUrl: url + '/'`. */
  url: string;
  /** OAuth2Client `endpoints` that point google-auth-library at the emulator. */
  oauthEndpoints: {
    oauth2AuthBaseUrl: string;
    oauth2TokenUrl: string;
    oauth2RevokeUrl: string;
    tokenInfoUrl: string;
    oauth2FederatedSignonJwkCertsUrl: string;
  };
  admin: EmulatorAdmin;
  close(): Promise<void>;
}

export async function startGoogleEmulator(options: GoogleEmulatorOptions = {}): Promise<GoogleEmulator> {
  const state = new EmulatorState(options.clock ?? { now: () => Date.now() });
  const tokens = new TokenStore();
  const faults = new Faults(options.randomSeed);
  const log: RequestLogEntry[] = [];
  const initialSeed = options.seed ?? {};
  applySeed(state, initialSeed);
  const channels = new ChannelRegistry(state, faults, options.notificationRetry ?? DEFAULT_RETRY);
  let url = '';
  const admin = createAdmin({ state, tokens, faults, log, channels, initialSeed, url: () => url });
  const deps: ApiDeps = { state, tokens };
  const signer = new IdTokenSigner();
  const router = new Router();
  router.add([
    ...adminRoutes(admin),
    ...authorizeRoutes(state, tokens),
    ...tokenRoutes({ state, tokens, signer }),
    ...infoRoutes(state, tokens, signer),
    ...calendarListRoutes(deps),
    ...watchRoutes(deps, channels),
    ...eventWriteRoutes(deps),
    ...eventReadRoutes(deps),
    ...calendarRoutes(deps),
    ...freeBusyRoutes(deps),
  ]);
  const server = await listen(
    (closing) => createPipeline({ router, faults, tokens, log, now: () => state.now(), closing }),
    { port: options.port, host: options.host },
    () => channels.clear(),
  );
  url = server.url;
  return {
    url,
    oauthEndpoints: {
      oauth2AuthBaseUrl: `${url}/o/oauth2/v2/auth`,
      oauth2TokenUrl: `${url}/token`,
      oauth2RevokeUrl: `${url}/revoke`,
      tokenInfoUrl: `${url}/tokeninfo`,
      oauth2FederatedSignonJwkCertsUrl: `${url}/oauth2/v3/certs`,
    },
    admin,
    close: () => server.close(),
  };
}
