/**
 * @calgate/providers — the CalendarProvider contract and its implementations.
 */

export * from './caldav/index.ts';
export { standardPalette } from './colors.ts';
export * from './google/index.ts';
export {
  type AccessTokenSource,
  accessTokenSource,
  type TokenClock,
} from './google/token-sources.ts';
export { LocalCalendarProvider } from './local/index.ts';
export * from './microsoft/index.ts';
export * from './mirror/index.ts';
export type * from './types.ts';
