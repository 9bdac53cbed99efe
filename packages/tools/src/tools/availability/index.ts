import type { ToolDefinition } from '../../catalogue.ts';
import { bookSlot } from './book-slot.ts';
import { checkAvailability } from './check-availability.ts';
import { expandRrule } from './expand-rrule.ts';
import { findFreeSlots } from './find-free-slots.ts';
import { getAvailability } from './get-availability.ts';

/** Availability, booking and recurrence tools, in catalogue order. */
export const AVAILABILITY_TOOLS: ToolDefinition[] = [
  bookSlot,
  findFreeSlots,
  checkAvailability,
  getAvailability,
  expandRrule,
];
