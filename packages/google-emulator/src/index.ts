/**
 * @calgate/google-emulator — an in-memory HTTP emulator of Google Calendar API v3 and Google
 * OAuth 2.0 for tests, benchmarks and demos. Point googleapis at it with
 * `google.calendar({ version: 'v3', auth, rootUrl: emulator.url + '/' })` and an OAuth2Client
 * with `endpoints: emulator.oauthEndpoints`; seed and break it through `emulator.admin`.
 */
export type {
  CalendarSnapshot,
  EmulatorAdmin,
  IssuedTokens,
  ServiceAccountKeyFile,
} from './admin.ts';
export { type GoogleEmulator, type GoogleEmulatorOptions, startGoogleEmulator } from './emulator.ts';
export { parseQuickAdd, type QuickAddResult } from './events/quickadd.ts';
export type {
  ErrorRateRule,
  FaultAction,
  FaultMatch,
  LatencyRule,
  NotificationFault,
  ScriptedFault,
} from './faults.ts';
export type {
  EmulatorSeed,
  SeedAccount,
  SeedCalendar,
  SeedClient,
  SeedEvent,
  SeedServiceAccount,
  SeedShare,
} from './seed.ts';
export type { RequestLogEntry } from './server.ts';
export type { Clock } from './state.ts';
export type { ChannelInfo } from './watch/channels.ts';
export type { DeliveryRecord, ResourceState, RetryPolicy } from './watch/delivery.ts';
