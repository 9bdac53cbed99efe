import type { ToolDefinition } from '../../catalogue.ts';
import { bookSlot } from './book-slot.ts';

/** Availability, booking and recurrence tools, in catalogue order. */
export const AVAILABILITY_TOOLS: ToolDefinition[] = [bookSlot];
