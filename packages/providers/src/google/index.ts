export type {
  CredentialStore,
  GoogleAuth,
  GoogleClientConfig,
  OAuthCredentials,
  ServiceAccountKey,
} from './credentials.ts';
export {
  DEFAULT_GOOGLE_ENDPOINTS,
  GOOGLE_READ_SCOPES,
  GOOGLE_SCOPES,
  GOOGLE_WRITE_SCOPES,
  type GoogleAccessLevel,
  type GoogleEndpoints,
  grantsWrite,
  type OAuthUrls,
  parseScopes,
  resolveOAuthUrls,
  SERVICE_ACCOUNT_SCOPES,
  scopesFor,
} from './endpoints.ts';
export { listAllEvents } from './list-all.ts';
export { type ExchangedCode, GoogleOAuth } from './oauth.ts';
export { clampPageSize, MAX_PAGE_SIZE } from './page-size.ts';
export { GoogleCalendarProvider, type GoogleProviderOptions } from './provider.ts';
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from './retry.ts';
export { type RetryListener, type UpstreamRetry, whileListeningForRetries } from './retry-listener.ts';
export {
  GOOGLE_MIRROR_FORMAT,
  GOOGLE_PUSH_PATH,
  googleSyncSource,
  SYNC_PAGE_SIZE,
  type SyncCalendarOptions,
  syncCalendar,
  toMirrorEvent,
} from './sync.ts';
