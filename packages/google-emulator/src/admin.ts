/**
 * The admin surface, in-process (`emulator.admin`) and over HTTP (`/__admin/...`): seeding,
 * reset, state for assertions, tokens, sync-token expiry, the clock, and fault injection.
 */
import { faultAdmin } from '@calgate/emulator-kit';
import { renderView } from './events/render.ts';
import { exceptionView, storedView } from './events/views.ts';
import type { ErrorRateRule, Faults, LatencyRule, NotificationFault, ScriptedFault } from './faults.ts';
import { normalizeScopes } from './oauth/authorize.ts';
import { ACCESS_TOKEN_TTL_S, type TokenStore } from './oauth/tokens.ts';
import { applySeed, type EmulatorSeed } from './seed.ts';
import type { RequestLogEntry } from './server.ts';
import type { CalendarRecord, EmulatorState } from './state.ts';
import type { ChannelInfo, ChannelRegistry } from './watch/channels.ts';
import type { DeliveryRecord } from './watch/delivery.ts';

export interface IssuedTokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
  token_type: 'Bearer';
}

/** A Google service-account key file, pointing its token_uri at the emulator. */
export interface ServiceAccountKeyFile {
  type: 'service_account';
  project_id: string;
  private_key_id: string;
  private_key: string;
  client_email: string;
  client_id: string;
  auth_uri: string;
  token_uri: string;
}

export interface CalendarSnapshot {
  id: string;
  summary: string;
  timeZone: string;
  dataOwner: string;
  primary: boolean;
  acl: Record<string, string>;
  events: Record<string, unknown>[];
}

export interface EmulatorAdmin {
  seed(seed: EmulatorSeed): void;
  /** Drops all state, tokens, faults and the request log, then applies `seed` (default: the start seed). */
  reset(seed?: EmulatorSeed): void;
  snapshot(): { accounts: string[]; serviceAccounts: string[]; calendars: CalendarSnapshot[] };
  /** Every stored event of a calendar (cancelled ones and exceptions included), as Google renders them. */
  events(calendarId: string): Record<string, unknown>[];
  /** Mints tokens for an account without the consent flow (benchmarks, provider tests). */
  issueTokens(options: {
    email: string;
    scopes?: string[];
    clientId?: string;
    offline?: boolean;
  }): IssuedTokens;
  serviceAccountKey(email: string): ServiceAccountKeyFile;
  expireAccessTokens(match?: { email?: string; token?: string }): number;
  expireRefreshTokens(match?: { email?: string; token?: string }): number;
  revokeTokens(match: { email?: string; clientId?: string; token?: string }): number;
  /** Makes every sync token issued so far for the calendar (or all calendars) answer 410. */
  expireSyncTokens(calendarId?: string): void;
  advanceClock(ms: number): void;
  setLatency(rule: LatencyRule | null): void;
  addErrorRate(rule: ErrorRateRule): void;
  script(fault: ScriptedFault): void;
  clearFaults(): void;
  requests(): RequestLogEntry[];
  clearRequests(): void;
  /** Drops or delays push notifications (cleared by clearFaults). */
  notificationFault(fault: NotificationFault): void;
  /** Open watch channels (expired ones are dropped first). */
  channels(): ChannelInfo[];
  /** What became of each push notification, oldest first. */
  notifications(): DeliveryRecord[];
  /** Resolves when every queued notification has been delivered, dropped or given up. */
  notificationsIdle(): Promise<void>;
}

export interface AdminDeps {
  state: EmulatorState;
  tokens: TokenStore;
  faults: Faults;
  log: RequestLogEntry[];
  channels: ChannelRegistry;
  initialSeed: EmulatorSeed;
  url: () => string;
}

function calendarEvents(calendar: CalendarRecord): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const event of calendar.events.values()) {
    const view =
      event.recurringEventId === undefined ? storedView(calendar, event) : exceptionView(calendar, event);
    if (view) {
      out.push(renderView(calendar, view, { role: 'owner' }));
    }
  }
  return out;
}

export function createAdmin(deps: AdminDeps): EmulatorAdmin {
  const { state, tokens, faults, log, channels } = deps;
  const calendarsFor = (id?: string) =>
    id === undefined
      ? [...state.calendars.values()]
      : [state.calendars.get(id)].filter((c) => c !== undefined);
  const kit = faultAdmin({ faults, log, facts: (entry: RequestLogEntry) => entry });
  return {
    seed: (seed) => applySeed(state, seed),
    reset(seed = deps.initialSeed) {
      state.clear();
      tokens.clear();
      faults.clear();
      log.length = 0;
      channels.clear();
      applySeed(state, seed);
    },
    snapshot: () => ({
      accounts: [...state.accounts.keys()],
      serviceAccounts: [...state.serviceAccounts.keys()],
      calendars: [...state.calendars.values()].map((c) => ({
        id: c.id,
        summary: c.summary,
        timeZone: c.timeZone,
        dataOwner: c.dataOwner,
        primary: c.primary,
        acl: Object.fromEntries(c.acl),
        events: calendarEvents(c),
      })),
    }),
    events(calendarId) {
      const calendar = state.calendars.get(calendarId);
      if (!calendar) {
        throw new Error(`No calendar '${calendarId}'.`);
      }
      return calendarEvents(calendar);
    },
    issueTokens({
      email,
      scopes = ['https://www.googleapis.com/auth/calendar'],
      clientId = 'emulator-admin',
      offline,
    }) {
      const kind = state.serviceAccounts.has(email) ? 'service' : 'user';
      if (!state.isPrincipal(email)) {
        throw new Error(`No account '${email}'.`);
      }
      // Same aliases as the consent page ('email' is userinfo.email).
      const grant = { email, kind, clientId, scopes: normalizeScopes(scopes.join(' ')) } as const;
      const refresh = offline ? tokens.issueRefresh(grant, state.now()) : undefined;
      const access = tokens.issueAccess(grant, state.now(), refresh?.token);
      return {
        access_token: access.token,
        ...(refresh ? { refresh_token: refresh.token } : {}),
        expires_in: ACCESS_TOKEN_TTL_S,
        scope: scopes.join(' '),
        token_type: 'Bearer',
      };
    },
    serviceAccountKey(email) {
      const sa = state.serviceAccounts.get(email);
      if (!sa?.privateKeyPem) {
        throw new Error(`No service account '${email}' with a known private key.`);
      }
      return {
        type: 'service_account',
        project_id: 'calgate-emulator',
        private_key_id: sa.keyId,
        private_key: sa.privateKeyPem,
        client_email: sa.email,
        client_id: sa.clientId,
        auth_uri: `${deps.url()}/o/oauth2/v2/auth`,
        token_uri: `${deps.url()}/token`,
      };
    },
    expireAccessTokens: (match = {}) => tokens.expireAccess(state.now(), match),
    expireRefreshTokens: (match = {}) => tokens.expireRefresh(state.now(), match),
    revokeTokens(match) {
      if (match.token !== undefined) {
        return tokens.revoke(match.token) ? 1 : 0;
      }
      return match.email === undefined ? 0 : tokens.revokeAll(match.email, match.clientId);
    },
    expireSyncTokens(calendarId) {
      for (const calendar of calendarsFor(calendarId)) {
        calendar.seq += 1;
        calendar.syncFloor = calendar.seq;
      }
    },
    advanceClock: (ms) => state.advanceClock(ms),
    setLatency: kit.setLatency,
    addErrorRate: kit.addErrorRate,
    script: kit.script,
    clearFaults: kit.clearFaults,
    requests: () => kit.requests(),
    clearRequests: kit.clearRequests,
    notificationFault: (fault) => faults.addNotificationFault(fault),
    channels: () => channels.list(),
    notifications: () => channels.deliveries(),
    notificationsIdle: () => channels.idle(),
  };
}
