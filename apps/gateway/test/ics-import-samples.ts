/**
 * iCalendar text the import_events tests import into provider calendars (Google, CalDAV): a
 * single event, an all-day one, and a daily series with an override (moved to `overrideHour`) and
 * an EXDATE, each under a fixed UID so that importing again finds the same events.
 */
const CRLF = '\r\n';

export function vcalendar(...events: string[][]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Test//EN', ...events.flat(), 'END:VCALENDAR', ''].join(
    CRLF,
  );
}

export function vevent(lines: string[]): string[] {
  return ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT'];
}

export const single = (summary: string) =>
  vevent([
    'UID:review-7@example.com',
    'DTSTART:20270302T150000Z',
    'DTEND:20270302T160000Z',
    `SUMMARY:${summary}`,
  ]);
export const OFFSITE = vevent([
  'UID:offsite-2027@example.com',
  'DTSTART;VALUE=DATE:20270303',
  'DTEND;VALUE=DATE:20270305',
  'SUMMARY:Offsite',
]);
export const standup = (overrideHour: string) => [
  ...vevent([
    'UID:standup-series@example.com',
    'DTSTART;TZID=Europe/Berlin:20270301T090000',
    'DTEND;TZID=Europe/Berlin:20270301T091500',
    'RRULE:FREQ=DAILY;COUNT=5',
    'EXDATE;TZID=Europe/Berlin:20270304T090000',
    'SUMMARY:Standup',
  ]),
  ...vevent([
    'UID:standup-series@example.com',
    'RECURRENCE-ID;TZID=Europe/Berlin:20270302T090000',
    `DTSTART;TZID=Europe/Berlin:20270302T${overrideHour}0000`,
    `DTEND;TZID=Europe/Berlin:20270302T${overrideHour}1500`,
    'SUMMARY:Standup (late)',
  ]),
];

/** An event of the imported week as list_events returns it. */
export interface Listed {
  id: string;
  summary?: string;
  start: { dateTime?: string; date?: string };
}
