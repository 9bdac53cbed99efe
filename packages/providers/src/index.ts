/**
 * @calgate/providers — the CalendarProvider contract and its implementations.
 */

export { LocalCalendarProvider } from './local/index.ts';
export type * from './types.ts';
