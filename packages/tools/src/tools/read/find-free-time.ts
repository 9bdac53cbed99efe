import { CalgateError } from '@calgate/core';
import { z } from 'zod';
import type { CalendarHandle } from '../../access.ts';
import { defineTool } from '../../catalogue.ts';
import { format, formatText } from '../../format.ts';
import { busyIntervalsOf, freeBusyBatches, needsUpstreamFreeBusy, oldestSync } from '../../free-busy.ts';
import { FAN_OUT_PER_ACCOUNT, FAN_OUT_TOTAL, forEachLimited } from '../../merge.ts';
import { instantOut } from '../../range.ts';
import { AnswerMemo, sharedIntervals } from '../availability/answer-memo.ts';
import {
  availabilityWindow,
  calendarsToRead,
  callZone,
  range,
  syncedAtOut,
  windowInput,
} from '../availability/window.ts';
import { addLedgerBusy, prefetchLedger } from '../bookings/ledger-busy.ts';
import { calendarIds } from './common.ts';
import { availability, clipped, type Span } from './free-slots.ts';

/** Answers made from mirrors' shared busy time alone (see answer-memo.ts). */
const memo = new AnswerMemo<object>();

export const findFreeTime = defineTool({
  name: 'find_free_time',
  toolset: 'calendar',
  title: 'Find free time',
  description: "To compare calendars: each one's busy times and the free time common to all.",
  notes:
    'Busy blocks per calendar and free slots common to all, within at most 92 days. A calendar whose free/busy cannot be read is unknown, never free: its open ranges are listed as unknown, not free.',
  access: 'read',
  annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: true },
  input: z.strictObject({
    calendarIds,
    ...windowInput,
    minDurationMinutes: z.number().int().min(1).max(1440).optional(),
    format,
  }),
  output: z.object({
    timeZone: z.string(),
    timeMin: z.string(),
    timeMax: z.string(),
    calendarIds: z.array(z.string()),
    busy: z.array(range.extend({ calendarId: z.string() })),
    unknownCalendars: z.array(z.object({ calendarId: z.string(), code: z.string(), message: z.string() })),
    free: z.array(range),
    unknown: z.array(range).describe('Free on calendars that answered; others did not.'),
    syncedAt: syncedAtOut,
  }),
  exampleIntent:
    "Compare my calendar with Ann's: when is each of us busy on Thursday and when are we both free?",
  example: {
    timeMin: '2026-04-21T08:00:00-07:00',
    timeMax: '2026-04-21T18:00:00-07:00',
    minDurationMinutes: 30,
  },
  exampleResult: {
    timeZone: 'America/New_York',
    timeMin: '2026-04-21T11:00:00-04:00',
    timeMax: '2026-04-21T21:00:00-04:00',
    free: [{ start: '2026-04-21T11:00:00-04:00', end: '2026-04-21T21:00:00-04:00' }],
  },
  async run(args, { access, booking, signal, now }) {
    const { handles, unavailable } = calendarsToRead(access, args.calendarIds);
    const zone = callZone(access, args.timeZone, handles);
    const span: Span = availabilityWindow(args, zone, now());
    const timeMin = new Date(span.start).toISOString();
    const timeMax = new Date(span.end).toISOString();

    const answers = new Map<string, Span[] | { code: string; message: string }>();
    /** Calendars answered by shared intervals: those intervals, and what answers holds for them. */
    const shared = new Map<string, { from: object; busy: Span[] }>();
    let syncedAt: string | undefined;
    const ledger = prefetchLedger(booking, handles, span);
    for (const { calendarId, error } of unavailable) {
      answers.set(calendarId, { code: error.code, message: error.message });
    }
    await forEachLimited(
      freeBusyBatches(handles),
      (batch) => batch[0]?.calendar.connectionId ?? '',
      { perGroup: FAN_OUT_PER_ACCOUNT, total: FAN_OUT_TOTAL },
      async (batch) => {
        const provider = (batch[0] as CalendarHandle).provider;
        try {
          const results = await provider.freeBusy(
            batch.map((handle) => handle.ref),
            timeMin,
            timeMax,
            signal,
            { fresh: needsUpstreamFreeBusy(batch[0] as CalendarHandle) },
          );
          for (const handle of batch) {
            const result = results.find((r) => r.calendarId === handle.calendar.id);
            const busy = busyIntervalsOf(result);
            answers.set(handle.calendar.id, busy);
            if (Array.isArray(busy)) {
              syncedAt = oldestSync(syncedAt, result?.syncedAt);
              if (sharedIntervals(result?.intervals)) {
                shared.set(handle.calendar.id, { from: result.intervals, busy });
              }
            }
          }
        } catch (error) {
          if (!(error instanceof CalgateError)) {
            throw error;
          }
          for (const handle of batch) {
            answers.set(handle.calendar.id, { code: error.code, message: error.message });
          }
        }
      },
    );
    // Confirmed bookings are busy too, so this agrees with book_slot.
    await addLedgerBusy(booking, handles, span, answers, signal, ledger);
    // Every calendar answered by shared intervals, and no booking added: the answer made from
    // the same intervals before is this one.
    const memoKey =
      unavailable.length === 0 &&
      handles.length > 0 &&
      handles.every((handle) => answers.get(handle.calendar.id) === shared.get(handle.calendar.id)?.busy)
        ? AnswerMemo.key(
            handles.map(
              (handle) => [handle.calendar.id, shared.get(handle.calendar.id)?.from as object] as const,
            ),
            `${zone}\u0000${span.start}\u0000${span.end}\u0000${args.minDurationMinutes ?? 0}\u0000${syncedAt ?? ''}`,
          )
        : undefined;
    const made = memoKey === undefined ? undefined : memo.get(memoKey);
    if (made !== undefined) {
      return made as typeof answer;
    }

    const show = (ms: number) => instantOut(ms, zone);
    const ranges = (spans: readonly Span[]) => spans.map((s) => ({ start: show(s.start), end: show(s.end) }));
    const calendarIds = [...handles.map((h) => h.calendar.id), ...unavailable.map((u) => u.calendarId)];
    const busy: { calendarId: string; start: number; end: number }[] = [];
    const unknownCalendars: { calendarId: string; code: string; message: string }[] = [];
    const perCalendar: (Span[] | null)[] = [];
    for (const id of calendarIds) {
      const answer = answers.get(id) ?? { code: 'upstream_unavailable', message: 'No free/busy answer.' };
      if (Array.isArray(answer)) {
        const own = clipped(answer, span);
        busy.push(...own.map((s) => ({ calendarId: id, ...s })));
        perCalendar.push(own);
      } else {
        unknownCalendars.push({ calendarId: id, code: answer.code, message: answer.message });
        perCalendar.push(null);
      }
    }
    busy.sort((a, b) => a.start - b.start || a.end - b.end);
    const merged = availability(perCalendar, span, (args.minDurationMinutes ?? 0) * 60_000);
    const answer = {
      timeZone: zone,
      timeMin: show(span.start),
      timeMax: show(span.end),
      calendarIds,
      busy: busy.map((b) => ({ calendarId: b.calendarId, start: show(b.start), end: show(b.end) })),
      unknownCalendars,
      free: ranges(merged.free),
      unknown: ranges(merged.unknown),
      ...(syncedAt === undefined ? {} : { syncedAt }),
    };
    if (memoKey !== undefined) {
      memo.set(memoKey, answer);
    }
    return answer;
  },
  text: (result, args) => formatText(result, args.format),
});
