import { describe, expect, it } from 'vitest';
import { compileQuery, type EventOccurrence, OccurrenceSet, PreparedOccurrence } from '../src/index.ts';
import { occurrence } from './support/occurrences.ts';

/** Whether `event` matches, asserting that the one-occurrence test and the set selection agree. */
function matches(query: string, event: EventOccurrence | PreparedOccurrence): boolean {
  const compiled = compileQuery(query);
  if (!compiled.ok) {
    throw new Error(`'${query}' did not parse: ${compiled.error.message}`);
  }
  const single = compiled.value.matches(event);
  const set = new OccurrenceSet([occurrence({ summary: 'zzz unrelated' }), event]);
  expect(set.indexesOf(compiled.value).includes(1), `${query}: set selection`).toBe(single);
  return single;
}

const titled = (summary: string) => occurrence({ summary });

describe('title, description, calendar: word-sequence matches', () => {
  it('matches whole words, not parts of words', () => {
    expect(matches('title:ac', titled('AC sync'))).toBe(true);
    expect(matches('title:ac', titled('Jack'))).toBe(false);
    expect(matches('title:standup', titled('Daily Standup'))).toBe(true);
    expect(matches('title:standup', titled('Standups'))).toBe(false);
  });

  it("matches the value's words consecutively and in order", () => {
    expect(matches('title:"team meeting"', titled('Weekly team meeting'))).toBe(true);
    expect(matches('title:"team meeting"', titled('Meeting of the team'))).toBe(false);
    expect(matches('title:"team meeting"', titled('team weekly meeting'))).toBe(false);
    expect(matches('title:"team meeting"', titled('team'))).toBe(false);
  });

  it('treats punctuation and hyphens as word breaks on both sides', () => {
    expect(matches('title:team-meeting', titled('Team Meeting'))).toBe(true);
    expect(matches('title:"team meeting"', titled('team-meeting'))).toBe(true);
    expect(matches('title:1:1', titled('1:1 with Ann'))).toBe(true);
    expect(matches('title:q3', titled('Planning (Q3)'))).toBe(true);
  });

  it('ignores case and accents, with NFKD compatibility folding', () => {
    expect(matches('title:reunion', titled('Réunion'))).toBe(true);
    expect(matches('title:RÉUNION', titled('reunion'))).toBe(true);
    expect(matches('title:strasse', titled('Straße'))).toBe(true);
    expect(matches('title:file', titled('ﬁle'))).toBe(true);
    expect(matches('title:cafe', titled('CAFE\u0301'))).toBe(true);
    expect(matches('title:"ΟΔΟΣ"', titled('οδος'))).toBe(true);
    expect(matches('title:会議', titled('週次 会議'))).toBe(true);
  });

  it('treats a trailing * as a prefix on the last word', () => {
    expect(matches('title:stand*', titled('Standup'))).toBe(true);
    expect(matches('title:stand*', titled('stand up'))).toBe(true);
    expect(matches('title:stand*', titled('Upstanding'))).toBe(false);
    expect(matches('title:"team meet*"', titled('Team Meetings'))).toBe(true);
    expect(matches('title:"team meet*"', titled('Meetings team'))).toBe(false);
    expect(matches('title:"tea* meeting"', titled('team meeting'))).toBe(false);
  });

  it('never matches a missing field', () => {
    expect(matches('title:a', occurrence())).toBe(false);
    expect(matches('-title:a', occurrence())).toBe(true);
  });

  it("reads description and the calendar's name", () => {
    const event = occurrence({
      summary: 'Sync',
      description: 'Agenda: quarterly review of the Acme account',
      calendar: { summary: 'Client Work — Acme' },
    });
    expect(matches('description:"quarterly review"', event)).toBe(true);
    expect(matches('description:sync', event)).toBe(false);
    expect(matches('calendar:acme', event)).toBe(true);
    expect(matches('calendar:"client work"', event)).toBe(true);
    expect(matches('calendar:sync', event)).toBe(false);
    expect(matches('title:acme', event)).toBe(false);
  });
});

describe('text', () => {
  const event = occurrence({
    summary: 'Sync',
    description: 'Budget planning',
    attendees: [{ email: 'sarah.connor@acme.com', displayName: 'Sarah Connor' }],
  });

  it('matches title, description, or any attendee email or display name', () => {
    expect(matches('text:sync', event)).toBe(true);
    expect(matches('text:budget', event)).toBe(true);
    expect(matches('text:connor', event)).toBe(true);
    expect(matches('text:"sarah connor"', event)).toBe(true);
    expect(matches('text:acme', event)).toBe(true);
    expect(matches('text:"acme com"', event)).toBe(true);
    expect(matches('sync', event)).toBe(true);
    expect(matches('text:con*', event)).toBe(true);
    expect(matches('text:conn', event)).toBe(false);
  });

  it('does not run a word sequence across two fields', () => {
    expect(matches('text:"sync budget"', event)).toBe(false);
    expect(matches('text:"connor sarah"', event)).toBe(false);
  });
});

describe('attendees', () => {
  const event = occurrence({
    attendees: [
      { email: 'bob.smith@eu.acme.com', displayName: 'Bob Smith' },
      { email: 'zoe@example.org', displayName: 'Zoë Müller' },
    ],
  });

  it('matches a substring of any email or display name', () => {
    expect(matches('attendees:bob', event)).toBe(true);
    expect(matches('attendees:smith@eu', event)).toBe(true);
    expect(matches('attendees:mith', event)).toBe(true);
    expect(matches('attendees:"bob smith"', event)).toBe(true);
    expect(matches('attendees:zoe', event)).toBe(true);
    expect(matches('attendees:MULLER', event)).toBe(true);
    expect(matches('attendees:sar*', event)).toBe(false);
    expect(matches('attendees:smi*', event)).toBe(true);
    expect(matches('attendees:alice', event)).toBe(false);
  });
});

describe('domain and email', () => {
  const event = occurrence({
    attendees: [{ email: 'Bob@EU.Acme.com' }, { email: 'ann@client.io' }],
  });

  it('compares the domain exactly, ignoring case', () => {
    expect(matches('domain:eu.acme.com', event)).toBe(true);
    expect(matches('domain:EU.ACME.COM', event)).toBe(true);
    expect(matches('domain:acme.com', event)).toBe(false);
    expect(matches('domain:client.io', event)).toBe(true);
    expect(matches('domain:io', event)).toBe(false);
  });

  it('compares the email exactly, ignoring case', () => {
    expect(matches('email:bob@eu.acme.com', event)).toBe(true);
    expect(matches('email:ann@client.io', event)).toBe(true);
    expect(matches('email:bob@acme.com', event)).toBe(false);
    expect(matches('email:an@client.io', event)).toBe(false);
  });

  it('never matches an event without attendees', () => {
    expect(matches('domain:acme.com', occurrence())).toBe(false);
    expect(matches('email:a@b.c', occurrence())).toBe(false);
  });
});

describe('response', () => {
  const withSelf = (responseStatus?: string) =>
    occurrence({
      attendees: [
        { email: 'other@x.com', responseStatus: 'declined' },
        { email: 'me@x.com', self: true, ...(responseStatus ? { responseStatus } : {}) },
      ],
    });

  it("reads the calendar owner's own response", () => {
    expect(matches('response:accepted', withSelf('accepted'))).toBe(true);
    expect(matches('response:declined', withSelf('accepted'))).toBe(false);
    expect(matches('response:declined', withSelf('declined'))).toBe(true);
    expect(matches('response:tentative', withSelf('tentative'))).toBe(true);
    expect(matches('response:needsAction', withSelf('needsAction'))).toBe(true);
    expect(matches('response:NEEDSACTION', withSelf('needsAction'))).toBe(true);
    expect(matches('response:needsAction', withSelf())).toBe(true);
  });

  it('finds the owner by ownerEmail when self is not set', () => {
    const event = occurrence({
      calendar: { ownerEmail: 'Me@X.com' },
      attendees: [
        { email: 'other@x.com', responseStatus: 'accepted' },
        { email: 'me@x.com', responseStatus: 'declined' },
      ],
    });
    expect(matches('response:declined', event)).toBe(true);
  });

  it('counts an event without the owner among the attendees as accepted', () => {
    expect(matches('response:accepted', occurrence())).toBe(true);
    expect(
      matches(
        'response:accepted',
        occurrence({ attendees: [{ email: 'a@b.c', responseStatus: 'declined' }] }),
      ),
    ).toBe(true);
  });
});

describe('recurring, is-all-day, has-attendees', () => {
  it('reads recurring from recurringEventId, with yes/true/no/false in any case', () => {
    const series = occurrence({ recurringEventId: 'master1' });
    for (const yes of ['yes', 'true', 'YES', 'True']) {
      expect(matches(`recurring:${yes}`, series)).toBe(true);
      expect(matches(`recurring:${yes}`, occurrence())).toBe(false);
    }
    for (const no of ['no', 'false', 'No']) {
      expect(matches(`recurring:${no}`, series)).toBe(false);
      expect(matches(`recurring:${no}`, occurrence())).toBe(true);
    }
  });

  it('calls an event all-day when its start is a date', () => {
    const allDay = occurrence({ start: { date: '2026-01-05' }, end: { date: '2026-01-06' } });
    expect(matches('is-all-day:yes', allDay)).toBe(true);
    expect(matches('is-all-day:no', allDay)).toBe(false);
    expect(matches('is-all-day:true', occurrence())).toBe(false);
    expect(matches('is-all-day:false', occurrence())).toBe(true);
  });

  it('counts attendees other than the calendar itself', () => {
    expect(matches('has-attendees:yes', occurrence())).toBe(false);
    expect(matches('has-attendees:no', occurrence())).toBe(true);
    const onlySelf = occurrence({ attendees: [{ email: 'me@x.com', self: true }] });
    expect(matches('has-attendees:yes', onlySelf)).toBe(false);
    const onlyOwner = occurrence({
      calendar: { ownerEmail: 'me@x.com' },
      attendees: [{ email: 'me@x.com' }],
    });
    expect(matches('has-attendees:no', onlyOwner)).toBe(true);
    const withOther = occurrence({ attendees: [{ email: 'me@x.com', self: true }, { email: 'a@b.c' }] });
    expect(matches('has-attendees:yes', withOther)).toBe(true);
    expect(matches('has-attendees:true', occurrence({ attendees: [{ email: 'a@b.c' }] }))).toBe(true);
  });
});

describe('transparency', () => {
  it('is opaque by default', () => {
    expect(matches('transparency:opaque', occurrence())).toBe(true);
    expect(matches('transparency:transparent', occurrence())).toBe(false);
    expect(matches('transparency:Transparent', occurrence({ transparency: 'transparent' }))).toBe(true);
    expect(matches('transparency:opaque', occurrence({ transparency: 'opaque' }))).toBe(true);
  });
});

describe('day-of-week', () => {
  // 2026-01-05 is a Monday; 23:30 UTC is already Tuesday in Berlin and still Monday in New York.
  const late = (zone?: string, calendarZone = 'Europe/Berlin') =>
    occurrence({
      start: { dateTime: '2026-01-05T23:30:00Z', ...(zone ? { timeZone: zone } : {}) },
      calendar: { timeZone: calendarZone },
    });

  it("reads the weekday in the start's zone, else the calendar's", () => {
    expect(matches('day-of-week:tue', late())).toBe(true);
    expect(matches('day-of-week:mon', late())).toBe(false);
    expect(matches('day-of-week:mon', late('America/New_York'))).toBe(true);
    expect(matches('day-of-week:mon', late(undefined, 'UTC'))).toBe(true);
    expect(matches('day-of-week:mon', late('Not/AZone', 'America/Los_Angeles'))).toBe(true);
  });

  it('reads a date-time without an offset as wall-clock time in that zone', () => {
    const floating = occurrence({ start: { dateTime: '2026-01-10T09:00:00', timeZone: 'Asia/Tokyo' } });
    expect(matches('day-of-week:sat', floating)).toBe(true);
  });

  it('accepts short names, full names and comma lists in any case', () => {
    const monday = occurrence();
    for (const value of ['mon', 'Monday', 'MON', 'sat,sun,mon', 'Tuesday,monday', 'mon,mon']) {
      expect(matches(`day-of-week:${value}`, monday), value).toBe(true);
    }
    for (const value of ['tue', 'wednesday', 'thu', 'friday', 'sat', 'sun', 'sat,sun']) {
      expect(matches(`day-of-week:${value}`, monday), value).toBe(false);
    }
  });

  it('uses the date of an all-day event', () => {
    const sunday = occurrence({ start: { date: '2026-01-11' }, end: { date: '2026-01-12' } });
    expect(matches('day-of-week:sun', sunday)).toBe(true);
    expect(matches('day-of-week:sat', sunday)).toBe(false);
  });
});

describe('time-of-day', () => {
  // 16:00 UTC is 17:00 in Berlin (winter).
  const at = (utc: string, zone?: string) =>
    occurrence({ start: { dateTime: `2026-01-05T${utc}Z`, ...(zone ? { timeZone: zone } : {}) } });

  it("compares the start's wall-clock time in the event's zone", () => {
    expect(matches('time-of-day:17:00', at('16:00:00'))).toBe(true);
    expect(matches('time-of-day:=17:00', at('16:00:00'))).toBe(true);
    expect(matches('time-of-day:16:00', at('16:00:00'))).toBe(false);
    expect(matches('time-of-day:11:00', at('16:00:00', 'America/New_York'))).toBe(true);
    expect(matches('time-of-day:01:00', at('16:00:00', 'Asia/Tokyo'))).toBe(true);
  });

  it('applies each operator', () => {
    const five = at('16:00:00');
    const table: [string, boolean][] = [
      ['>16:59', true],
      ['>17:00', false],
      ['>=17:00', true],
      ['>=17:01', false],
      ['<17:01', true],
      ['<17:00', false],
      ['<=17:00', true],
      ['<=16:59', false],
      ['=17:00', true],
      ['9:00', false],
    ];
    for (const [value, expected] of table) {
      expect(matches(`time-of-day:${value}`, five), value).toBe(expected);
    }
  });

  it('compares whole minutes', () => {
    expect(matches('time-of-day:17:00', at('16:00:45'))).toBe(true);
    expect(matches('time-of-day:>17:00', at('16:00:45'))).toBe(false);
  });

  it('accepts a one-digit hour', () => {
    expect(matches('time-of-day:<9:30', at('08:00:00'))).toBe(true);
  });

  it('never matches an all-day event, whatever the operator', () => {
    const allDay = occurrence({ start: { date: '2026-01-05' }, end: { date: '2026-01-06' } });
    for (const value of ['>00:00', '>=00:00', '<23:59', '<=23:59', '00:00']) {
      expect(matches(`time-of-day:${value}`, allDay), value).toBe(false);
    }
  });

  it('follows daylight saving time', () => {
    // 16:00 UTC is 18:00 in Berlin in July.
    const summer = occurrence({ start: { dateTime: '2026-07-06T16:00:00Z' } });
    expect(matches('time-of-day:18:00', summer)).toBe(true);
  });

  it('never matches an unreadable start', () => {
    const broken = occurrence({ start: { dateTime: 'soon' } });
    expect(matches('time-of-day:>00:00', broken)).toBe(false);
    expect(matches('day-of-week:mon,tue,wed,thu,fri,sat,sun', broken)).toBe(false);
  });
});

describe('combinations', () => {
  const event = occurrence({
    summary: 'Acme weekly sync',
    attendees: [{ email: 'ann@acme.com' }, { email: 'me@x.com', self: true, responseStatus: 'declined' }],
    recurringEventId: 'm1',
  });

  it('evaluates AND, OR, negation and groups', () => {
    expect(matches('domain:acme.com title:weekly', event)).toBe(true);
    expect(matches('domain:acme.com title:daily', event)).toBe(false);
    expect(matches('title:daily OR domain:acme.com', event)).toBe(true);
    expect(matches('-response:declined', event)).toBe(false);
    expect(matches('-(title:daily OR title:standup)', event)).toBe(true);
    expect(matches('(domain:a.com OR domain:acme.com) recurring:yes -is-all-day:yes', event)).toBe(true);
    expect(matches('title:daily title:weekly OR recurring:no', event)).toBe(false);
  });

  it('gives the same answers for a prepared occurrence, tested many times', () => {
    const prepared = new PreparedOccurrence(event);
    for (const query of ['domain:acme.com', 'title:sync', '-recurring:yes', 'response:declined']) {
      expect(matches(query, prepared)).toBe(matches(query, event));
      expect(matches(query, prepared)).toBe(matches(query, event));
    }
  });
});
