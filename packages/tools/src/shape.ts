import type { CalendarEvent } from '@calgate/providers';
import { EVENT_EXTRA_FIELDS, type EventOut } from './schemas.ts';

// Google's field order: id, status, summary, description, location, start, end, then the rest.
const [description, location, ...rest] = EVENT_EXTRA_FIELDS;
const FIELDS = ['id', 'status', 'summary', description, location, 'start', 'end', ...rest];

/** Values that are the default and so say nothing: omitted to keep results small for agents. */
const DEFAULTS: Record<string, unknown> = { transparency: 'opaque', visibility: 'default' };

/** Tags an upstream event with its Calgate calendar id, keeping the fields the output schema knows. */
export function toEventOut(calendarId: string, event: CalendarEvent): EventOut {
  const source = event as unknown as Record<string, unknown>;
  const out: Record<string, unknown> = { calendarId };
  for (const key of FIELDS) {
    const value = source[key];
    if (value !== undefined && value !== null && DEFAULTS[key] !== value) {
      out[key] = value;
    }
  }
  return out as EventOut;
}
