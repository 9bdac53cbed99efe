import type { ToolDefinition } from '../../catalogue.ts';

/** Tools that change calendars, in catalogue order. */
export const WRITE_TOOLS: ToolDefinition[] = [];
