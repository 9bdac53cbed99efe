/**
 * @calgate/core — pure calendar domain. Imports no other Calgate package and performs no I/O.
 */

export * from './availability/index.ts';
export * from './colors.ts';
export * from './errors.ts';
export * from './ids.ts';
export * from './quickadd/index.ts';
export * from './recurrence/index.ts';
export * from './result.ts';
export * from './search/index.ts';
export * from './time/index.ts';
