import type { ToolDefinition } from '../../catalogue.ts';
import { cancelBooking } from '../bookings/cancel-booking.ts';
import { listBookings } from '../bookings/list-bookings.ts';
import { bookSlot } from './book-slot.ts';
import { checkAvailability } from './check-availability.ts';
import { expandRrule } from './expand-rrule.ts';
import { findFreeSlots } from './find-free-slots.ts';
import { getAvailability } from './get-availability.ts';

/** Availability, booking and recurrence tools, in catalogue order. */
export const AVAILABILITY_TOOLS: ToolDefinition[] = [
  bookSlot,
  listBookings,
  cancelBooking,
  findFreeSlots,
  checkAvailability,
  getAvailability,
  expandRrule,
];
