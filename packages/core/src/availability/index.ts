export * from './intervals.ts';
export * from './slots.ts';
export * from './working-hours.ts';
