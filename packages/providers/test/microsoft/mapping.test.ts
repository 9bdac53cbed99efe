import { describe, expect, it } from 'vitest';
import { allDayZoneOf } from '../../src/microsoft/event-from-graph.ts';
import type { GraphCalendar, GraphEvent } from '../../src/microsoft/graph-types.ts';
import {
  accountEmailOf,
  htmlToText,
  mailboxZoneOf,
  toCalendarEvent,
  toCalendarInfo,
  toGraphEvent,
} from '../../src/microsoft/mapping.ts';

function value<T>(result: { ok: true; value: T } | { ok: false; error: Error }): T {
  if (!result.ok) {
    throw result.error;
  }
  return result.value;
}

function refusal(result: { ok: true } | { ok: false; error: Error }): string {
  if (result.ok) {
    throw new Error('expected a refusal');
  }
  return result.error.message;
}

const SINGLE: GraphEvent = {
  id: 'AAMkAGI2TGuLAAA=',
  '@odata.etag': 'W/"DwAAABYAAABnK9fqJnQkSLtq0tz6bgAAAAAAHw=="',
  changeKey: 'DwAAABYAAABnK9fqJnQkSLtq0tz6bgAAAAAAHw==',
  createdDateTime: '2026-03-01T10:00:00.1234567Z',
  lastModifiedDateTime: '2026-03-02T11:30:00.7654321Z',
  subject: 'Planning',
  body: { contentType: 'text', content: 'Agenda: budget' },
  start: { dateTime: '2026-03-30T07:00:00.0000000', timeZone: 'UTC' },
  end: { dateTime: '2026-03-30T08:00:00.0000000', timeZone: 'UTC' },
  originalStartTimeZone: 'W. Europe Standard Time',
  originalEndTimeZone: 'W. Europe Standard Time',
  isAllDay: false,
  isCancelled: false,
  isOrganizer: true,
  isReminderOn: true,
  reminderMinutesBeforeStart: 15,
  showAs: 'busy',
  sensitivity: 'normal',
  type: 'singleInstance',
  seriesMasterId: null,
  recurrence: null,
  location: { displayName: 'Room 4' },
  locations: [{ displayName: 'Room 4' }],
  attendees: [
    {
      type: 'required',
      status: { response: 'accepted' },
      emailAddress: { name: 'Ann', address: 'ann@example.com' },
    },
    {
      type: 'optional',
      status: { response: 'tentativelyAccepted' },
      emailAddress: { name: 'bob@example.com', address: 'bob@example.com' },
    },
    { type: 'required', status: { response: 'declined' }, emailAddress: { address: 'cy@example.com' } },
    { type: 'required', status: { response: 'none' }, emailAddress: { address: 'Me@Contoso.com' } },
    { type: 'required', status: { response: 'notResponded' }, emailAddress: { address: 'dee@example.com' } },
  ],
  organizer: { emailAddress: { name: 'Me', address: 'me@contoso.com' } },
  onlineMeeting: { joinUrl: 'https://teams.microsoft.com/l/meetup-join/abc' },
  iCalUId: '040000008200E00074C5B7101A82E008',
  webLink: 'https://outlook.office365.com/owa/?itemid=AAMkAGI2TGuLAAA%3D',
};

describe('Graph event → Calgate event', () => {
  it('maps a single event: times in its own zone, people, links and the ETag', () => {
    const facts = value(toCalendarEvent(SINGLE, 'me@contoso.com'));
    expect(facts.type).toBe('singleInstance');
    expect(facts.hidden).toBe(false);
    expect(facts.joinUrl).toBe('https://teams.microsoft.com/l/meetup-join/abc');
    expect(facts.zone).toBe('Europe/Berlin');
    expect(facts.event).toEqual({
      id: 'AAMkAGI2TGuLAAA=',
      status: 'confirmed',
      summary: 'Planning',
      description: 'Agenda: budget',
      location: 'Room 4',
      start: { dateTime: '2026-03-30T09:00:00+02:00', timeZone: 'Europe/Berlin' },
      end: { dateTime: '2026-03-30T10:00:00+02:00', timeZone: 'Europe/Berlin' },
      attendees: [
        { email: 'ann@example.com', displayName: 'Ann', responseStatus: 'accepted' },
        { email: 'bob@example.com', optional: true, responseStatus: 'tentative' },
        { email: 'cy@example.com', responseStatus: 'declined' },
        { email: 'Me@Contoso.com', self: true, responseStatus: 'needsAction' },
        { email: 'dee@example.com', responseStatus: 'needsAction' },
      ],
      organizer: { email: 'me@contoso.com', displayName: 'Me', self: true },
      reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 15 }] },
      transparency: 'opaque',
      visibility: 'default',
      htmlLink: 'https://outlook.office365.com/owa/?itemid=AAMkAGI2TGuLAAA%3D',
      iCalUID: '040000008200E00074C5B7101A82E008',
      etag: 'W/"DwAAABYAAABnK9fqJnQkSLtq0tz6bgAAAAAAHw=="',
      created: '2026-03-01T10:00:00.123Z',
      updated: '2026-03-02T11:30:00.765Z',
    });
  });

  it('maps showAs free to transparent, sensitivity to visibility, no reminder, the organizer attendee', () => {
    const event = value(
      toCalendarEvent({
        ...SINGLE,
        showAs: 'free',
        sensitivity: 'personal',
        isReminderOn: false,
        attendees: [
          { type: 'required', status: { response: 'organizer' }, emailAddress: { address: 'o@example.com' } },
        ],
        '@odata.etag': undefined,
      }),
    ).event;
    expect(event.transparency).toBe('transparent');
    expect(event.visibility).toBe('private');
    expect(event.reminders).toEqual({ useDefault: false, overrides: [] });
    expect(event.attendees).toEqual([
      { email: 'o@example.com', organizer: true, responseStatus: 'accepted' },
    ]);
    expect(event.etag).toBe('W/"DwAAABYAAABnK9fqJnQkSLtq0tz6bgAAAAAAHw=="');
    for (const [sensitivity, visibility] of [
      ['private', 'private'],
      ['confidential', 'confidential'],
    ] as const) {
      expect(value(toCalendarEvent({ ...SINGLE, sensitivity })).event.visibility).toBe(visibility);
    }
    for (const showAs of ['tentative', 'busy', 'oof', 'workingElsewhere', 'unknown'] as const) {
      expect(value(toCalendarEvent({ ...SINGLE, showAs })).event.transparency).toBe('opaque');
    }
  });

  it("writes the end in its own zone when it differs from the start's (a flight)", () => {
    const event = value(
      toCalendarEvent({
        ...SINGLE,
        originalStartTimeZone: 'W. Europe Standard Time',
        originalEndTimeZone: 'Eastern Standard Time',
        start: { dateTime: '2026-06-01T08:00:00.0000000', timeZone: 'UTC' },
        end: { dateTime: '2026-06-01T16:30:00.0000000', timeZone: 'UTC' },
      }),
    ).event;
    expect(event.start).toEqual({ dateTime: '2026-06-01T10:00:00+02:00', timeZone: 'Europe/Berlin' });
    expect(event.end).toEqual({ dateTime: '2026-06-01T12:30:00-04:00', timeZone: 'America/New_York' });
  });

  it('marks an occurrence the organizer cancelled hidden, and cancelled', () => {
    const facts = value(toCalendarEvent({ ...SINGLE, isCancelled: true }));
    expect(facts.hidden).toBe(true);
    expect(facts.event.status).toBe('cancelled');
  });

  it('reads an HTML body as text when Graph ignored the text preference', () => {
    const event = value(
      toCalendarEvent({
        ...SINGLE,
        body: {
          contentType: 'html',
          content: '<html><body><p>Line&nbsp;one</p><p>A &amp; B &lt;3</p></body></html>',
        },
      }),
    ).event;
    expect(event.description).toBe('Line one\nA & B <3');
    expect(htmlToText('a<br/>b<style>x{}</style>&#233;')).toBe('a\nbé');
    expect(htmlToText('it&#x27;s &#39;here&#39;')).toBe("it's 'here'");
    // A reference to no character (a stranger's invitation can hold anything) reads as U+FFFD, never throws.
    expect(htmlToText('a&#99999999;b&#xD800;c&#0;')).toBe('a\ufffdb\ufffdc\ufffd');
  });

  it('joins several locations when the main one is empty', () => {
    const event = value(
      toCalendarEvent({
        ...SINGLE,
        location: { displayName: '' },
        locations: [{ displayName: 'A' }, { displayName: 'B' }],
      }),
    ).event;
    expect(event.location).toBe('A; B');
  });

  it('maps all-day events to dates in their own zone, end exclusive', () => {
    const event = value(
      toCalendarEvent({
        ...SINGLE,
        isAllDay: true,
        originalStartTimeZone: 'Tokyo Standard Time',
        start: { dateTime: '2026-05-01T15:00:00.0000000', timeZone: 'UTC' },
        end: { dateTime: '2026-05-03T15:00:00.0000000', timeZone: 'UTC' },
      }),
    ).event;
    expect(event.start).toEqual({ date: '2026-05-02' });
    expect(event.end).toEqual({ date: '2026-05-04' });
  });

  it("keeps an all-day event's own zone beside it: the one Graph names, else the one it wrote the dates in", () => {
    const named = value(
      toCalendarEvent({
        ...SINGLE,
        isAllDay: true,
        originalStartTimeZone: 'India Standard Time',
        start: { dateTime: '2026-05-02T00:00:00.0000000', timeZone: 'India Standard Time' },
        end: { dateTime: '2026-05-03T00:00:00.0000000', timeZone: 'India Standard Time' },
      }),
    ).event;
    expect(named.start).toEqual({ date: '2026-05-02' });
    expect(allDayZoneOf(named)).toBe('Asia/Calcutta');
    const unnamed = value(
      toCalendarEvent({
        ...SINGLE,
        isAllDay: true,
        originalStartTimeZone: null,
        start: { dateTime: '2026-05-02T00:00:00.0000000', timeZone: 'Pacific Standard Time' },
        end: { dateTime: '2026-05-03T00:00:00.0000000', timeZone: 'Pacific Standard Time' },
      }),
    ).event;
    expect(allDayZoneOf(unnamed)).toBe('America/Los_Angeles');
    expect(allDayZoneOf(value(toCalendarEvent(SINGLE)).event)).toBeUndefined();
  });

  it("carries the account's own answer on its entry, adding the entry for an answer the list does not name", () => {
    const invitation: GraphEvent = {
      ...SINGLE,
      isOrganizer: false,
      organizer: { emailAddress: { address: 'olga@fabrikam.com' } },
      responseStatus: { response: 'declined', time: '2026-03-01T08:00:00Z' },
    };
    const listed = value(toCalendarEvent(invitation, 'me@contoso.com')).event;
    expect(listed.attendees?.find((a) => a.self === true)).toEqual({
      email: 'Me@Contoso.com',
      self: true,
      responseStatus: 'declined',
    });
    const throughList = value(
      toCalendarEvent({ ...invitation, attendees: [SINGLE.attendees?.[0] ?? {}] }, 'me@contoso.com'),
    ).event;
    expect(throughList.attendees).toEqual([
      { email: 'ann@example.com', displayName: 'Ann', responseStatus: 'accepted' },
      { email: 'me@contoso.com', self: true, responseStatus: 'declined' },
    ]);
    // No answer given (or the organizer's own copy): nothing is added.
    for (const response of ['notResponded', 'none', 'organizer'] as const) {
      const event = value(
        toCalendarEvent({ ...invitation, attendees: [], responseStatus: { response } }, 'me@contoso.com'),
      ).event;
      expect(event.attendees).toEqual([]);
    }
    const own = value(toCalendarEvent({ ...SINGLE, attendees: undefined }, 'me@contoso.com')).event;
    expect(own.attendees).toBeUndefined();
  });

  it('maps a series master with its pattern, and an occurrence with its master and original start', () => {
    const master = value(
      toCalendarEvent({
        ...SINGLE,
        id: 'master-1',
        type: 'seriesMaster',
        start: { dateTime: '2026-03-02T09:00:00.0000000', timeZone: 'W. Europe Standard Time' },
        end: { dateTime: '2026-03-02T09:30:00.0000000', timeZone: 'W. Europe Standard Time' },
        recurrence: {
          pattern: {
            type: 'weekly',
            interval: 1,
            daysOfWeek: ['monday', 'thursday'],
            firstDayOfWeek: 'sunday',
          },
          range: {
            type: 'numbered',
            startDate: '2026-03-02',
            numberOfOccurrences: 10,
            recurrenceTimeZone: 'W. Europe Standard Time',
          },
        },
      }),
    );
    expect(master.type).toBe('seriesMaster');
    expect(master.event.recurrence).toEqual(['RRULE:FREQ=WEEKLY;COUNT=10;BYDAY=MO,TH;WKST=SU']);
    const occurrence = value(
      toCalendarEvent({
        ...SINGLE,
        id: 'occurrence-2',
        type: 'occurrence',
        seriesMasterId: 'master-1',
        originalStart: '2026-03-05T08:00:00Z',
        start: { dateTime: '2026-03-05T08:00:00.0000000', timeZone: 'UTC' },
        end: { dateTime: '2026-03-05T08:30:00.0000000', timeZone: 'UTC' },
      }),
    );
    expect(occurrence.type).toBe('occurrence');
    expect(occurrence.event.recurringEventId).toBe('master-1');
    expect(occurrence.event.originalStartTime).toEqual({
      dateTime: '2026-03-05T09:00:00+01:00',
      timeZone: 'Europe/Berlin',
    });
    expect(occurrence.event.recurrence).toBeUndefined();
  });

  it('refuses an event whose times Graph wrote unreadably', () => {
    expect(toCalendarEvent({ ...SINGLE, start: { dateTime: 'soon', timeZone: 'UTC' } }).ok).toBe(false);
  });
});

describe('Calgate event → Graph body', () => {
  it('sends Graph properties only, with Windows zones and a text body', () => {
    const body = value(
      toGraphEvent(
        {
          id: 'calgate0create0token',
          summary: 'Review',
          description: 'Bring notes',
          location: 'Room 1',
          start: { dateTime: '2026-03-30T09:00:00+02:00', timeZone: 'Europe/Amsterdam' },
          end: { dateTime: '2026-03-30T10:00:00+02:00', timeZone: 'Europe/Amsterdam' },
          attendees: [
            { email: 'ann@example.com', displayName: 'Ann' },
            { email: 'bob@example.com', optional: true },
          ],
          reminders: { useDefault: false, overrides: [{ method: 'popup', minutes: 10 }] },
          transparency: 'transparent',
          visibility: 'private',
          recurrence: ['RRULE:FREQ=WEEKLY;BYDAY=MO;COUNT=4'],
        },
        { calendarZone: 'UTC' },
      ),
    );
    expect(body).toEqual({
      subject: 'Review',
      body: { contentType: 'text', content: 'Bring notes' },
      location: { displayName: 'Room 1' },
      start: { dateTime: '2026-03-30T09:00:00', timeZone: 'W. Europe Standard Time' },
      end: { dateTime: '2026-03-30T10:00:00', timeZone: 'W. Europe Standard Time' },
      isAllDay: false,
      recurrence: {
        pattern: { type: 'weekly', interval: 1, daysOfWeek: ['monday'], firstDayOfWeek: 'monday' },
        range: {
          type: 'numbered',
          startDate: '2026-03-30',
          numberOfOccurrences: 4,
          recurrenceTimeZone: 'W. Europe Standard Time',
        },
      },
      attendees: [
        { emailAddress: { address: 'ann@example.com', name: 'Ann' }, type: 'required' },
        { emailAddress: { address: 'bob@example.com' }, type: 'optional' },
      ],
      isReminderOn: true,
      reminderMinutesBeforeStart: 10,
      showAs: 'free',
      sensitivity: 'private',
      transactionId: 'calgate0create0token',
    });
  });

  it('sends only what a patch gives; all-day dates at midnight in the calendar zone', () => {
    expect(value(toGraphEvent({ summary: 'Renamed' }, { calendarZone: 'UTC' }))).toEqual({
      subject: 'Renamed',
    });
    expect(
      value(
        toGraphEvent(
          { start: { date: '2026-12-24' }, end: { date: '2026-12-25' } },
          { calendarZone: 'Europe/London' },
        ),
      ),
    ).toEqual({
      start: { dateTime: '2026-12-24T00:00:00', timeZone: 'GMT Standard Time' },
      end: { dateTime: '2026-12-25T00:00:00', timeZone: 'GMT Standard Time' },
      isAllDay: true,
    });
    expect(value(toGraphEvent({ recurrence: [] }, { calendarZone: 'UTC' }))).toEqual({ recurrence: null });
    expect(
      value(
        toGraphEvent(
          { recurrence: ['RRULE:FREQ=DAILY'] },
          { calendarZone: 'UTC', currentStart: { dateTime: '2026-03-02T09:00:00Z' } },
        ),
      ).recurrence?.pattern,
    ).toEqual({ type: 'daily', interval: 1 });
    expect(value(toGraphEvent({ reminders: { useDefault: false } }, { calendarZone: 'UTC' }))).toEqual({
      isReminderOn: false,
    });
  });

  it('refuses what Outlook cannot store, saying what would work', () => {
    expect(refusal(toGraphEvent({ colorId: '5' }, { calendarZone: 'UTC' }))).toMatch(/do not take colorId/);
    expect(refusal(toGraphEvent({ status: 'cancelled' }, { calendarZone: 'UTC' }))).toMatch(
      /delete the event/,
    );
    expect(
      refusal(
        toGraphEvent(
          { start: { date: '2026-01-01' }, end: { dateTime: '2026-01-01T10:00:00Z' } },
          { calendarZone: 'UTC' },
        ),
      ),
    ).toMatch(/both be dates/);
    expect(
      refusal(
        toGraphEvent(
          {
            reminders: {
              useDefault: false,
              overrides: [
                { method: 'popup', minutes: 5 },
                { method: 'email', minutes: 60 },
              ],
            },
          },
          { calendarZone: 'UTC' },
        ),
      ),
    ).toMatch(/one reminder per event/);
    expect(refusal(toGraphEvent({ recurrence: ['RRULE:FREQ=DAILY'] }, { calendarZone: 'UTC' }))).toMatch(
      /give start with recurrence/,
    );
    expect(
      refusal(
        toGraphEvent(
          {
            start: { dateTime: '2026-03-02T09:00:00Z' },
            end: { dateTime: '2026-03-02T10:00:00Z' },
            recurrence: ['RRULE:FREQ=HOURLY'],
          },
          { calendarZone: 'UTC' },
        ),
      ),
    ).toMatch(/Outlook cannot store the recurrence/);
    expect(
      refusal(
        toGraphEvent(
          { start: { dateTime: '2026-03-02T09:00:00', timeZone: 'Antarctica/Troll' } },
          { calendarZone: 'UTC' },
        ),
      ),
    ).toMatch(/no Windows equivalent/);
  });
});

describe('calendars and the account', () => {
  const base: GraphCalendar = {
    id: 'AAMkCal1',
    name: 'Calendar',
    color: 'auto',
    hexColor: '',
    isDefaultCalendar: true,
    canEdit: true,
    owner: { name: 'Me', address: 'me@contoso.com' },
  };

  it('maps the default calendar as primary and owned, in the mailbox zone', () => {
    expect(toCalendarInfo(base, 'Europe/Berlin', 'me@contoso.com')).toEqual({
      externalId: 'AAMkCal1',
      summary: 'Calendar',
      timeZone: 'Europe/Berlin',
      primary: true,
      accessRole: 'owner',
    });
  });

  it('makes canEdit false read-only, a shared editable calendar writer, and carries its colour', () => {
    expect(toCalendarInfo({ ...base, canEdit: false }, 'UTC', 'me@contoso.com').accessRole).toBe('reader');
    expect(toCalendarInfo({ ...base, canEdit: null }, 'UTC', 'me@contoso.com').accessRole).toBe('reader');
    const shared = toCalendarInfo(
      { ...base, isDefaultCalendar: false, owner: { address: 'boss@contoso.com' }, hexColor: '#E3008C' },
      'UTC',
      'me@contoso.com',
    );
    expect(shared).toMatchObject({ primary: false, accessRole: 'writer', backgroundColor: '#e3008c' });
    expect(toCalendarInfo({ ...base, color: 'lightGreen' }, 'UTC', 'me@contoso.com').backgroundColor).toBe(
      '#87d28e',
    );
  });

  it('takes the account email from mail, else userPrincipalName', () => {
    expect(
      accountEmailOf({
        mail: 'ann@contoso.com',
        userPrincipalName: 'ann_contoso.com#EXT#@x.onmicrosoft.com',
      }),
    ).toBe('ann@contoso.com');
    expect(accountEmailOf({ mail: null, userPrincipalName: 'ann@contoso.onmicrosoft.com' })).toBe(
      'ann@contoso.onmicrosoft.com',
    );
    expect(accountEmailOf({})).toBeUndefined();
  });

  it('reads the mailbox zone by its Windows name, UTC when it cannot', () => {
    expect(mailboxZoneOf({ timeZone: 'Pacific Standard Time' })).toBe('America/Los_Angeles');
    expect(mailboxZoneOf({ timeZone: 'Europe/Paris' })).toBe('Europe/Paris');
    expect(mailboxZoneOf({ timeZone: 'tzone://Microsoft/Custom' })).toBe('UTC');
    expect(mailboxZoneOf(undefined)).toBe('UTC');
  });
});
