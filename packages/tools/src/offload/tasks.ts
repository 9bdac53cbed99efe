/** The pure, CPU-bound work a worker thread may do for the tools, by name. */
import { expandInstances, expansionAnswer } from '../tools/availability/expansion.ts';

export const TASKS = {
  expandRrule: expandInstances,
  expandRruleAnswer: expansionAnswer,
} as const;

export type TaskName = keyof typeof TASKS;
export type TaskInput<T extends TaskName> = Parameters<(typeof TASKS)[T]>[0];
export type TaskOutput<T extends TaskName> = ReturnType<(typeof TASKS)[T]>;
