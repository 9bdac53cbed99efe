/**
 * Outlook's mirror rows: an all-day event's row keeps the event's own zone (never shown: the
 * event reads back as it was mapped), and free/busy and windows from the mirror put its dates at
 * midnights of that zone, as Graph does; Google's rows keep the calendar's zone. A declined
 * invitation (the account's own answer, in Graph's responseStatus) is free.
 */
import type { MirrorEventInput, MirrorResourceRow } from '@calgate/store';
import { describe, expect, it } from 'vitest';
import type { GraphEvent } from '../../src/microsoft/graph-types.ts';
import { toCalendarEvent } from '../../src/microsoft/mapping.ts';
import { MICROSOFT_MIRROR_FORMAT } from '../../src/microsoft/sync.ts';
import { mirrorBusy } from '../../src/mirror/busy.ts';
import { CALENDAR_EVENT_FORMAT } from '../../src/mirror/format.ts';
import type { CalendarRef } from '../../src/types.ts';

const CALENDAR: CalendarRef = { id: 'cal_1', externalId: 'AAMkCal', timeZone: 'UTC' };
const ME = 'me@contoso.com';
const HOUR = 3_600_000;
const DAY0 = Date.parse('2026-05-02T00:00:00Z');

function mapped(event: GraphEvent) {
  const result = toCalendarEvent(event, ME);
  if (!result.ok) {
    throw result.error;
  }
  return result.value.event;
}

const row = (input: MirrorEventInput): MirrorResourceRow => ({
  eventId: input.eventId,
  recurringEventId: input.recurringEventId,
  originalStart: input.originalStart?.getTime() ?? null,
  status: input.status,
  etag: input.etag,
  raw: input.raw,
});

const holiday: GraphEvent = {
  id: 'AAMkHoliday',
  subject: 'Holiday in Bangalore',
  isAllDay: true,
  showAs: 'oof',
  originalStartTimeZone: 'India Standard Time',
  start: { dateTime: '2026-05-02T00:00:00.0000000', timeZone: 'India Standard Time' },
  end: { dateTime: '2026-05-03T00:00:00.0000000', timeZone: 'India Standard Time' },
  organizer: { emailAddress: { address: ME } },
  responseStatus: { response: 'organizer' },
};

const declined: GraphEvent = {
  id: 'AAMkDeclined',
  subject: 'Review',
  showAs: 'busy',
  start: { dateTime: '2026-05-02T10:00:00.0000000', timeZone: 'UTC' },
  end: { dateTime: '2026-05-02T11:00:00.0000000', timeZone: 'UTC' },
  attendees: [
    { type: 'required', status: { response: 'none' }, emailAddress: { address: 'team@fabrikam.com' } },
  ],
  organizer: { emailAddress: { address: 'olga@fabrikam.com' } },
  responseStatus: { response: 'declined' },
};

describe("Outlook's mirror rows", () => {
  it("keep an all-day event's own zone, read back without it", () => {
    const event = mapped(holiday);
    const input = MICROSOFT_MIRROR_FORMAT.toMirrorEvent(event);
    expect(input.raw.allDayTimeZone).toBe('Asia/Calcutta');
    const back = row(input);
    expect(MICROSOFT_MIRROR_FORMAT.allDayZone?.(back)).toBe('Asia/Calcutta');
    expect(MICROSOFT_MIRROR_FORMAT.toEvent(back)).toEqual(event);
    // A timed event keeps nothing beside it.
    expect(MICROSOFT_MIRROR_FORMAT.toMirrorEvent(mapped(declined)).raw.allDayTimeZone).toBeUndefined();
  });

  it('answer free/busy as Graph: all-day in its own zone, a declined invitation free', () => {
    const rows = [holiday, declined].map((event) =>
      row(MICROSOFT_MIRROR_FORMAT.toMirrorEvent(mapped(event))),
    );
    const window = { from: DAY0 - 12 * HOUR, to: DAY0 + 36 * HOUR };
    const answer = mirrorBusy(rows, CALENDAR, window, MICROSOFT_MIRROR_FORMAT);
    expect(answer?.intervals).toEqual([{ start: DAY0 - 5.5 * HOUR, end: DAY0 + 18.5 * HOUR }]);
    expect(answer?.events).toEqual([
      {
        eventId: 'AAMkHoliday',
        summary: 'Holiday in Bangalore',
        start: DAY0 - 5.5 * HOUR,
        end: DAY0 + 18.5 * HOUR,
      },
    ]);
    // The six hours before UTC midnight that the holiday covers in its own zone.
    const before = mirrorBusy(rows, CALENDAR, { from: DAY0 - 6 * HOUR, to: DAY0 }, MICROSOFT_MIRROR_FORMAT);
    expect(before?.intervals).toEqual([{ start: DAY0 - 5.5 * HOUR, end: DAY0 }]);
  });

  it("leave the calendar's zone to rows of a format without own zones (Google's rule)", () => {
    const rows = [row(CALENDAR_EVENT_FORMAT.toMirrorEvent(mapped(holiday)))];
    const answer = mirrorBusy(
      rows,
      CALENDAR,
      { from: DAY0 - 12 * HOUR, to: DAY0 + 36 * HOUR },
      CALENDAR_EVENT_FORMAT,
    );
    expect(answer?.intervals).toEqual([{ start: DAY0, end: DAY0 + 24 * HOUR }]);
  });
});
