import type { ToolDefinition } from '../../catalogue.ts';

/** Read tools beyond list_calendars and list_events, in catalogue order. */
export const READ_TOOLS: ToolDefinition[] = [];
