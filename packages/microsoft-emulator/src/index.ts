/**
 * @calgate/microsoft-emulator — an in-memory HTTP emulator of Microsoft Graph v1.0 calendars and
 * the Microsoft identity platform's token endpoint, for tests, benchmarks and demos. Point a
 * client at `emulator.graphUrl` (MICROSOFT_GRAPH_URL) and `emulator.loginUrl`
 * (MICROSOFT_LOGIN_URL); seed and break it through `emulator.admin`.
 */
export type { IssuedTokens, MicrosoftEmulatorAdmin, RequestLogEntry } from './admin.ts';
export { type MicrosoftEmulator, type MicrosoftEmulatorOptions, startMicrosoftEmulator } from './emulator.ts';
export type { ErrorRateRule, FaultAction, FaultMatch, LatencyRule, ScriptedFault } from './faults.ts';
export { occurrenceDates, type PatternedRecurrence, recurrenceProblem } from './recurrence.ts';
export {
  DEFAULT_CLIENT,
  type MicrosoftSeed,
  type SeedCalendar,
  type SeedClient,
  type SeedEvent,
  type SeedUser,
} from './seed.ts';
export type { Clock } from './state.ts';
export type { NotificationRecord } from './subscriptions.ts';
export type { ThrottleLimits } from './throttle.ts';
export { acceptZone, GRAPH_IANA_ZONES, windowsName } from './zones.ts';
