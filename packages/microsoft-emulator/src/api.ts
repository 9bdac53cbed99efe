/**
 * Graph routes share one wrapper: authenticate the bearer token (401 InvalidAuthenticationToken
 * when missing, unknown or expired), check its scopes, refuse what the throttle refused, read
 * the request's preferences, then run the handler with the caller.
 */
import { bearerToken } from '@calgate/emulator-kit';
import { graphErrors } from './errors.ts';
import {
  applied,
  type Preferences,
  preferences,
  type Reply,
  type RequestContext,
  type Route,
} from './http.ts';
import type { MicrosoftState, UserRecord } from './state.ts';

export const GRAPH_PREFIX = '/v1.0';

export interface Caller {
  user: UserRecord;
  /** The mailbox key (lower-case primary address). */
  mailbox: string;
  scopes: string[];
  prefs: Preferences;
}

/** What a route needs: calendar reads, calendar writes, the profile, or mailbox settings. */
export type Need = 'calendarRead' | 'calendarWrite' | 'profile' | 'mailboxSettings';

const GRANTS: Record<Need, string[]> = {
  calendarRead: [
    'Calendars.Read',
    'Calendars.ReadWrite',
    'Calendars.Read.Shared',
    'Calendars.ReadWrite.Shared',
  ],
  calendarWrite: ['Calendars.ReadWrite', 'Calendars.ReadWrite.Shared'],
  profile: ['User.Read', 'User.ReadWrite', 'User.ReadBasic.All', 'User.Read.All'],
  mailboxSettings: ['MailboxSettings.Read', 'MailboxSettings.ReadWrite'],
};

export type GraphHandler = (ctx: RequestContext, caller: Caller) => Reply | Promise<Reply>;

/** The caller a bearer token names, when the token is known and alive (no errors thrown). */
export function callerOf(state: MicrosoftState, token: string | undefined) {
  const record = token === undefined ? undefined : state.access.get(token);
  if (!record || record.expiresAt <= state.now()) {
    return undefined;
  }
  const user = state.user(record.email);
  return user ? { record, user } : undefined;
}

export function graphRoute(
  state: MicrosoftState,
  method: string,
  pattern: string,
  op: string,
  need: Need,
  handler: GraphHandler,
): Route {
  return {
    method,
    pattern: `${GRAPH_PREFIX}${pattern}`,
    op,
    handler: async (ctx) => {
      const token = bearerToken({ headers: ctx.headers } as never);
      if (token === undefined) {
        throw graphErrors.noToken();
      }
      const record = state.access.get(token);
      if (!record) {
        throw graphErrors.badToken();
      }
      if (record.expiresAt <= state.now()) {
        throw graphErrors.expiredToken();
      }
      const user = state.user(record.email);
      if (!user) {
        throw graphErrors.badToken();
      }
      if (!record.scopes.some((s) => GRANTS[need].includes(s))) {
        throw graphErrors.accessDenied();
      }
      if (ctx.throttled) {
        throw ctx.throttled;
      }
      const prefs = preferences(ctx.headers);
      const reply = await handler(ctx, { user, mailbox: record.email, scopes: record.scopes, prefs });
      return { ...reply, headers: { ...applied(prefs), ...reply.headers } };
    },
  };
}

/** `$top` as Graph reads it: a positive integer, at most `max`. */
export function topOf(query: URLSearchParams, fallback: number, max = 1000): number {
  const raw = query.get('$top') ?? query.get('top');
  if (raw === null) {
    return fallback;
  }
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw graphErrors.badRequest(`Invalid value '${raw}' for $top query option found.`);
  }
  return Math.min(Math.max(n, 1), max);
}

export function skipOf(query: URLSearchParams): number {
  const raw = query.get('$skip') ?? query.get('skip');
  const n = raw === null ? 0 : Number(raw);
  if (!Number.isInteger(n) || n < 0) {
    throw graphErrors.badRequest(`Invalid value '${String(raw)}' for $skip query option found.`);
  }
  return n;
}

/** The absolute link to the same resource with these query changes (Graph's nextLink form). */
export function linkTo(ctx: RequestContext, changes: Record<string, string | null>): string {
  const url = new URL(`${ctx.baseUrl}${ctx.path}`);
  for (const [k, v] of ctx.query) {
    url.searchParams.append(k, v);
  }
  for (const [k, v] of Object.entries(changes)) {
    url.searchParams.delete(k);
    if (v !== null) {
      url.searchParams.set(k, v);
    }
  }
  return url.toString().replace(/%24/g, '$');
}
