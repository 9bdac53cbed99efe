/**
 * Where Google answers: the Calendar API root (googleapis `rootUrl`) and the OAuth endpoints.
 * Tests and demos point both at the emulator, which serves every path from one origin.
 */

const AUTH = 'https://www.googleapis.com/auth/';

/**
 * What a read-only connection asks for: calendar.readonly covers calendarList, events and
 * freeBusy (Google's per-method scope table), so availability needs nothing more; openid and
 * email name the account for the connection record.
 */
export const GOOGLE_READ_SCOPES: readonly string[] = Object.freeze([
  `${AUTH}calendar.readonly`,
  'openid',
  'email',
]);

/**
 * What "Allow writing" adds: calendar.events for event writes, calendar for creating calendars
 * (calendars.insert accepts no narrower scope Calgate could use).
 */
export const GOOGLE_WRITE_SCOPES: readonly string[] = Object.freeze([
  `${AUTH}calendar`,
  `${AUTH}calendar.events`,
]);

/** A read-and-write connection asks for both sets at once. */
export const GOOGLE_SCOPES: readonly string[] = Object.freeze([...GOOGLE_WRITE_SCOPES, 'openid', 'email']);

export type GoogleAccessLevel = 'read' | 'write';

/** The scopes to ask for a level of access on a first consent. */
export function scopesFor(level: GoogleAccessLevel): readonly string[] {
  return level === 'write' ? GOOGLE_SCOPES : GOOGLE_READ_SCOPES;
}

/** A token response's space-separated `scope`, as a list without duplicates. */
export function parseScopes(scope: string | undefined): string[] {
  return [...new Set((scope ?? '').split(/\s+/).filter(Boolean))];
}

/** Whether granted scopes let Calgate write events (calendar or calendar.events). */
export function grantsWrite(scopes: readonly string[]): boolean {
  return scopes.includes(`${AUTH}calendar`) || scopes.includes(`${AUTH}calendar.events`);
}

/** What a service account asks for in its JWT assertion. */
export const SERVICE_ACCOUNT_SCOPES: readonly string[] = Object.freeze([
  'https://www.googleapis.com/auth/calendar',
]);

export interface GoogleEndpoints {
  /** googleapis `rootUrl`, e.g. `https://www.googleapis.com/`. */
  apiRootUrl: string;
  /**
   * Base of the OAuth endpoints. Google's own value selects Google's four URLs; any other base
   * is read the way the emulator serves them: `/o/oauth2/v2/auth`, `/token`, `/revoke`, `/v1/userinfo`.
   */
  oauthUrl: string;
}

export const DEFAULT_GOOGLE_ENDPOINTS: GoogleEndpoints = Object.freeze({
  apiRootUrl: 'https://www.googleapis.com/',
  oauthUrl: 'https://accounts.google.com',
});

export interface OAuthUrls {
  auth: string;
  token: string;
  revoke: string;
  userinfo: string;
}

const GOOGLE_OAUTH_URLS: OAuthUrls = Object.freeze({
  auth: 'https://accounts.google.com/o/oauth2/v2/auth',
  token: 'https://oauth2.googleapis.com/token',
  revoke: 'https://oauth2.googleapis.com/revoke',
  userinfo: 'https://openidconnect.googleapis.com/v1/userinfo',
});

const trimSlash = (url: string) => url.replace(/\/+$/, '');

/** The four OAuth URLs for a set of endpoints. */
export function resolveOAuthUrls(endpoints: GoogleEndpoints): OAuthUrls {
  const base = trimSlash(endpoints.oauthUrl);
  if (base === '' || base === trimSlash(DEFAULT_GOOGLE_ENDPOINTS.oauthUrl)) {
    return GOOGLE_OAUTH_URLS;
  }
  return {
    auth: `${base}/o/oauth2/v2/auth`,
    token: `${base}/token`,
    revoke: `${base}/revoke`,
    userinfo: `${base}/v1/userinfo`,
  };
}

/** googleapis joins paths onto rootUrl with `new URL(path, rootUrl)`, so it must end with '/'. */
export function apiRoot(endpoints: GoogleEndpoints): string {
  return `${trimSlash(endpoints.apiRootUrl)}/`;
}
