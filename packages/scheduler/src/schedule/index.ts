export { compileSchedule, MAX_RRULE_COUNT } from './compile.ts';
export { createSchedule, PAST_TOLERANCE_MS } from './create.ts';
export { nextCronRun } from './cron-next.ts';
export { type CronExpression, parseCron } from './cron-parse.ts';
export { formatInterval, MAX_INTERVAL_MS, MIN_INTERVAL_MS, parseInterval } from './interval.ts';
export { MAX_RUNS_PER_CALL, nextRun, nextRuns } from './next.ts';
export { MAX_PROMPT_CHARACTERS, validatePrompt } from './prompt.ts';
export type * from './types.ts';
