/**
 * Who is calling the Calendar API, with which scopes, and what they may do on a calendar.
 * Bearer tokens come from the emulator's OAuth endpoints; a service account may also send a
 * self-signed JWT (what google-auth-library's JWTAccess does when no scopes are configured).
 */
import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { apiErrors } from './errors.ts';
import type { RequestContext } from './http.ts';
import type { PrincipalKind, TokenStore } from './oauth/tokens.ts';
import { type AccessRole, type CalendarRecord, type EmulatorState, ROLE_RANK } from './state.ts';

export interface Principal {
  email: string;
  kind: PrincipalKind;
  scopes: Set<string>;
}

const S = 'https://www.googleapis.com/auth/';
const scopeSet = (...names: string[]) => new Set(names.map((n) => `${S}${n}`));

/** Which OAuth scopes allow which kind of call (Google's Calendar API scope table). */
export const SCOPES = {
  eventsRead: scopeSet(
    'calendar',
    'calendar.readonly',
    'calendar.events',
    'calendar.events.readonly',
    'calendar.events.owned',
    'calendar.events.owned.readonly',
  ),
  eventsWrite: scopeSet('calendar', 'calendar.events', 'calendar.events.owned'),
  listRead: scopeSet(
    'calendar',
    'calendar.readonly',
    'calendar.calendarlist',
    'calendar.calendarlist.readonly',
  ),
  listWrite: scopeSet('calendar', 'calendar.calendarlist'),
  calendarsRead: scopeSet(
    'calendar',
    'calendar.readonly',
    'calendar.calendars',
    'calendar.calendars.readonly',
  ),
  calendarsWrite: scopeSet('calendar', 'calendar.calendars', 'calendar.app.created'),
  freeBusy: scopeSet('calendar', 'calendar.readonly', 'calendar.freebusy', 'calendar.events.freebusy'),
  any: scopeSet(
    'calendar',
    'calendar.readonly',
    'calendar.events',
    'calendar.events.readonly',
    'calendar.calendarlist',
    'calendar.calendarlist.readonly',
    'calendar.calendars',
    'calendar.calendars.readonly',
    'calendar.settings.readonly',
  ),
} as const;

export type ScopeClass = keyof typeof SCOPES;

/** Resolves the bearer token to a principal, or throws Google's 401. */
export async function authenticate(
  ctx: RequestContext,
  state: EmulatorState,
  tokens: TokenStore,
): Promise<Principal> {
  const header = ctx.headers.authorization;
  const match = typeof header === 'string' ? /^Bearer\s+(\S+)$/i.exec(header) : null;
  const token = match?.[1] ?? ctx.query.get('access_token') ?? undefined;
  if (token === undefined) {
    throw apiErrors.loginRequired();
  }
  const record = tokens.access.get(token);
  if (record) {
    const known =
      record.kind === 'user' ? state.accounts.has(record.email) : state.serviceAccounts.has(record.email);
    if (record.revoked || record.expiresAt <= state.now() || !known) {
      throw apiErrors.invalidCredentials();
    }
    return { email: record.email, kind: record.kind, scopes: new Set(record.scopes) };
  }
  if (token.split('.').length === 3) {
    return selfSignedJwt(token, state);
  }
  throw apiErrors.invalidCredentials();
}

async function selfSignedJwt(token: string, state: EmulatorState): Promise<Principal> {
  try {
    const claims = decodeJwt(token);
    const header = decodeProtectedHeader(token);
    const account = typeof claims.iss === 'string' ? state.serviceAccounts.get(claims.iss) : undefined;
    if (!account || header.alg !== 'RS256' || (header.kid !== undefined && header.kid !== account.keyId)) {
      throw apiErrors.invalidCredentials();
    }
    await jwtVerify(token, account.publicKey, { algorithms: ['RS256'], currentDate: new Date(state.now()) });
    const scope = typeof claims.scope === 'string' ? claims.scope : `${S}calendar`;
    return { email: account.email, kind: 'service', scopes: new Set(scope.split(/\s+/)) };
  } catch {
    throw apiErrors.invalidCredentials();
  }
}

export function requireScope(principal: Principal, scopeClass: ScopeClass): void {
  for (const scope of SCOPES[scopeClass]) {
    if (principal.scopes.has(scope)) {
      return;
    }
  }
  throw apiErrors.insufficientScopes();
}

export interface CalendarAccess {
  calendar: CalendarRecord;
  role: AccessRole;
}

/**
 * The calendar named in the path (`primary` is the caller's own) and the caller's role on it.
 * A calendar the caller cannot see at all is reported exactly like one that does not exist.
 */
export function calendarAccess(
  state: EmulatorState,
  principal: Principal,
  calendarId: string,
  minRole: AccessRole,
): CalendarAccess {
  const id = calendarId === 'primary' ? principal.email : calendarId;
  const calendar = state.calendars.get(id) ?? state.calendars.get(id.toLowerCase());
  const role = calendar ? state.roleOf(calendar, principal.email) : 'none';
  if (!calendar || role === 'none') {
    throw apiErrors.notFound();
  }
  if (ROLE_RANK[role] < ROLE_RANK[minRole]) {
    throw apiErrors.requiredAccessLevel(
      minRole === 'owner' ? 'owner' : minRole === 'writer' ? 'writer' : 'reader',
    );
  }
  return { calendar, role };
}
