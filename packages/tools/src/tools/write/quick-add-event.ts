import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  sanitizedOut,
  sendUpdatesIn,
  warningsOut,
  writeCalendarId,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { DEFAULT_CALENDAR, instantOf } from './common.ts';
import { conflictWarnings, inspectNeighbourhood } from './conflicts.ts';

export const quickAddEvent = defineTool({
  name: 'quick_add_event',
  toolset: 'calendar',
  title: 'Quick add event',
  description:
    "When the user gives an event as one sentence ('Lunch with Ann tomorrow at noon'); check the times it returns.",
  notes:
    "Create an event from a sentence such as 'Lunch with Ann tomorrow at noon at Cafe Rio', read in the calendar's time zone. Check the returned start and end.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId.default(DEFAULT_CALENDAR),
    text: z.string().min(1).max(1024),
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    eventId: z.string(),
    calendarId: z.string(),
    event: writtenEvent,
    warnings: warningsOut,
    sanitized: sanitizedOut,
  }),
  exampleIntent: "Add 'Lunch with Ann tomorrow at noon at Cafe Rio' to my calendar, just as I wrote it.",
  example: { text: 'Dentist appointment Friday at 2pm' },
  exampleResult: { event: { summary: 'Dentist appointment' } },
  async run(args, { access, signal }) {
    const handle = access.writable(args.calendarId);
    // Checked before anything is written: a bad zone changes nothing.
    const zone = callZone(access, args.timeZone, [handle]);
    const screen = new TextScreen();
    const text = screen.text('text', args.text);
    const event = await handle.provider.quickAdd(
      handle.ref,
      text,
      args.sendUpdates === undefined ? {} : { sendUpdates: args.sendUpdates },
    );
    const tz = handle.ref.timeZone;
    const around = await inspectNeighbourhood(
      handle,
      { summary: event.summary ?? '', start: instantOf(event.start, tz), end: instantOf(event.end, tz) },
      signal,
    ).catch(() => ({ conflicts: [], duplicates: [] }));
    const warnings = [
      ...conflictWarnings(around.conflicts.filter((other) => other.id !== event.id)),
      ...around.duplicates
        .filter((other) => other.id !== event.id)
        .map((other) => ({
          kind: 'duplicate' as const,
          message: `A similar event '${other.summary ?? ''}' (${other.id}) starts within an hour of this one.`,
          eventId: other.id,
        })),
    ];
    return {
      timeZone: zone,
      eventId: event.id,
      calendarId: handle.calendar.id,
      event: toEventOut(handle.calendar.id, event, zone),
      ...(warnings.length > 0 ? { warnings } : {}),
      ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
    };
  },
});
