/**
 * @calgate/providers — the CalendarProvider contract and its implementations.
 */
export type * from './types.ts';
