import type { MirrorEventInput } from '../src/index.ts';

/** A timed single event as a sync hands it to the mirror (2 March 2026, 09:00–10:00 UTC). */
export function mirrorEvent(eventId: string, extra: Partial<MirrorEventInput> = {}): MirrorEventInput {
  // The resource carries the searched text, as Google's does (search reads it from there).
  const searched = Object.fromEntries(
    (['description', 'location', 'attendees'] as const).flatMap((key) =>
      extra[key] === undefined || extra[key] === null ? [] : [[key, extra[key]]],
    ),
  );
  return {
    eventId,
    recurringEventId: null,
    originalStart: null,
    status: 'confirmed',
    summary: eventId,
    description: null,
    location: null,
    allDay: false,
    startAt: new Date('2026-03-02T09:00:00Z'),
    endAt: new Date('2026-03-02T10:00:00Z'),
    startDate: null,
    endDate: null,
    startTimeZone: 'UTC',
    endTimeZone: 'UTC',
    recurrence: [],
    attendees: null,
    updated: new Date('2026-03-01T00:00:00Z'),
    etag: `"${eventId}-1"`,
    raw: { id: eventId, summary: extra.summary ?? eventId, ...searched },
    ...extra,
  };
}
