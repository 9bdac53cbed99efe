import type { ToolDefinition } from '../../catalogue.ts';
import { getCurrentTime } from './current-time.ts';
import { findFreeTime } from './find-free-time.ts';
import { getEvent } from './get-event.ts';
import { listColors } from './list-colors.ts';
import { searchEvents } from './search-events.ts';
import { fetchDocument, search } from './search-fetch.ts';

/** Read tools beyond list_calendars and list_events, in catalogue order. */
export const READ_TOOLS: ToolDefinition[] = [
  getEvent,
  searchEvents,
  findFreeTime,
  getCurrentTime,
  listColors,
  search,
  fetchDocument,
];
