import type { EventOccurrence, OccurrenceCalendar, OccurrenceEvent } from '../../src/index.ts';

export interface OccurrenceSpec extends Partial<OccurrenceEvent> {
  calendar?: Partial<OccurrenceCalendar>;
}

/** An occurrence on a Berlin calendar named "Work", starting Monday 2026-01-05 09:00 UTC unless told otherwise. */
export function occurrence(spec: OccurrenceSpec = {}): EventOccurrence {
  const { calendar, ...event } = spec;
  return {
    calendar: { id: 'cal_work', summary: 'Work', timeZone: 'Europe/Berlin', ...calendar },
    event: {
      id: 'evt1',
      start: { dateTime: '2026-01-05T09:00:00Z' },
      end: { dateTime: '2026-01-05T10:00:00Z' },
      ...event,
    },
  };
}
