import type { CalendarEvent } from '@calgate/providers';
import { describe, expect, it } from 'vitest';
import { EVENT_EXTRA_FIELDS } from '../src/schemas.ts';
import { EVENT_OUT_FIELDS, toEventOut } from '../src/shape.ts';

const full: CalendarEvent = {
  updated: '2026-11-02T10:00:00.000Z',
  htmlLink: 'https://calendar.example/e1',
  colorId: '5',
  visibility: 'private',
  transparency: 'transparent',
  reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 10 }] },
  organizer: { email: 'ada@example.com' },
  attendees: [{ email: 'bob@example.com' }],
  originalStartTime: { dateTime: '2026-12-01T09:00:00Z' },
  recurringEventId: 'series1',
  recurrence: ['RRULE:FREQ=DAILY'],
  end: { dateTime: '2026-12-01T10:00:00Z' },
  start: { dateTime: '2026-12-01T09:00:00Z' },
  location: 'Room 4',
  description: 'Agenda',
  summary: 'Review',
  status: 'confirmed',
  id: 'e1',
  iCalUID: 'e1@example.com',
  etag: '"1"',
  sequence: 3,
  created: '2026-11-01T10:00:00.000Z',
};

describe('toEventOut', () => {
  it("writes the calendar id, then every field the output schema knows in Google's order", () => {
    const out = toEventOut('cal_1', full) as unknown as Record<string, unknown>;
    expect(Object.keys(out)).toEqual(['calendarId', ...EVENT_OUT_FIELDS]);
    expect(new Set(EVENT_OUT_FIELDS)).toEqual(
      new Set(['id', 'status', 'summary', 'start', 'end', ...EVENT_EXTRA_FIELDS]),
    );
    for (const key of EVENT_OUT_FIELDS) {
      expect(out[key]).toBe((full as unknown as Record<string, unknown>)[key]);
    }
  });

  it('leaves out absent and null fields, the defaults, and fields the schema does not know', () => {
    const event = {
      id: 'e2',
      status: 'confirmed',
      start: { date: '2026-12-01' },
      end: { date: '2026-12-02' },
      summary: null,
      location: undefined,
      transparency: 'opaque',
      visibility: 'default',
      etag: '"2"',
      extendedProperties: { private: { a: '1' } },
    } as unknown as CalendarEvent;
    expect(toEventOut('cal_2', event)).toEqual({
      calendarId: 'cal_2',
      id: 'e2',
      status: 'confirmed',
      start: { date: '2026-12-01' },
      end: { date: '2026-12-02' },
    });
    expect(Object.keys(toEventOut('cal_2', event))).toEqual(['calendarId', 'id', 'status', 'start', 'end']);
  });
});
