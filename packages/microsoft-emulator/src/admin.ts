/**
 * The admin surface, in-process (`emulator.admin`) and over HTTP (`/__admin/...`): seeding,
 * reset, state for assertions, tokens and codes without the browser, token expiry and
 * revocation, delta-token expiry, cancelled occurrences, throttle limits, paging, the clock,
 * and the kit's fault scripting and request log.
 */
import { type FaultAdmin, faultAdmin } from '@calgate/emulator-kit';
import { graphErrors } from './errors.ts';
import type { ErrorFields, FaultMatch, Faults } from './faults.ts';
import { ACCESS_TOKEN_TTL_S, issueTokens, mailboxKey, normalizeScopes } from './identity.ts';
import { instanceById, ownInstance } from './instances.ts';
import type { Paging } from './me-routes.ts';
import { renderCalendar, renderEvent } from './render.ts';
import {
  addCalendar,
  addEvent,
  applySeed,
  type MicrosoftSeed,
  type SeedCalendar,
  type SeedEvent,
} from './seed.ts';
import type { MicrosoftState } from './state.ts';
import type { NotificationRecord, Notifier } from './subscriptions.ts';
import type { Throttle, ThrottleLimits } from './throttle.ts';
import { exceptionFrom, touch } from './write.ts';

export interface RequestLogEntry {
  at: number;
  method: string;
  path: string;
  op: string;
  status: number;
  /** The calling mailbox, when the bearer token is known. */
  mailbox?: string;
  calendarId?: string;
  /** The `Prefer` header sent, when there was one. */
  prefer?: string;
  query: string;
  fault?: string;
}

export interface IssuedTokens {
  access_token: string;
  refresh_token?: string;
  expires_in: number;
  scope: string;
  token_type: 'Bearer';
}

export interface MicrosoftEmulatorAdmin extends FaultAdmin<FaultMatch, ErrorFields, RequestLogEntry> {
  seed(seed: MicrosoftSeed): void;
  /** Drops all state, tokens, faults and the request log, then applies `seed` (default: the start seed). */
  reset(seed?: MicrosoftSeed): void;
  addCalendar(mailbox: string, calendar: SeedCalendar): { id: string };
  /** Adds an event as the server would store it (for changes made "elsewhere", e.g. in Outlook). */
  addEvent(calendarId: string, event: SeedEvent): { id: string };
  /** The calendars a mailbox lists, as Graph renders them. */
  calendars(mailbox: string): Record<string, unknown>[];
  /** Stored events (singles, masters, exceptions), rendered in UTC with HTML bodies. */
  events(calendarId: string): Record<string, unknown>[];
  /** Marks one occurrence (by its id) cancelled by the organizer: it stays, with isCancelled. */
  cancelOccurrence(calendarId: string, occurrenceId: string): void;
  /** Mints tokens without the browser (default scopes: everything the emulator knows, offline). */
  issueTokens(options: {
    email: string;
    scopes?: string[];
    clientId?: string;
    offline?: boolean;
  }): IssuedTokens;
  expireAccessTokens(match?: { email?: string; token?: string }): number;
  revokeRefreshTokens(match?: { email?: string; token?: string }): number;
  /** Makes every delta and skip token issued so far answer 410 SyncStateNotFound. */
  expireDeltaTokens(): void;
  setThrottle(limits: Partial<ThrottleLimits>): void;
  /** Open change-notification subscriptions. */
  subscriptions(): { id: string; resource: string; calendarId: string; expirationDateTime: string }[];
  /** Every notification sent (or lost while paused), oldest first. */
  notifications(): NotificationRecord[];
  /** Resolves when every notification sent so far has been answered or has failed. */
  notificationsIdle(): Promise<void>;
  /** While paused, notifications are lost, so a client's polling fallback can be tested. */
  pauseNotifications(paused: boolean): void;
  setPaging(paging: Partial<Paging>): void;
  advanceClock(ms: number): void;
}

export interface AdminDeps {
  state: MicrosoftState;
  faults: Faults;
  log: RequestLogEntry[];
  throttle: Throttle;
  paging: Paging;
  notifier: Notifier;
  initialSeed: MicrosoftSeed;
}

const matchesToken = (r: { email: string; token: string }, m: { email?: string; token?: string }) =>
  (m.email === undefined || r.email === m.email.toLowerCase()) &&
  (m.token === undefined || r.token === m.token);

export function createAdmin(deps: AdminDeps): MicrosoftEmulatorAdmin {
  const { state, faults, log, throttle, paging, notifier } = deps;
  const kit = faultAdmin({ faults, log, facts: (e: RequestLogEntry) => e, strict: true });
  const calendar = (id: string) => {
    const c = state.calendars.get(id);
    if (!c) {
      throw new Error(`No calendar '${id}'.`);
    }
    return c;
  };
  return {
    ...kit,
    seed: (seed) => applySeed(state, seed),
    reset(seed = deps.initialSeed) {
      state.clear();
      faults.clear();
      throttle.clear();
      notifier.clear();
      log.length = 0;
      applySeed(state, seed);
    },
    addCalendar: (mailbox, c) => ({ id: addCalendar(state, mailbox.toLowerCase(), c).id }),
    addEvent(calendarId, event) {
      const c = calendar(calendarId);
      const { id } = addEvent(state, c, event);
      notifier.changed(c, id, 'created');
      return { id };
    },
    calendars: (mailbox) => state.calendarsOf(mailbox.toLowerCase()).map(renderCalendar),
    events(calendarId) {
      const c = calendar(calendarId);
      return [...c.events.values()].map((e) =>
        renderEvent(ownInstance(e), c, { zone: { name: 'UTC', iana: 'UTC' }, mailbox: c.mailbox }),
      );
    },
    cancelOccurrence(calendarId, id) {
      const c = calendar(calendarId);
      const instance = instanceById(c, id);
      if (!instance || instance.type === 'singleInstance' || instance.type === 'seriesMaster') {
        throw graphErrors.notFound();
      }
      const exception =
        instance.type === 'occurrence' ? exceptionFrom(c, instance, state.now()) : instance.record;
      exception.isCancelled = true;
      touch(exception, state.now());
      c.events.set(exception.id, exception);
      notifier.changed(c, exception.id, 'updated');
    },
    issueTokens({
      email,
      scopes = ['Calendars.ReadWrite', 'MailboxSettings.Read', 'User.Read'],
      clientId = 'calgate-emulator-client',
      offline = true,
    }) {
      const user = state.user(email);
      if (!user) {
        throw new Error(`No user '${email}'.`);
      }
      const wanted = normalizeScopes([...scopes, ...(offline ? ['offline_access'] : [])].join(' '));
      const { access, refresh } = issueTokens(state, user, clientId, wanted);
      return {
        access_token: access.token,
        ...(refresh ? { refresh_token: refresh.token } : {}),
        expires_in: ACCESS_TOKEN_TTL_S,
        scope: access.scopes.join(' '),
        token_type: 'Bearer',
      };
    },
    expireAccessTokens(match = {}) {
      let n = 0;
      for (const record of state.access.values()) {
        if (matchesToken(record, match) && record.expiresAt > state.now()) {
          record.expiresAt = state.now();
          n += 1;
        }
      }
      return n;
    },
    revokeRefreshTokens(match = {}) {
      let n = 0;
      for (const [token, record] of state.refresh) {
        if (matchesToken(record, match)) {
          state.refresh.delete(token);
          n += 1;
        }
      }
      return n;
    },
    expireDeltaTokens: () => state.delta.clear(),
    setThrottle(limits) {
      throttle.limits = { ...throttle.limits, ...limits };
    },
    setPaging(p) {
      Object.assign(paging, p);
    },
    subscriptions: () =>
      [...notifier.subscriptions.values()].map((sub) => ({
        id: sub.id,
        resource: sub.resource,
        calendarId: sub.calendarId,
        expirationDateTime: new Date(sub.expiresAt).toISOString(),
      })),
    notifications: () => notifier.deliveries.map((d) => ({ ...d })),
    notificationsIdle: () => notifier.idle(),
    pauseNotifications(paused) {
      notifier.paused = paused;
    },
    advanceClock: (ms) => state.advanceClock(ms),
  };
}

export { mailboxKey };
