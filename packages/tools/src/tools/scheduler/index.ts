import { MANAGE_TOOLS } from './manage-tools.ts';
import { SCHEDULE_TOOLS } from './schedule-tools.ts';
import { TARGET_TOOLS } from './target-tools.ts';

/** The 'scheduler' toolset: prompts scheduled for later delivery, and where they are delivered. */
export const SCHEDULER_TOOLS = [...SCHEDULE_TOOLS, ...MANAGE_TOOLS, ...TARGET_TOOLS];
