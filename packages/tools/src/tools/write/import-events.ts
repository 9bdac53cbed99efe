import { CalgateError, isCalgateError } from '@calgate/core';
import {
  type CalendarEvent,
  type CalendarRef,
  type EventDateTime,
  type EventInput,
  type EventPatch,
  exdateKeys,
  expandResource,
  fetchFeed,
  type IcsIndex,
  type IcsResource,
  type IcsSource,
  instantOf as icsInstant,
  indexText,
  indexZones,
  instanceKey,
  readTime,
  readUidResources,
  resourceMaster,
  SpooledFeed,
  statusOf,
  textSource,
} from '@calgate/providers';
import { z } from 'zod';
import type { CalendarHandle } from '../../access.ts';
import { defineTool } from '../../catalogue.ts';
import { writeCalendarId } from '../../write-schemas.ts';

/** Events written together (new ones in one statement where the provider can). */
const BATCH = 250;
/** Writes in flight at once within a batch. */
const PARALLEL = 8;
/** Errors listed in an answer; the count says how many there were. */
const MAX_ERRORS = 100;

interface Prepared {
  uid: string;
  master: EventInput | undefined;
  cancelled: boolean;
  overrides: { instance: string; patch: EventPatch | undefined }[];
  /** Instance keys of the master's EXDATEs. */
  exdates: string[];
}

interface ImportError {
  uid?: string;
  line?: number;
  message: string;
}

function messageOf(error: unknown): string {
  return isCalgateError(error) ? error.message : error instanceof Error ? error.message : String(error);
}

/**
 * The fields of an event read from iCalendar that a write carries. Imported text is a file's,
 * as an invitation's or a synced calendar's is, not words the agent wrote: it is screened where
 * any calendar text is, when an answer shows it (screenAnswer), not here (the write firewall
 * costs about a millisecond per text, which a 10,000-event file cannot afford).
 */
function writable(event: CalendarEvent): EventPatch {
  const out: EventPatch = { start: event.start, end: event.end };
  for (const field of ['summary', 'description', 'location'] as const) {
    const value = event[field];
    if (value !== undefined) {
      out[field] = value;
    }
  }
  if (event.attendees !== undefined) {
    out.attendees = event.attendees;
  }
  if (event.transparency !== undefined) {
    out.transparency = event.transparency;
  }
  if (event.visibility !== undefined) {
    out.visibility = event.visibility;
  }
  out.status = event.status === 'tentative' ? 'tentative' : 'confirmed';
  return out;
}

function sameTime(a: EventDateTime, b: EventDateTime): boolean {
  if (a.date !== undefined || b.date !== undefined) {
    return a.date === b.date;
  }
  return (
    Date.parse(a.dateTime ?? '') === Date.parse(b.dateTime ?? '') &&
    (b.timeZone === undefined || a.timeZone === b.timeZone)
  );
}

/** Whether the stored event already is what the file says: importing it again changes nothing. */
function sameEvent(stored: CalendarEvent, wanted: EventInput): boolean {
  const emails = (list: { email: string }[] | undefined) =>
    JSON.stringify((list ?? []).map((attendee) => attendee.email.toLowerCase()).sort());
  return (
    (stored.summary ?? '') === (wanted.summary ?? '') &&
    (stored.description ?? '') === (wanted.description ?? '') &&
    (stored.location ?? '') === (wanted.location ?? '') &&
    sameTime(stored.start, wanted.start) &&
    sameTime(stored.end, wanted.end) &&
    JSON.stringify(stored.recurrence ?? []) === JSON.stringify(wanted.recurrence ?? []) &&
    (stored.status === 'tentative') === (wanted.status === 'tentative') &&
    (stored.transparency ?? 'opaque') === (wanted.transparency ?? 'opaque') &&
    (stored.visibility ?? 'default') === (wanted.visibility ?? 'default') &&
    emails(stored.attendees) === emails(wanted.attendees)
  );
}

/** A resource as writes: the master (or none) and its overrides by instance suffix. */
function prepare(resource: IcsResource): Prepared {
  const masterEvent = resourceMaster(resource);
  const cancelled = resource.master !== undefined && statusOf(resource.master) === 'cancelled';
  const master =
    masterEvent === undefined
      ? undefined
      : {
          ...writable(masterEvent),
          start: masterEvent.start,
          end: masterEvent.end,
          ...(masterEvent.recurrence === undefined ? {} : { recurrence: masterEvent.recurrence }),
        };
  const overrides = resource.overrides.map((override) => {
    const rid = readTime(override, 'recurrence-id', resource.zones);
    if (rid === undefined) {
      throw new CalgateError('invalid_argument', 'An override has no readable RECURRENCE-ID.');
    }
    const instance = instanceKey(rid, rid.allDay ? rid.naive : icsInstant(rid));
    if (statusOf(override) === 'cancelled') {
      return { instance, patch: undefined };
    }
    const [placed] = expandResource({ ...resource, master: undefined, overrides: [override] });
    if (placed === undefined) {
      throw new CalgateError('invalid_argument', `The override of ${instance} has no readable times.`);
    }
    return { instance, patch: writable(placed) };
  });
  return {
    uid: resource.uid,
    master: master as EventInput | undefined,
    cancelled,
    overrides,
    exdates: exdateKeys(resource),
  };
}

/**
 * For a calendar that stores a series' RRULE alone and gives occurrences ids of their own
 * (Outlook: CalendarProvider.occurrenceId), EXDATEs become deleted occurrences written after the
 * series, as an override cancelling that occurrence would be. RDATEs stay, and the calendar
 * refuses that event saying why.
 */
function ruleOnly(item: Prepared): Prepared {
  if (item.master?.recurrence === undefined || item.exdates.length === 0) {
    return item;
  }
  const named = new Set(item.overrides.map((override) => override.instance));
  return {
    ...item,
    master: {
      ...item.master,
      recurrence: item.master.recurrence.filter((line) => !/^EXDATE[;:]/i.test(line)),
    },
    overrides: [
      ...item.overrides,
      ...item.exdates.filter((key) => !named.has(key)).map((instance) => ({ instance, patch: undefined })),
    ],
  };
}

async function inTurns<T>(items: readonly T[], work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(PARALLEL, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next] as T;
      next += 1;
      await work(item);
    }
  });
  await Promise.all(lanes);
}

async function writeOverrides(handle: CalendarHandle, masterId: string, prepared: Prepared): Promise<void> {
  const occurrenceId = handle.provider.occurrenceId?.bind(handle.provider);
  for (const { instance, patch } of prepared.overrides) {
    const id =
      occurrenceId === undefined
        ? `${masterId}_${instance}`
        : await occurrenceId(handle.ref, masterId, instance);
    if (id === undefined) {
      if (patch === undefined) {
        continue;
      }
      throw new CalgateError('invalid_argument', `The series has no occurrence at ${instance} to change.`);
    }
    if (patch === undefined) {
      await handle.provider.deleteEvent(handle.ref, id).catch((error: unknown) => {
        if (!(isCalgateError(error) && error.code === 'not_found')) {
          throw error;
        }
      });
    } else {
      await handle.provider.patchEvent(handle.ref, id, patch);
    }
  }
}

export const importEvents = defineTool({
  name: 'import_events',
  toolset: 'ics',
  title: 'Import events',
  description:
    'Import the events of an .ics file, iCalendar text or an http(s)/webcal URL, keeping UIDs: importing again updates, never duplicates.',
  access: 'write',
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarId: writeCalendarId,
    ics: z.string().min(1).optional(),
    url: z.string().min(1).max(2048).optional(),
  }),
  output: z.object({
    calendarId: z.string(),
    imported: z.number(),
    updated: z.number(),
    skipped: z.number(),
    errors: z.array(
      z.object({ uid: z.string().optional(), line: z.number().optional(), message: z.string() }),
    ),
  }),
  exampleIntent: 'Import the events of this .ics file into my calendar.',
  example: {
    calendarId: 'primary',
    ics: 'BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Example//EN\r\nBEGIN:VEVENT\r\nUID:team-offsite-2026@example.com\r\nDTSTAMP:20260101T000000Z\r\nDTSTART;VALUE=DATE:20260610\r\nDTEND;VALUE=DATE:20260612\r\nSUMMARY:Team offsite\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n',
  },
  exampleResult: { imported: 1, updated: 0, skipped: 0, errors: [] },
  async run(args, { access, signal, budget, outbound }) {
    if ((args.ics === undefined) === (args.url === undefined)) {
      throw new CalgateError(
        'invalid_argument',
        'Give exactly one of ics (the text of a VCALENDAR) or url (an http(s) or webcal address).',
      );
    }
    const handle = access.writable(args.calendarId);
    if (args.ics !== undefined) {
      // The text came in the request; it may be as large as the request's answer-size budget.
      // Its answer is spent from that budget as any answer is, after the import.
      const bytes = Buffer.byteLength(args.ics, 'utf8');
      const limit = budget.limit('answerBytes');
      if (bytes > limit) {
        throw new CalgateError(
          'invalid_argument',
          `The ics text is ${bytes} bytes and import_events takes at most ${limit} bytes of text (MCP_MAX_ANSWER_BYTES), so nothing was imported: serve the file at an http(s) or webcal address and import it with {calendarId, url} instead.`,
        );
      }
    }
    const find = handle.provider.findByICalUIDs?.bind(handle.provider);
    if (find === undefined) {
      throw new CalgateError(
        'invalid_argument',
        `Calendar '${handle.calendar.id}' cannot take imports: its provider cannot find events by UID.`,
      );
    }
    // The text is indexed in one pass (each UID's VEVENTs by range, wherever in the file they
    // stand), then read a batch of UIDs at a time: the parsed events of the whole file are never
    // held at once. A feed is written to a temporary file as it arrives, never held as text.
    if (args.ics !== undefined) {
      return importIndexed(handle, find, indexText(args.ics), textSource(args.ics), signal);
    }
    const feed = new SpooledFeed();
    try {
      await feed.open();
      await fetchFeed(args.url ?? '', {
        policy: { allowPrivate: outbound?.allowPrivate ?? false },
        signal,
        onChunk: (chunk) => feed.write(chunk),
      });
      return await importIndexed(handle, find, feed.finish(), feed, signal);
    } finally {
      await feed.close();
    }
  },
});

/**
 * Imports an indexed text: one look-up of every UID, then BATCH UIDs at a time read, prepared
 * and written. A UID whose events cannot be read is reported and changes nothing.
 */
async function importIndexed(
  handle: CalendarHandle,
  find: (calendar: CalendarRef, uids: readonly string[]) => Promise<Map<string, string>>,
  index: IcsIndex,
  source: IcsSource,
  signal: AbortSignal,
): Promise<{
  calendarId: string;
  imported: number;
  updated: number;
  skipped: number;
  errors: ImportError[];
}> {
  const errors: ImportError[] = [];
  const fail = (uid: string | undefined, message: string) => {
    const line = uid === undefined ? undefined : index.uids.get(uid)?.line;
    errors.push({ ...(uid ? { uid } : {}), ...(line === undefined ? {} : { line }), message });
  };
  for (const _ of index.missingUid) {
    fail(undefined, 'A VEVENT has no UID; every imported event needs one.');
  }
  const { root, zones } = await indexZones(index, source, handle.ref.timeZone);
  let imported = 0;
  let updated = 0;
  let skipped = 0;
  // One look-up for the whole file: a remote calendar answers it with one query.
  const existing = await find(handle.ref, [...index.uids.keys()]);
  const uids = [...index.uids.entries()];
  for (let at = 0; at < uids.length; at += BATCH) {
    signal.throwIfAborted();
    const batch: Prepared[] = [];
    for (const [uid, entry] of uids.slice(at, at + BATCH)) {
      let resources: IcsResource[];
      try {
        resources = await readUidResources(uid, entry, source, root, zones);
      } catch (error) {
        fail(uid, messageOf(error));
        continue;
      }
      for (const resource of resources) {
        try {
          const prepared = prepare(resource);
          batch.push(handle.provider.occurrenceId === undefined ? prepared : ruleOnly(prepared));
        } catch (error) {
          fail(uid, messageOf(error));
        }
      }
    }
    // New events go in one statement where the provider can; a batch it refuses goes one by one,
    // so the error names the event.
    const fresh = batch.filter(
      (item) => item.master !== undefined && !item.cancelled && !existing.has(item.uid),
    );
    const inserted = new Set<Prepared>();
    if (handle.provider.insertEvents !== undefined && fresh.length > 0) {
      try {
        const ids = await handle.provider.insertEvents(
          handle.ref,
          fresh.map((item) => ({ ...(item.master as EventInput), iCalUID: item.uid })),
        );
        fresh.forEach((item, index) => {
          existing.set(item.uid, ids[index] as string);
          inserted.add(item);
        });
      } catch (error) {
        if (!isCalgateError(error)) {
          throw error;
        }
      }
    }
    // The stored copies of the batch's events, in one request where the provider can.
    const compared = batch.flatMap((item) => {
      const id = existing.get(item.uid);
      return id !== undefined && !inserted.has(item) && item.master !== undefined && !item.cancelled
        ? [id]
        : [];
    });
    const stored =
      handle.provider.getEvents !== undefined && compared.length > 0
        ? await handle.provider.getEvents(handle.ref, compared)
        : new Map<string, CalendarEvent>();
    await inTurns(batch, async (item) => {
      const id = existing.get(item.uid);
      if (inserted.has(item)) {
        try {
          await writeOverrides(handle, id as string, item);
        } catch (error) {
          if (!isCalgateError(error)) {
            throw error;
          }
          fail(item.uid, error.message);
        }
        imported += 1;
        return;
      }
      try {
        if (item.master === undefined) {
          // Overrides alone change a series imported before; without it there is nothing to change.
          if (id === undefined) {
            skipped += 1;
            return;
          }
          await writeOverrides(handle, id, item);
          updated += 1;
        } else if (item.cancelled) {
          if (id === undefined) {
            skipped += 1;
            return;
          }
          await handle.provider.deleteEvent(handle.ref, id);
          updated += 1;
        } else if (id === undefined) {
          const event = await handle.provider.insertEvent(handle.ref, {
            ...item.master,
            iCalUID: item.uid,
          });
          await writeOverrides(handle, event.id, item);
          imported += 1;
        } else {
          const current = stored.get(id) ?? (await handle.provider.getEvent(handle.ref, id, signal));
          if (sameEvent(current, item.master) && item.overrides.length === 0) {
            skipped += 1;
            return;
          }
          const { recurrence, ...rest } = item.master;
          await handle.provider.patchEvent(handle.ref, id, { ...rest, recurrence: recurrence ?? [] });
          await writeOverrides(handle, id, item);
          updated += 1;
        }
      } catch (error) {
        if (!isCalgateError(error)) {
          throw error;
        }
        fail(item.uid, error.message);
      }
    });
  }
  return {
    calendarId: handle.calendar.id,
    imported,
    updated,
    skipped,
    errors: errors.slice(0, MAX_ERRORS),
  };
}
