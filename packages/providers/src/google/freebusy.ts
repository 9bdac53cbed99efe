/**
 * freebusy.query in groups of Google's calendarExpansionMax (50), read back per calendar: a
 * calendar Google reports an error for, or leaves out, gets an `error` and no `busy`, so a caller
 * can never mistake "unknown" for "free".
 */
import { type CalgateError, type ErrorCode, isCalgateError, parseInstant } from '@calgate/core';
import type { calendar_v3 } from '@googleapis/calendar';
import { mergeBusy, type Window } from '../busy.ts';
import type { CalendarRef, FreeBusyResult } from '../types.ts';

/** Google's ceiling on calendars in one freebusy.query. */
export const CALENDAR_EXPANSION_MAX = 50;

/** Distinct upstream ids, in groups Google accepts in one query. */
function freeBusyGroups(calendars: readonly CalendarRef[]): string[][] {
  const ids = [...new Set(calendars.map((calendar) => calendar.externalId))];
  const groups: string[][] = [];
  for (let i = 0; i < ids.length; i += CALENDAR_EXPANSION_MAX) {
    groups.push(ids.slice(i, i + CALENDAR_EXPANSION_MAX));
  }
  return groups;
}

const REASON_CODES: Record<string, ErrorCode> = {
  notFound: 'not_found',
  forbidden: 'permission_denied',
};

function reasonError(reasons: string[]): { code: string; message: string } {
  const [reason = 'unknown'] = reasons;
  const code = REASON_CODES[reason] ?? 'upstream_unavailable';
  const message =
    code === 'not_found'
      ? "Google did not find this calendar or does not show this account its free/busy (reason 'notFound')."
      : `Google could not read this calendar's free/busy (reason '${reasons.join(', ')}'); treat the time as unknown.`;
  return { code, message };
}

/** One calendar's answer inside a freebusy.query response. */
function freeBusyEntry(
  calendarId: string,
  entry: calendar_v3.Schema$FreeBusyCalendar | undefined,
  window: Window,
): FreeBusyResult {
  if (entry === undefined) {
    return {
      calendarId,
      error: {
        code: 'upstream_unavailable',
        message: "Google's free/busy answer left this calendar out; treat the time as unknown.",
      },
    };
  }
  const reasons = (entry.errors ?? []).map((e) => e.reason ?? 'unknown');
  if (reasons.length > 0) {
    return { calendarId, error: reasonError(reasons) };
  }
  const intervals: [number, number][] = [];
  for (const period of entry.busy ?? []) {
    const start = parseInstant(period.start ?? '');
    const end = parseInstant(period.end ?? '');
    if (!start.ok || !end.ok) {
      return {
        calendarId,
        error: {
          code: 'upstream_unavailable',
          message: 'Google answered with a busy period Calgate cannot read; treat the time as unknown.',
        },
      };
    }
    intervals.push([start.value, end.value]);
  }
  return { calendarId, busy: mergeBusy(intervals, window) };
}

/** Every calendar of a failed group carries the group's failure. */
function freeBusyFailure(calendarId: string, error: CalgateError): FreeBusyResult {
  return { calendarId, error: { code: error.code, message: error.message } };
}

/**
 * Runs one query per group in parallel. A group that fails (after the caller's retries) marks
 * each of its calendars with the error; the other groups still answer.
 */
export async function queryFreeBusy(
  calendars: readonly CalendarRef[],
  window: Window,
  query: (body: calendar_v3.Schema$FreeBusyRequest) => Promise<calendar_v3.Schema$FreeBusyResponse>,
  signal?: AbortSignal,
): Promise<FreeBusyResult[]> {
  const answers = new Map<string, FreeBusyResult>();
  await Promise.all(
    freeBusyGroups(calendars).map(async (group) => {
      try {
        const data = await query({
          timeMin: new Date(window.from).toISOString(),
          timeMax: new Date(window.to).toISOString(),
          timeZone: 'UTC',
          calendarExpansionMax: CALENDAR_EXPANSION_MAX,
          items: group.map((id) => ({ id })),
        });
        for (const id of group) {
          answers.set(id, freeBusyEntry(id, data.calendars?.[id], window));
        }
      } catch (error) {
        if (signal?.aborted || !isCalgateError(error)) {
          throw error;
        }
        for (const id of group) {
          answers.set(id, freeBusyFailure(id, error));
        }
      }
    }),
  );
  return calendars.map((calendar) => ({
    ...(answers.get(calendar.externalId) ?? freeBusyEntry(calendar.externalId, undefined, window)),
    calendarId: calendar.id,
  }));
}
