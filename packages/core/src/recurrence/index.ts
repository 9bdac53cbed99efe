export { type IterationState, iterateRule, planRule } from './engine.ts';
export * from './expand.ts';
export * from './rrule.ts';
export * from './series.ts';
