/**
 * Where Google answers: the Calendar API root (googleapis `rootUrl`) and the OAuth endpoints.
 * Tests and demos point both at the emulator, which serves every path from one origin.
 */

/** Calendar read/write, event read/write, and the account's email for the connection record. */
export const GOOGLE_SCOPES: readonly string[] = Object.freeze([
  'https://www.googleapis.com/auth/calendar',
  'https://www.googleapis.com/auth/calendar.events',
  'openid',
  'email',
]);

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
