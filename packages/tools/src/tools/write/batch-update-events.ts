import { isCalgateError } from '@calgate/core';
import { z } from 'zod';
import { defineTool } from '../../catalogue.ts';
import { listedAsDescription } from '../../listed.ts';
import { timeZoneArg, timeZoneOut } from '../../local-time.ts';
import { eventIdIn, sendUpdatesIn, writeCalendarId, writtenEvent } from '../../write-schemas.ts';
import { callZone } from '../availability/window.ts';
import { runUpdate, updateFields } from './update-event.ts';

export const MAX_BATCH = 50;
/** Updates in flight at once: enough to hide latency, few enough to stay under upstream quotas. */
const CONCURRENCY = 5;

const itemOut = z.object({
  index: z.number(),
  eventId: z.string(),
  ok: z.boolean(),
  calendarId: z.string().optional().describe('The calendar holding the event updated.'),
  changed: z.boolean().optional(),
  event: writtenEvent.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});

type ItemOut = z.infer<typeof itemOut>;

export const batchUpdateEvents = defineTool({
  name: 'batch_update_events',
  toolset: 'calendar',
  title: 'Update several events',
  description: 'To change many events at once (up to 50) as update_event would, each on its own.',
  notes: `Up to ${MAX_BATCH} update_event patches at once; each item finds its event as update_event does and succeeds or fails on its own. Sends progress when the request has a progressToken.`,
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId.optional().describe('For items without one; default: found by eventId.'),
    updates: z
      .array(
        listedAsDescription(
          z.strictObject({
            eventId: eventIdIn,
            calendarId: writeCalendarId
              .optional()
              .describe('Default: the batch calendarId, else found by eventId.'),
            ...updateFields,
          }),
          "{eventId, calendarId?, and any of update_event's event fields}",
        ),
      )
      .min(1)
      .max(MAX_BATCH),
    sendUpdates: sendUpdatesIn,
    timeZone: timeZoneArg,
  }),
  output: z.object({
    timeZone: timeZoneOut,
    succeeded: z.number(),
    failed: z.number(),
    results: z.array(itemOut),
  }),
  exampleIntent: 'Change these ten events at once: mark them all as free and change their colour.',
  example: {
    updates: [
      { eventId: 'event1', reminders: { useDefault: false, overrides: [] }, transparency: 'transparent' },
      { eventId: 'event2', colorId: '5', summary: 'Updated Title' },
    ],
  },
  exampleResult: { succeeded: 2, failed: 0 },
  async run(args, { access, booking, signal, progress, requestId }) {
    // A batch spans calendars: one zone for all its items, the request's or else the key's.
    const zone = callZone(access, args.timeZone, []);
    const results: ItemOut[] = new Array(args.updates.length);
    let next = 0;
    let done = 0;
    const worker = async () => {
      for (let index = next++; index < args.updates.length; index = next++) {
        const update = args.updates[index];
        if (update === undefined) {
          continue;
        }
        try {
          const out = await runUpdate(
            access,
            {
              ...update,
              calendarId: update.calendarId ?? args.calendarId,
              sendUpdates: args.sendUpdates,
              timeZone: zone,
            },
            signal,
            `updates.${index}.`,
            booking,
          );
          results[index] = {
            index,
            eventId: update.eventId,
            ok: true,
            calendarId: out.calendarId,
            changed: out.changed,
            event: out.event,
          };
        } catch (error) {
          results[index] = {
            index,
            eventId: update.eventId,
            ok: false,
            error: isCalgateError(error)
              ? { code: error.code, message: error.message }
              : { code: 'internal', message: `Calgate failed to update this event (request ${requestId}).` },
          };
        }
        done++;
        await progress(done, args.updates.length, `${done} of ${args.updates.length} updated`).catch(
          () => {},
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, args.updates.length) }, worker));
    const failed = results.filter((item) => !item.ok).length;
    return { timeZone: zone, succeeded: results.length - failed, failed, results };
  },
  text(result) {
    const lines = [`${result.succeeded} succeeded, ${result.failed} failed.`];
    for (const item of result.results) {
      lines.push(
        item.ok
          ? `#${item.index} ${item.eventId}: ${item.changed ? 'updated' : 'unchanged'}`
          : `#${item.index} ${item.eventId}: failed (${item.error?.code}): ${item.error?.message}`,
      );
    }
    return `${lines.join('\n')}\n${JSON.stringify(result)}`;
  },
});
