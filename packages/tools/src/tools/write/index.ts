import type { ToolDefinition } from '../../catalogue.ts';
import { batchUpdateEvents } from './batch-update-events.ts';
import { createCalendar } from './create-calendar.ts';
import { createEvent } from './create-event.ts';
import { deleteEvent } from './delete-event.ts';
import { importEvents } from './import-events.ts';
import { manageAttendees } from './manage-attendees.ts';
import { quickAddEvent } from './quick-add-event.ts';
import { respondToEvent } from './respond-to-event.ts';
import { updateEvent } from './update-event.ts';

/** Tools that change calendars, in catalogue order. */
export const WRITE_TOOLS: ToolDefinition[] = [
  createEvent,
  quickAddEvent,
  updateEvent,
  batchUpdateEvents,
  manageAttendees,
  respondToEvent,
  deleteEvent,
  importEvents,
  createCalendar,
];
