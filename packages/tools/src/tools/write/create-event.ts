import { CalgateError } from '@calgate/core';
import type { CalendarEvent, EventInput } from '@calgate/providers';
import { z } from 'zod';
import type { CalendarHandle } from '../../access.ts';
import { defineTool } from '../../catalogue.ts';
import { TextScreen } from '../../firewall.ts';
import { noticeWarnings, timeZoneArg, timeZoneOut, withExactTimes } from '../../local-time.ts';
import { toEventOut } from '../../shape.ts';
import {
  eventEndIn,
  eventFieldsIn,
  eventTimeIn,
  sanitizedOut,
  sendUpdatesIn,
  type Warning,
  warningsOut,
  writeCalendarId,
  writtenEvent,
} from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import {
  checkedRange,
  DEFAULT_CALENDAR,
  derivedEventId,
  describeEvent,
  instantOf,
  isCode,
  patchFromArgs,
  withSeriesZone,
} from './common.ts';
import { conflictWarnings, inspectNeighbourhood } from './conflicts.ts';

/** Fields compared when a requestId finds an event created earlier. */
function differences(stored: CalendarEvent, wanted: EventInput, timeZone: string): string[] {
  const out: string[] = [];
  for (const field of ['summary', 'description', 'location'] as const) {
    if ((stored[field] ?? '') !== (wanted[field] ?? '')) {
      out.push(field);
    }
  }
  for (const field of ['start', 'end'] as const) {
    const a = stored[field];
    const b = wanted[field];
    if (
      (a.date ?? '') !== (b.date ?? '') ||
      (a.date === undefined && instantOf(a, timeZone) !== instantOf(b, timeZone))
    ) {
      out.push(field);
    }
  }
  if (JSON.stringify(stored.recurrence ?? []) !== JSON.stringify(wanted.recurrence ?? [])) {
    out.push('recurrence');
  }
  const emails = (list: { email: string }[] | undefined) =>
    JSON.stringify((list ?? []).map((a) => a.email.toLowerCase()).sort());
  if (emails(stored.attendees) !== emails(wanted.attendees)) {
    out.push('attendees');
  }
  return out;
}

async function findExisting(handle: CalendarHandle, id: string, signal: AbortSignal) {
  try {
    return await handle.provider.getEvent(handle.ref, id, signal);
  } catch (error) {
    if (isCode(error, 'not_found')) {
      return undefined;
    }
    throw error;
  }
}

function replay(stored: CalendarEvent, wanted: EventInput, requestId: string, timeZone: string): Warning[] {
  if (stored.status === 'cancelled') {
    throw new CalgateError(
      'already_exists',
      `The event created earlier with requestId '${requestId}' (${stored.id}) has since been deleted. Use a new requestId to create it again.`,
      { context: { eventId: stored.id } },
    );
  }
  const differs = differences(stored, wanted, timeZone);
  const warnings: Warning[] = [
    {
      kind: 'note',
      message: `requestId '${requestId}' was used before: this is the event created then; nothing new was created.`,
      eventId: stored.id,
    },
  ];
  if (differs.length > 0) {
    warnings.push({
      kind: 'differs',
      message: `The stored event differs from this request in ${differs.join(', ')}; it was not changed. Use update_event to change it, or a new requestId for another event.`,
      eventId: stored.id,
    });
  }
  return warnings;
}

export const createEvent = defineTool({
  name: 'create_event',
  toolset: 'calendar',
  title: 'Create event',
  description:
    'To put a new event on a calendar (times, attendees, reminders, recurrence); pass requestId so a retry cannot add it twice.',
  notes:
    "Create an event. Pass requestId to make retries safe (the same requestId returns the first event). Warns about overlapping busy events; refuses a near-duplicate (similar title within 1 h) unless allowDuplicates. Service-account calendars can't take attendees.",
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId.default(DEFAULT_CALENDAR),
    ...eventFieldsIn,
    summary: z.string().min(1).max(1024),
    start: eventTimeIn,
    end: eventEndIn,
    requestId: z.string().min(1).max(200).optional().describe('Your idempotency key; reuse when retrying.'),
    allowDuplicates: z.boolean().default(false),
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    eventId: z.string(),
    calendarId: z.string(),
    created: z.boolean().describe('False when requestId matched an earlier event.'),
    event: writtenEvent,
    warnings: warningsOut,
    sanitized: sanitizedOut,
  }),
  exampleIntent: 'Put a team offsite on my calendar on May 4 from 9 to 5 and invite Ann.',
  example: {
    summary: 'Team Standup',
    start: { dateTime: '2026-04-20T09:00:00-06:00', timeZone: 'America/Denver' },
    end: { dateTime: '2026-04-20T09:30:00-06:00', timeZone: 'America/Denver' },
    attendees: ['alice@example.com', 'bob@example.com'],
    reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 10 }] },
    requestId: 'standup-2026-04-20',
    timeZone: 'America/Denver',
  },
  exampleResult: {
    timeZone: 'America/Denver',
    created: true,
    event: {
      summary: 'Team Standup',
      start: { dateTime: '2026-04-20T09:00:00-06:00', timeZone: 'America/Denver' },
    },
  },
  async run(given, { access, signal }) {
    const handle = access.writable(given.calendarId);
    const { ref, provider } = handle;
    const zone = callZone(access, given.timeZone, [handle]);
    const notices: string[] = [];
    const args = withExactTimes(given, zone, notices);
    const screen = new TextScreen();
    const input = withSeriesZone(patchFromArgs(args, screen) as EventInput, ref.timeZone);
    const range = checkedRange(args.start, args.end, ref.timeZone);
    const id =
      args.requestId === undefined
        ? undefined
        : derivedEventId('create', access.principal.keyId, handle.calendar.id, args.requestId);
    const result = (event: CalendarEvent, created: boolean, warned: Warning[]) => {
      const warnings = [...noticeWarnings(notices), ...warned];
      return {
        timeZone: zone,
        eventId: event.id,
        calendarId: handle.calendar.id,
        created,
        event: toEventOut(handle.calendar.id, event, zone),
        ...(warnings.length > 0 ? { warnings } : {}),
        ...(screen.sanitized.length > 0 ? { sanitized: screen.sanitized } : {}),
      };
    };
    if (id !== undefined && args.requestId !== undefined) {
      const earlier = await findExisting(handle, id, signal);
      if (earlier !== undefined) {
        return result(earlier, false, replay(earlier, input, args.requestId, ref.timeZone));
      }
    }
    const warnings: Warning[] = [];
    const around = await inspectNeighbourhood(
      handle,
      { summary: input.summary ?? '', ...range },
      signal,
    ).catch((error: unknown) => {
      warnings.push({
        kind: 'note',
        message: `Conflicts and duplicates could not be checked: ${error instanceof Error ? error.message : String(error)}`,
      });
      return { conflicts: [], duplicates: [] };
    });
    // A concurrent retry with the same requestId may have created it meanwhile.
    const mine = [...around.duplicates, ...around.conflicts].find((event) => event.id === id);
    if (mine !== undefined && args.requestId !== undefined) {
      return result(mine, false, replay(mine, input, args.requestId, ref.timeZone));
    }
    if (around.duplicates.length > 0 && !args.allowDuplicates) {
      throw new CalgateError(
        'conflict',
        `Not created: it looks like a duplicate of ${around.duplicates.map(describeEvent).join(', ')}. If a second event is intended, call again with allowDuplicates: true.`,
        { context: { duplicates: around.duplicates.map((event) => event.id) } },
      );
    }
    warnings.push(
      ...around.duplicates.map((event) => ({
        kind: 'duplicate' as const,
        message: `Similar event ${describeEvent(event)} exists; created anyway (allowDuplicates).`,
        eventId: event.id,
      })),
      ...conflictWarnings(around.conflicts),
    );
    try {
      const event = await provider.insertEvent(
        ref,
        { ...input, ...(id === undefined ? {} : { id }) },
        args.sendUpdates === undefined ? {} : { sendUpdates: args.sendUpdates },
      );
      return result(event, true, warnings);
    } catch (error) {
      // A concurrent retry with the same requestId got there first.
      if (id !== undefined && args.requestId !== undefined && isCode(error, 'already_exists')) {
        const earlier = await provider.getEvent(ref, id, signal);
        return result(earlier, false, replay(earlier, input, args.requestId, ref.timeZone));
      }
      throw error;
    }
  },
});
