import type { ToolDefinition } from '../../catalogue.ts';

/** Availability, booking and recurrence tools, in catalogue order. */
export const AVAILABILITY_TOOLS: ToolDefinition[] = [];
