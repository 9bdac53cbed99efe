/**
 * iCalendar text for import_events tests, whichever calendar takes it (local, Google, Outlook,
 * CalDAV): a VCALENDAR of VEVENTs, events of January 2026 (and that month read back) and of
 * March 2027.
 */
import type { Client } from '@modelcontextprotocol/client';
import { expect } from 'vitest';
import { textOf } from './harness.ts';

const CRLF = '\r\n';

/** A VCALENDAR of the events' lines, CRLF-separated as RFC 5545 writes it. */
export function vcalendar(...events: string[][]): string {
  return ['BEGIN:VCALENDAR', 'VERSION:2.0', 'PRODID:-//Test//EN', ...events.flat(), 'END:VCALENDAR', ''].join(
    CRLF,
  );
}

/** A VEVENT of `lines` (a DTSTAMP added). */
export function vevent(lines: string[]): string[] {
  return ['BEGIN:VEVENT', 'DTSTAMP:20260101T000000Z', ...lines, 'END:VEVENT'];
}

/** All day on 6 and 7 January 2026, in Lisbon. */
export const OFFSITE = vevent([
  'UID:offsite@example.com',
  'DTSTART;VALUE=DATE:20260106',
  'DTEND;VALUE=DATE:20260108',
  'SUMMARY:Offsite',
  'LOCATION:Lisbon',
]);
/** An hour from 15:00 UTC on 6 January 2026, given by DURATION. */
export const REVIEW = vevent([
  'UID:review@example.com',
  'DTSTART:20260106T150000Z',
  'DURATION:PT1H',
  'SUMMARY:Review',
]);

/** A single event at 15:00 UTC on 2 March 2027 under one UID, with the summary given. */
export const designReview = (summary: string) =>
  vevent([
    'UID:review-7@example.com',
    'DTSTART:20270302T150000Z',
    'DTEND:20270302T160000Z',
    `SUMMARY:${summary}`,
  ]);
/** All day on 3 and 4 March 2027. */
export const OFFSITE_2027 = vevent([
  'UID:offsite-2027@example.com',
  'DTSTART;VALUE=DATE:20270303',
  'DTEND;VALUE=DATE:20270305',
  'SUMMARY:Offsite',
]);
/**
 * A daily standup from 1 March 2027 at 9:00 in Berlin, five days less the fourth (EXDATE), the
 * second moved to `overrideHour` o'clock.
 */
export const standupSeries = (overrideHour: string) => [
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

/** What import_events answers. */
export interface ImportAnswer {
  imported: number;
  updated: number;
  skipped: number;
  errors: { uid?: string; line?: number; message: string }[];
}

export interface Time {
  dateTime?: string;
  date?: string;
}

export interface ListedEvent {
  id: string;
  summary?: string;
  start: Time;
  end: Time;
  location?: string;
}

/** The calendar's events of January 2026, read in Berlin. */
export async function listJanuary(client: Client, calendarId: string): Promise<ListedEvent[]> {
  const result = await client.callTool({
    name: 'list_events',
    arguments: {
      calendarId,
      timeMin: '2026-01-01T00:00:00Z',
      timeMax: '2026-02-01T00:00:00Z',
      timeZone: 'Europe/Berlin',
      maxResults: 200,
    },
  });
  expect(result.isError, textOf(result)).toBeFalsy();
  return (result.structuredContent as unknown as { events: ListedEvent[] }).events;
}
