/**
 * @calgate/providers — the CalendarProvider contract and its implementations.
 */

export { standardPalette } from './colors.ts';
export * from './google/index.ts';
export { LocalCalendarProvider } from './local/index.ts';
export type * from './types.ts';
